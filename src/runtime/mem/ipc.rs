//! Inter-process memory (`hipIpcGetMemHandle`, `hipIpcOpenMemHandle`,
//! `hipIpcCloseMemHandle`) over the HSA runtime's `hsa_amd_ipc_memory_*` (`hsa::ipc`).
//!
//! The 64-byte `hipIpcMemHandle_t` holds what AMD's holds, in the same places: the HSA
//! runtime's 32-byte handle of the whole allocation, the length to attach, the offset of the
//! pointer the handle was made for inside it, and the exporting process's id; then a word
//! saying hipshim made it (so that 64 bytes of anything are rejected before the HSA runtime
//! sees them). Opening a handle in the process that made it is an error, as in AMD's runtime
//! and CUDA: the memory is already there.
//!
//! An opened range is entered in the memory table as memory of the current device
//! (`memory::insert_imported`), so copies, fills, kernels and pointer queries know it.

use crate::error::{HipError, HipResult};
use crate::hsa::ipc as hsa_ipc;
use crate::hsa::HsaApi;
use crate::runtime::base::compat;
use crate::runtime::devices::current;
use crate::runtime::devices::device::{self, Device};
use crate::runtime::mem::memory;
use hsa_abi::hsa_amd_ipc_memory_t;
use parking_lot::Mutex;
use std::collections::HashMap;

/// `hipIpcMemHandle_t`: 64 opaque bytes to the program.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpcHandle {
    pub reserved: [u8; 64],
}

/// "HSHM", at byte 52.
const MAGIC: u32 = 0x4853_484d;

/// `hipIpcMemLazyEnablePeerAccess`: 1 from ROCm 6 on (ROCm 5's headers said 0).
const LAZY_ENABLE_PEER_ACCESS: u32 = 1;

struct Opened {
    /// What the HSA runtime attached (the start of the exporter's allocation).
    base: usize,
    /// Mapped by `hipMemPoolImportPointer`: `hipFree` unmaps it.
    pool_import: bool,
    /// The HSA runtime that attached it, which detaches it.
    api: &'static HsaApi,
}

/// Ranges opened by this process, by the pointer `hipIpcOpenMemHandle` returned.
static OPENED: Mutex<Option<HashMap<usize, Opened>>> = Mutex::new(None);

/// `api`, if the HSA runtime has the inter-process memory entry points.
fn ipc_api(api: &'static HsaApi, call: &str) -> HipResult<&'static HsaApi> {
    if let Some(absent) = hsa_ipc::missing(api) {
        tracing::warn!(hsa = %api.path.display(), absent, "{call}: the HSA runtime has no inter-process memory");
        return Err(HipError::NOT_SUPPORTED);
    }
    Ok(api)
}

fn encode(hsa: &hsa_amd_ipc_memory_t, size: u64, offset: u64) -> IpcHandle {
    let mut bytes = [0u8; 64];
    for (i, w) in hsa.handle.iter().enumerate() {
        bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    bytes[32..40].copy_from_slice(&size.to_le_bytes());
    bytes[40..48].copy_from_slice(&offset.to_le_bytes());
    bytes[48..52].copy_from_slice(&std::process::id().to_le_bytes());
    bytes[52..56].copy_from_slice(&MAGIC.to_le_bytes());
    IpcHandle { reserved: bytes }
}

/// (HSA handle, size, offset, exporting pid) of a handle hipshim made.
fn decode(handle: &IpcHandle) -> Option<(hsa_amd_ipc_memory_t, u64, u64, u32)> {
    let b = &handle.reserved;
    let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let quad = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    if word(52) != MAGIC {
        return None;
    }
    let mut hsa = hsa_amd_ipc_memory_t::default();
    for (i, w) in hsa.handle.iter_mut().enumerate() {
        *w = word(4 * i);
    }
    Some((hsa, quad(32), quad(40), word(48)))
}

/// A new memfd named `name` (close-on-exec): the shared files another process opens through
/// `/proc/PID/fd/FD` or receives as a descriptor (interprocess events, shared pools).
pub(crate) fn memfd(name: &std::ffi::CStr) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name and flags; the call makes a new descriptor or fails.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) })
}

