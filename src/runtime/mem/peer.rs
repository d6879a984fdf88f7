//! Several devices: whether one device may reach another's memory, enabling that (peer
//! access), the link between two devices, and the grants copies between devices need.
//!
//! Everything comes from the HSA runtime: a device can access a peer when its agent's access
//! to the peer's device pool is not NEVER_ALLOWED (ROCr reports DISALLOWED_BY_DEFAULT for two
//! GPUs of one host, and so does hsasim); the link from the pool's link information. Access is
//! granted per allocation (`hsa_amd_agents_allow_access`): enabling grants the current device
//! every allocation of the peer, and the peer's `peer_readers` makes its later allocations
//! granted too ([`super::memory::malloc`]). Disabling stops that for later allocations;
//! existing grants stay (HSA has no call that takes one back short of freeing, and AMD's
//! runtime leaves them too).
//!
//! Copies between two devices' memory need no peer access (HIP's rule): the copy engine of
//! either device must reach both sides (the HSA contract), so such a copy first grants each
//! device the other's allocation, once per allocation ([`grant_for_copy`]). A kernel of either
//! device can then reach that allocation too, as with peer access.
//!
//! AMD's answers, followed here: the same device is never its own peer (can-access 0, enable
//! an invalid device); `hipDeviceGetP2PAttribute`'s performance rank is the HSA link type;
//! `hipExtGetLinkTypeAndHopCount`'s hop count is the links' NUMA distance over one hop's (15
//! for xGMI, 20 otherwise).

use crate::error::{HipError, HipResult};
use crate::runtime::devices::device::Device;
use crate::runtime::mem::memory;
use hsa_abi::*;

/// A device ordinal as AMD checks it: negative or past the last device is invalid.
fn device_at(devices: &[Device], ordinal: i32) -> HipResult<&Device> {
    usize::try_from(ordinal)
        .ok()
        .and_then(|i| devices.get(i))
        .ok_or(HipError::INVALID_DEVICE)
}

/// The devices and what the HSA runtime says about each ordered pair of them, asked once when
/// the runtime starts: the peer queries then read memory and call nothing, which also lets a
/// child of `fork()` answer them (`fork_guard`).
pub struct PeerTable {
    devices: &'static [Device],
    count: usize,
    /// Row `from`, column `to`; the diagonal is never asked.
    pairs: Vec<Pair>,
}

struct Pair {
    /// Whether `from`'s agent may be granted `to`'s device memory.
    reaches: HipResult<bool>,
    /// The link hops from `from`'s agent to `to`'s device pool.
    links: HipResult<Vec<hsa_amd_memory_pool_link_info_t>>,
}

impl PeerTable {
    pub(in crate::runtime) fn survey(devices: &'static [Device]) -> Self {
        let pairs = devices
            .iter()
            .flat_map(|from| devices.iter().map(move |to| (from, to)))
            .map(|(from, to)| {
                if from.index == to.index {
                    return Pair {
                        reaches: Ok(false),
                        links: Ok(Vec::new()),
                    };
                }
                Pair {
                    reaches: to
                        .device_pool
                        .access_of(from.agent)
                        .map(|access| access != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED)
                        .map_err(HipError::from),
                    links: to
                        .device_pool
                        .links_from(from.agent)
                        .map_err(HipError::from),
                }
            })
            .collect();
        Self {
            devices,
            count: devices.len(),
            pairs,
        }
    }

    fn pair(&self, from: &Device, to: &Device) -> &Pair {
        &self.pairs[from.index * self.count + to.index]
    }
}

/// Whether `device`'s agent may be granted `peer`'s device memory.
fn reaches(peers: &PeerTable, device: &Device, peer: &Device) -> HipResult<bool> {
    peers.pair(device, peer).reaches
}

/// `hipDeviceCanAccessPeer`: 0 for the device itself (whatever the ordinal, as AMD checks that
/// first).
pub fn can_access_peer(peers: &PeerTable, device: i32, peer: i32) -> HipResult<bool> {
    if device == peer {
        return Ok(false);
    }
    let devices = peers.devices;
    reaches(
        peers,
        device_at(devices, device)?,
        device_at(devices, peer)?,
    )
}

/// `hipDeviceEnablePeerAccess`: `current` (the current device) may reach `peer`'s memory,
/// existing and future allocations.
pub fn enable_peer_access(peers: &PeerTable, current: &Device, peer: i32, flags: u32) -> HipResult {
    if flags != 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let peer = peerable(peers, current, peer)?;
    let mut readers = peer.peer_readers.lock();
    let bit = 1u64 << current.index;
    if *readers & bit != 0 {
        return Err(HipError::PEER_ACCESS_ALREADY_ENABLED);
    }
    memory::grant_all(&current.all_gpus, peer.index, current.index)?;
    *readers |= bit;
    tracing::debug!(
        device = current.index,
        peer = peer.index,
        "peer access enabled"
    );
    Ok(())
}

