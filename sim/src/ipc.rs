//! Inter-process memory (`hsa_amd_ipc_memory_create` / `_attach` / `_detach`): another
//! process, running its own hsasim, maps the same bytes.
//!
//! A pool allocation is private anonymous memory until it is exported. Exporting moves its
//! bytes into a memfd (named `hsasim-ipc`) and maps that memfd over hsasim's view of the
//! allocation, at the same address, so nothing the exporter holds changes; the memfd stays open
//! in the exporter until the allocation is freed. The handle names it by the exporter's pid and
//! descriptor number (plus the length and a check word); an importer opens
//! `/proc/PID/fd/FD`, checks it is an hsasim IPC memfd, and maps it: both processes see the
//! same bytes, each through its own simulated GPU.
//!
//! Memory of a device service (`HSASIM_DEVICE_SERVICE`, [`crate::device_memory`]) is
//! already shared: its handle names the allocation's offset, and every process attached to
//! the service finds the bytes at the same address, with no memfd and no `/proc`.
//!
//! Limits: the exporter must still be alive when a process attaches (after that the mapping
//! keeps the memory), and the importer must be allowed to open the exporter's descriptors
//! (same user, not made undumpable: the rule for `/proc/PID/fd`). Export copies the bytes
//! once: the allocation must not be written meanwhile (HIP exports memory that is idle).
//! IPC signals exist only between processes attached to one device service
//! ([`crate::ipc_signal`]).

use crate::error::{HsaError, HsaResult};
use crate::host_map::{reserve_unmapped, round_up, PAGE};
use crate::memory::{Region, RegionKind};
use crate::platform::Platform;
use hsa_abi::{hsa_agent_t, hsa_amd_ipc_memory_t};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// "HSIP": the first word of every handle hsasim makes.
const MAGIC: u32 = 0x4853_4950;
/// Mixed into the check word, so a handle of zeros or of another runtime is rejected.
const CHECK_SALT: u32 = 0x5a17_c0de;
/// The name every exported memfd carries (`/memfd:NAME` in `/proc/PID/fd`).
const MEMFD_NAME: &str = "hsasim-ipc";

#[derive(Default)]
pub struct Ipc {
    /// Exported allocations by start: the memfd now behind them and its length.
    exports: Mutex<HashMap<u64, (OwnedFd, u64)>>,
    /// Attached ranges by device address: (hsasim's view, mapped length, how many times a
    /// device service's memory is attached there (0: a memfd import, this module's to
    /// unmap)).
    attached: Mutex<HashMap<u64, (u64, u64, u32)>>,
}

fn check_word(words: &[u32; 8]) -> u32 {
    words[..7]
        .iter()
        .fold(CHECK_SALT, |acc, w| acc.rotate_left(5) ^ w)
}

fn encode(pid: u32, fd: u32, len: u64) -> hsa_amd_ipc_memory_t {
    let mut words = [MAGIC, pid, fd, len as u32, (len >> 32) as u32, 0, 0, 0];
    words[7] = check_word(&words);
    hsa_amd_ipc_memory_t { handle: words }
}

/// (pid, fd, length) of a handle hsasim made.
fn decode(handle: &hsa_amd_ipc_memory_t) -> Option<(u32, u32, u64)> {
    let w = &handle.handle;
    (w[0] == MAGIC && w[7] == check_word(w))
        .then(|| (w[1], w[2], u64::from(w[3]) | (u64::from(w[4]) << 32)))
}

/// Enters attached IPC memory in the registry as coarse-grained memory of the first GPU among
/// `agents` (of the system's first GPU if none is one): what an exporter's device memory is.
fn add_attached_region(
    platform: &Platform<'_>,
    agents: &[hsa_agent_t],
    start: u64,
    host: u64,
    len: u64,
    mapped: u64,
) {
    let owner = agents
        .iter()
        .copied()
        .find(|a| platform.agent(*a).is_ok_and(|a| a.is_gpu()))
        .or_else(|| {
            platform
                .agents
                .iter()
                .find(|a| a.is_gpu())
                .map(|a| a.handle())
        })
        .unwrap_or_default();
    platform.memory.add(Region {
        start,
        host,
        len,
        kind: RegionKind::IpcAttached,
        owner,
        global_flags: hsa_abi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        user_data: 0,
        mapped_len: mapped,
    });
}

fn os_error(what: &str) -> HsaError {
    tracing::error!(target: "hsasim", err = %std::io::Error::last_os_error(), "ipc: {what} failed");
    HsaError::OUT_OF_RESOURCES
}