/// `hipIpcGetMemHandle`: a handle for the `hipMalloc` allocation holding `ptr` (memory of
/// one of `devices`, exported through `api`).
pub fn get_mem_handle(
    api: &'static HsaApi,
    devices: &[Device],
    ptr: usize,
) -> HipResult<IpcHandle> {
    export(
        api,
        devices,
        ptr,
        &[memory::MemKind::Device],
        "hipIpcGetMemHandle",
    )
}

/// A handle for the allocation of one of `kinds` holding `ptr` (the whole allocation, rounded
/// to the device pool's granule, and `ptr`'s offset in it).
pub(crate) fn export(
    api: &'static HsaApi,
    devices: &[Device],
    ptr: usize,
    kinds: &[memory::MemKind],
    call: &str,
) -> HipResult<IpcHandle> {
    let api = ipc_api(api, call)?;
    let alloc = memory::lookup(ptr, 1)
        .filter(|a| kinds.contains(&a.kind))
        .ok_or_else(|| {
            tracing::warn!(
                ptr = format_args!("{ptr:#x}"),
                "{call}: not memory from {}",
                if kinds.contains(&memory::MemKind::Pooled) {
                    "hipMalloc or a memory pool"
                } else {
                    "hipMalloc"
                }
            );
            HipError::INVALID_DEVICE_POINTER
        })?;
    let granule = device::nth(devices, alloc.device)?
        .device_pool
        .granule(false)?
        .max(1);
    let size = alloc.size.next_multiple_of(granule);
    let hsa = hsa_ipc::create(api, alloc.start, size).map_err(|e| {
        tracing::warn!(ptr = format_args!("{ptr:#x}"), error = %e, "{call}: the runtime cannot export it");
        HipError::INVALID_DEVICE_POINTER
    })?;
    Ok(encode(&hsa, size as u64, (ptr - alloc.start) as u64))
}

/// `hipIpcOpenMemHandle`: maps another process's memory for the current one of `devices`;
/// returns the address of the pointer the handle was made for.
pub fn open_mem_handle(
    api: &'static HsaApi,
    devices: &[Device],
    handle: &IpcHandle,
    flags: u32,
) -> HipResult<usize> {
    let call = "hipIpcOpenMemHandle";
    let api = ipc_api(api, call)?;
    let legacy_flags = compat::abi() == compat::Abi::Rocm5 && flags == 0;
    if flags != LAZY_ENABLE_PEER_ACCESS && !legacy_flags {
        tracing::warn!(flags, "{call}: flags must be hipIpcMemLazyEnablePeerAccess");
        return Err(HipError::INVALID_VALUE);
    }
    let Some((hsa, size, offset, pid)) =
        decode(handle).filter(|(_, size, offset, _)| *size > 0 && offset < size)
    else {
        // AMD's answers: a handle of size 0 is an invalid value; any other that cannot be
        // attached is an invalid device pointer.
        let size = u64::from_le_bytes(handle.reserved[32..40].try_into().expect("8 bytes"));
        tracing::warn!("{call}: not a handle hipIpcGetMemHandle made");
        return Err(if size == 0 {
            HipError::INVALID_VALUE
        } else {
            HipError::INVALID_DEVICE_POINTER
        });
    };
    if pid == std::process::id() {
        tracing::warn!("{call}: the handle was made by this process, which has the memory already");
        return Err(HipError::INVALID_CONTEXT);
    }
    let device = current::device(devices)?;
    attach(api, (hsa, size, offset, pid), device, false, call)
}