/// `hipDeviceDisablePeerAccess`: `peer`'s allocations made from now on are not granted to
/// `current` (the current device).
pub fn disable_peer_access(peers: &PeerTable, current: &Device, peer: i32) -> HipResult {
    let peer = peerable(peers, current, peer)?;
    let mut readers = peer.peer_readers.lock();
    let bit = 1u64 << current.index;
    if *readers & bit == 0 {
        return Err(HipError::PEER_ACCESS_NOT_ENABLED);
    }
    *readers &= !bit;
    tracing::debug!(
        device = current.index,
        peer = peer.index,
        "peer access disabled"
    );
    Ok(())
}

/// The peer of an enable or disable: AMD reports anything `current` cannot access (itself, a
/// device that does not exist, one the HSA runtime never lets it reach) as an invalid device.
fn peerable<'a>(peers: &'a PeerTable, current: &Device, peer: i32) -> HipResult<&'a Device> {
    let peer_device = device_at(peers.devices, peer)?;
    if peer_device.index == current.index || !reaches(peers, current, peer_device)? {
        tracing::warn!(
            device = current.index,
            peer,
            "peer access: the device cannot access that peer"
        );
        return Err(HipError::INVALID_DEVICE);
    }
    Ok(peer_device)
}

/// `hipDeviceP2PAttr`.
pub mod p2p_attr {
    pub const PERFORMANCE_RANK: u32 = 0;
    pub const ACCESS_SUPPORTED: u32 = 1;
    pub const NATIVE_ATOMIC_SUPPORTED: u32 = 2;
    pub const HIP_ARRAY_ACCESS_SUPPORTED: u32 = 3;
}

/// The link hops from `from`'s agent to `to`'s memory; at least one (two devices are never one
/// agent).
fn links<'a>(
    peers: &'a PeerTable,
    from: &Device,
    to: &Device,
) -> HipResult<&'a [hsa_amd_memory_pool_link_info_t]> {
    let links = peers.pair(from, to).links.as_deref().map_err(|e| *e)?;
    if links.is_empty() {
        tracing::warn!(
            from = from.index,
            to = to.index,
            "the HSA runtime reports no link between two devices"
        );
        return Err(HipError::INVALID_HANDLE);
    }
    Ok(links)
}

/// `hipDeviceGetP2PAttribute(attr, src, dst)`.
pub fn p2p_attribute(peers: &PeerTable, attr: u32, src: i32, dst: i32) -> HipResult<i32> {
    if src == dst {
        return Err(HipError::INVALID_DEVICE);
    }
    let (from, to) = (
        device_at(peers.devices, src)?,
        device_at(peers.devices, dst)?,
    );
    match attr {
        p2p_attr::PERFORMANCE_RANK => Ok(links(peers, from, to)?[0].link_type as i32),
        p2p_attr::ACCESS_SUPPORTED => Ok(reaches(peers, from, to)?.into()),
        p2p_attr::NATIVE_ATOMIC_SUPPORTED => {
            let first = links(peers, from, to)?[0];
            Ok((first.atomic_support_32bit || first.atomic_support_64bit).into())
        }
        // Arrays have an opaque layout: only between devices of one architecture.
        p2p_attr::HIP_ARRAY_ACCESS_SUPPORTED => {
            Ok((from.info.gcn_arch == to.info.gcn_arch && reaches(peers, from, to)?).into())
        }
        _ => {
            tracing::warn!(attr, "hipDeviceGetP2PAttribute: unknown attribute");
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// `hipExtGetLinkTypeAndHopCount`: (HSA link type, hop count) from `device1` to `device2`'s
/// memory.
pub fn link_type_and_hop_count(
    peers: &PeerTable,
    device1: i32,
    device2: i32,
) -> HipResult<(u32, u32)> {
    if device1 == device2 || device1 < 0 || device2 < 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let devices = peers.devices;
    let links = links(
        peers,
        device_at(devices, device1)?,
        device_at(devices, device2)?,
    )?;
    let link_type = links[0].link_type;
    let distance: u32 = links.iter().map(|l| l.numa_distance).sum();
    let one_hop = if link_type == HSA_AMD_LINK_INFO_TYPE_XGMI {
        15
    } else {
        20
    };
    Ok((link_type, distance / one_hop))
}

/// Checks the device ordinals of `hipMemcpyPeer(Async)` (the pointers say where the memory
/// is; AMD checks no more).
pub fn check_copy_devices(devices: &[Device], dst_device: i32, src_device: i32) -> HipResult {
    device_at(devices, dst_device)?;
    device_at(devices, src_device)?;
    Ok(())
}

/// Before a copy between device `dst_device`'s memory at `dst` and device `src_device`'s at
/// `src` (`gpus`: every device's agent, by ordinal, as `Device::all_gpus`): each device may reach the other's allocation, whichever
/// engine the HSA runtime copies with.
pub(crate) fn grant_for_copy(
    gpus: &[hsa_agent_t],
    dst: usize,
    dst_device: usize,
    src: usize,
    src_device: usize,
) -> HipResult {
    if dst_device == src_device {
        return Ok(());
    }
    memory::grant_containing(gpus, dst, src_device)?;
    memory::grant_containing(gpus, src, dst_device)
}