/// Writes `len` bytes from `src` into `fd` from offset 0.
fn write_all(fd: &OwnedFd, src: u64, len: u64) -> HsaResult {
    let mut done = 0u64;
    while done < len {
        let chunk = (len - done).min(1 << 30) as usize;
        // SAFETY: `src + done` is hsasim's mapped view of the allocation, `chunk` bytes of it.
        let n = unsafe {
            libc::pwrite(
                fd.as_raw_fd(),
                (src + done) as *const libc::c_void,
                chunk,
                done as libc::off_t,
            )
        };
        if n <= 0 {
            return Err(os_error("copying an allocation into its memfd"));
        }
        done += n as u64;
    }
    Ok(())
}

impl Ipc {
    /// `hsa_amd_ipc_memory_create`: `ptr` is the start of a pool allocation, `len` at most its
    /// mapped length.
    pub fn create(
        &self,
        platform: &Platform<'_>,
        ptr: u64,
        len: u64,
    ) -> HsaResult<hsa_amd_ipc_memory_t> {
        let region = platform
            .memory
            .find(ptr, 1)
            .filter(|r| r.start == ptr && matches!(r.kind, RegionKind::PoolAllocation { .. }))
            .ok_or_else(|| {
                tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), "hsa_amd_ipc_memory_create: not the start of a pool allocation");
                HsaError::INVALID_ARGUMENT
            })?;
        if len == 0 || len > region.mapped_len {
            tracing::error!(target: "hsasim", len, mapped = region.mapped_len, "hsa_amd_ipc_memory_create: the length must be non-zero and within the allocation");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        if let Some(vram) = platform.vram.filter(|v| v.contains(ptr)) {
            return vram.export(ptr, len);
        }
        let mut exports = self.exports.lock();
        if let Some((fd, _)) = exports.get(&ptr) {
            return Ok(encode(std::process::id(), fd.as_raw_fd() as u32, len));
        }
        let name = CString::new(MEMFD_NAME).expect("no NUL");
        // SAFETY: a NUL-terminated name; the result is checked.
        let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(os_error("memfd_create"));
        }
        // SAFETY: a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let size = region.mapped_len;
        // SAFETY: sizing our own memfd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
            return Err(os_error("ftruncate"));
        }
        write_all(&fd, region.host, size)?;
        // The memfd takes the place of the private pages, at the same address: the device
        // address and hsasim's view stay what they were.
        // SAFETY: `region.host` is hsasim's own mapping of the allocation, `size` bytes.
        let p = unsafe {
            libc::mmap(
                region.host as *mut libc::c_void,
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mapping the memfd over the allocation"));
        }
        let handle = encode(std::process::id(), fd.as_raw_fd() as u32, len);
        exports.insert(ptr, (fd, size));
        tracing::debug!(target: "hsasim", ptr = format_args!("{ptr:#x}"), len, "ipc: exported");
        Ok(handle)
    }

    /// The allocation at `ptr` was freed: its export ends (attached processes keep their
    /// mappings).
    pub fn forget(&self, ptr: u64) {
        self.exports.lock().remove(&ptr);
    }

    /// `hsa_amd_ipc_memory_attach`: maps `len` bytes of the exported memory; the GPUs of
    /// `agents` (or, with none, every GPU) may reach it.
    pub fn attach(
        &self,
        platform: &Platform<'_>,
        handle: &hsa_amd_ipc_memory_t,
        len: u64,
        agents: &[hsa_agent_t],
    ) -> HsaResult<u64> {
        let what = "hsa_amd_ipc_memory_attach";
        if let Some(h) = crate::device_memory::decode(handle) {
            return self.attach_shared(platform, &h, len, agents);
        }
        let (pid, fd, exported_len) = decode(handle).ok_or_else(|| {
            tracing::error!(target: "hsasim", "{what}: not a handle hsa_amd_ipc_memory_create made");
            HsaError::INVALID_ARGUMENT
        })?;
        if len == 0 || len > exported_len {
            tracing::error!(target: "hsasim", len, exported_len, "{what}: the length must be non-zero and within the exported range");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        for a in agents {
            platform.agent(*a)?;
        }
        let path = format!("/proc/{pid}/fd/{fd}");
        let target = std::fs::read_link(&path).map_err(|e| {
            tracing::error!(target: "hsasim", path, err = %e, "{what}: the exporting process or its descriptor is gone (or may not be opened)");
            HsaError::INVALID_ARGUMENT
        })?;
        if !target
            .to_string_lossy()
            .starts_with(&format!("/memfd:{MEMFD_NAME}"))
        {
            tracing::error!(target: "hsasim", path, target = %target.display(), "{what}: the descriptor is not exported hsasim memory");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                tracing::error!(target: "hsasim", path, err = %e, "{what}: cannot open the exporter's memory");
                HsaError::INVALID_ARGUMENT
            })?;
        let mapped = round_up(len, PAGE).ok_or(HsaError::INVALID_ARGUMENT)?;
        let file_len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if file_len < mapped {
            tracing::error!(target: "hsasim", file_len, mapped, "{what}: the exported memory is smaller than the handle says");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        // SAFETY: a fresh shared mapping of the opened memfd; the kernel picks the address.
        let host = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if host == libc::MAP_FAILED {
            return Err(os_error("mapping imported memory"));
        }
        let host = host as u64;
        let start = if platform.config.large_bar {
            host
        } else {
            match reserve_unmapped(mapped) {
                Ok(p) => {
                    crate::cpu_touch::watch();
                    p as u64
                }
                Err(e) => {
                    // SAFETY: mapped just above, not handed out.
                    unsafe { libc::munmap(host as *mut libc::c_void, mapped as usize) };
                    return Err(e);
                }
            }
        };
        add_attached_region(platform, agents, start, host, len, mapped);
        self.attached.lock().insert(start, (host, mapped, 0));
        tracing::debug!(target: "hsasim", pid, start = format_args!("{start:#x}"), len, "ipc: attached");
        Ok(start)
    }

    /// Attaches memory of the device service this process is attached to: the same address
    /// as in the exporter.
    fn attach_shared(
        &self,
        platform: &Platform<'_>,
        h: &crate::device_memory::Handle,
        len: u64,
        agents: &[hsa_agent_t],
    ) -> HsaResult<u64> {
        let what = "hsa_amd_ipc_memory_attach";
        let vram = platform.vram.ok_or_else(|| {
            tracing::error!(target: "hsasim", "{what}: the handle is of a device service's memory and this process is not attached to one (HSASIM_DEVICE_SERVICE)");
            HsaError::INVALID_ARGUMENT
        })?;
        if len == 0 || len > h.len {
            tracing::error!(target: "hsasim", len, exported_len = h.len, "{what}: the length must be non-zero and within the exported range");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        for a in agents {
            platform.agent(*a)?;
        }
        let mut attached = self.attached.lock();
        let (start, host, _) = vram.attach_ipc(h)?;
        // Attached again (HIP opens a handle per pointer into one allocation): the same
        // address, one more reference, one more region for the matching detach to remove.
        let mapped = round_up(len, PAGE).ok_or(HsaError::INVALID_ARGUMENT)?;
        add_attached_region(platform, agents, start, host, len, mapped);
        if start != host {
            crate::cpu_touch::watch();
        }
        attached.entry(start).or_insert((host, mapped, 0)).2 += 1;
        tracing::debug!(target: "hsasim", start = format_args!("{start:#x}"), len, "ipc: attached device service memory");
        Ok(start)
    }

    /// `hsa_amd_ipc_memory_detach`: `ptr` is what attach returned.
    pub fn detach(&self, platform: &Platform<'_>, ptr: u64) -> HsaResult {
        let (host, mapped, shared) = {
            let mut attached = self.attached.lock();
            let entry = attached.get_mut(&ptr).ok_or_else(|| {
                tracing::error!(target: "hsasim", ptr = format_args!("{ptr:#x}"), "hsa_amd_ipc_memory_detach: not an attached address");
                HsaError::INVALID_ARGUMENT
            })?;
            let found = *entry;
            if entry.2 > 1 {
                entry.2 -= 1;
            } else {
                attached.remove(&ptr);
            }
            found
        };
        platform
            .memory
            .remove_at(ptr, |r| r.kind == RegionKind::IpcAttached);
        if shared > 0 {
            return match platform.vram {
                Some(vram) => vram.detach_ipc(ptr),
                None => Ok(()),
            };
        }
        // SAFETY: both mappings were made by attach and are no longer registered.
        unsafe {
            libc::munmap(host as *mut libc::c_void, mapped as usize);
            if ptr != host {
                libc::munmap(ptr as *mut libc::c_void, mapped as usize);
            }
        }
        Ok(())
    }
}

impl Drop for Ipc {
    /// At `hsa_shut_down`: attached memory is unmapped (exported memfds close with the map).
    fn drop(&mut self) {
        for (start, (host, mapped, shared)) in self.attached.get_mut().drain() {
            if shared > 0 {
                // The device service's memory; `SharedVram` gives it back.
                continue;
            }
            // SAFETY: mappings attach made; the runtime and its registry are going away.
            unsafe {
                libc::munmap(host as *mut libc::c_void, mapped as usize);
                if start != host {
                    libc::munmap(start as *mut libc::c_void, mapped as usize);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_garbage_is_rejected() {
        let h = encode(1234, 17, 3 << 32 | 4096);
        assert_eq!(decode(&h), Some((1234, 17, 3 << 32 | 4096)));
        let mut bad = h;
        bad.handle[2] ^= 1;
        assert_eq!(decode(&bad), None);
        assert_eq!(decode(&hsa_amd_ipc_memory_t::default()), None);
    }
}
