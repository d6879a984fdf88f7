//! Several devices: peer access, copies between devices and the link between two devices
//! (`runtime/mem/peer.rs`).

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, hipStream_t};
use crate::runtime::copy::{self, CopyKind, CopyRequest};
use crate::runtime::{self, mem::peer};
use std::ffi::c_void;

hip_api! {
    fn hipDeviceCanAccessPeer(can_access: *mut i32 => Out<i32>, device: i32, peer_device: i32) -> hipError_t {
        can_access.write(peer::can_access_peer(&runtime::runtime()?.peers, device, peer_device)?.into())
    }

    fn hipDeviceEnablePeerAccess(peer_device: i32, flags: u32) -> hipError_t {
        let rt = runtime::runtime()?;
        peer::enable_peer_access(&rt.peers, rt.current_device()?, peer_device, flags)
    }

    fn hipDeviceDisablePeerAccess(peer_device: i32) -> hipError_t {
        let rt = runtime::runtime()?;
        peer::disable_peer_access(&rt.peers, rt.current_device()?, peer_device)
    }

    fn hipDeviceGetP2PAttribute(value: *mut i32 => Out<i32>, attr: u32, src_device: i32, dst_device: i32) -> hipError_t {
        value.write(peer::p2p_attribute(&runtime::runtime()?.peers, attr, src_device, dst_device)?)
    }

    fn hipExtGetLinkTypeAndHopCount(
        device1: i32,
        device2: i32,
        link_type: *mut u32 => Out<u32>,
        hop_count: *mut u32 => Out<u32>,
    ) -> hipError_t {
        let (kind, hops) = peer::link_type_and_hop_count(&runtime::runtime()?.peers, device1, device2)?;
        link_type.write(kind)?;
        hop_count.write(hops)
    }

    /// A device-to-device copy (the pointers say where the memory is): synchronous, after the
    /// legacy work of both devices.
    fn hipMemcpyPeer(dst: *mut c_void, dst_device: i32, src: *const c_void, src_device: i32, size: usize) -> hipError_t {
        peer::check_copy_devices(runtime::devices()?, dst_device, src_device)?;
        // SAFETY: both sides are checked against the registry (device-to-device).
        unsafe { copy::memcpy(super::copy::devices(), CopyRequest::linear(dst, src, size, CopyKind::DeviceToDevice)) }
    }

    fn hipMemcpyPeerAsync(
        dst: *mut c_void,
        dst_device: i32,
        src: *const c_void,
        src_device: i32,
        size: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        peer::check_copy_devices(runtime::devices()?, dst_device, src_device)?;
        // SAFETY: both sides are checked against the registry (device-to-device).
        unsafe { copy::memcpy_async(super::copy::devices(), CopyRequest::linear(dst, src, size, CopyKind::DeviceToDevice), stream) }
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_peer.rs"));