/// A handle that [`encode`] made: attaches its memory for `device`, enters it in the memory
/// table and in the table of opened ranges; returns the address of the handle's pointer.
fn attach(
    api: &'static HsaApi,
    (hsa, size, offset, pid): (hsa_amd_ipc_memory_t, u64, u64, u32),
    device: &Device,
    pool_import: bool,
    call: &str,
) -> HipResult<usize> {
    let base = hsa_ipc::attach(api, &hsa, size as usize, &[device.agent]).map_err(|e| {
        tracing::warn!(pid, error = %e, "{call}: cannot attach the memory (has its process ended?)");
        HipError::INVALID_DEVICE_POINTER
    })?;
    // A device service maps its memory at one address in every process: attaching memory
    // this process allocated itself gives back that allocation's own address, which cannot
    // be a second mapping (a pool pointer imported by its exporter).
    if memory::starting_at(base).is_some_and(|a| a.kind != memory::MemKind::Imported) {
        tracing::warn!(
            base = format_args!("{base:#x}"),
            "{call}: this process's own memory, which its device service cannot map twice; import it in another process"
        );
        let _ = hsa_ipc::detach(api, base);
        return Err(HipError::INVALID_VALUE);
    }
    memory::insert_imported(base, size as usize, device.index);
    let ptr = base + offset as usize;
    OPENED.lock().get_or_insert_with(HashMap::new).insert(
        ptr,
        Opened {
            base,
            pool_import,
            api,
        },
    );
    Ok(ptr)
}

/// What `hipMemPoolImportPointer` maps: a handle [`export`] made, in this process or another
/// (AMD's runtime attaches a pool pointer in the process that exported it too), for `device`.
/// `None` if the bytes are not such a handle.
pub(crate) fn import(handle: &IpcHandle, device: &Device, call: &str) -> HipResult<Option<usize>> {
    let api = ipc_api(device.api, call)?;
    let Some(decoded) = decode(handle).filter(|(_, size, offset, _)| *size > 0 && offset < size)
    else {
        return Ok(None);
    };
    attach(api, decoded, device, true, call).map(Some)
}

/// `hipFree`/`hipFreeAsync` of `ptr`: unmaps it if `hipMemPoolImportPointer` mapped it, after
/// the work of `devices` (`None` for any other pointer).
pub(crate) fn free_pool_import(devices: &[Device], ptr: usize) -> Option<HipResult> {
    let attached_by = OPENED
        .lock()
        .as_ref()
        .and_then(|m| m.get(&ptr).filter(|o| o.pool_import).map(|o| o.api));
    attached_by.map(|api| close_mem_handle(api, devices, ptr))
}

/// Whether `ptr` is what an open or import returned and has not been closed.
pub(crate) fn is_opened(ptr: usize) -> bool {
    OPENED.lock().as_ref().is_some_and(|m| m.contains_key(&ptr))
}

/// `hipIpcCloseMemHandle`: `ptr` is what `hipIpcOpenMemHandle` returned. Work already queued
/// on `devices` that may use it finishes first.
pub fn close_mem_handle(api: &'static HsaApi, devices: &[Device], ptr: usize) -> HipResult {
    let call = "hipIpcCloseMemHandle";
    let api = ipc_api(api, call)?;
    // AMD's runtime answers hipErrorInvalidHandle for a pointer it did not open.
    if !is_opened(ptr) {
        tracing::warn!(
            ptr = format_args!("{ptr:#x}"),
            "{call}: not a pointer hipIpcOpenMemHandle returned"
        );
        return Err(HipError::INVALID_HANDLE);
    }
    memory::synchronize_all(devices)?;
    let (opened, still_open) = {
        let mut table = OPENED.lock();
        let Some(m) = table.as_mut() else {
            return Err(HipError::INVALID_HANDLE);
        };
        let Some(opened) = m.remove(&ptr) else {
            return Err(HipError::INVALID_HANDLE);
        };
        let still_open = m.values().any(|o| o.base == opened.base);
        (opened, still_open)
    };
    // An HSA runtime whose attach returns the same address again (a device service's
    // memory, mapped once per process) has this range open under another handle still.
    if !still_open {
        memory::remove_imported(opened.base);
    }
    Ok(hsa_ipc::detach(api, opened.base)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_foreign_bytes_are_rejected() {
        let hsa = hsa_amd_ipc_memory_t {
            handle: [1, 2, 3, 4, 5, 6, 7, 8],
        };
        let h = encode(&hsa, 8192, 16);
        assert_eq!(decode(&h), Some((hsa, 8192, 16, std::process::id())));
        assert_eq!(decode(&IpcHandle { reserved: [0; 64] }), None);
    }
}
