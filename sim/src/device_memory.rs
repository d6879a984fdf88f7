//! The device memory of a shared device (`HSASIM_DEVICE_SERVICE=NAME`): the first GPU's
//! memory pool allocates from the device service's memory file instead of private mappings.
//!
//! The service (`hipshim device start --memory BYTES`) makes the file
//! (`/dev/shm/hsasim-device-NAME.mem`, sparse) and records in its segment the address every
//! process maps it at. Attaching maps the whole file there with `MAP_FIXED_NOREPLACE` (a
//! process that already uses the range fails to attach and says so), so an allocation has
//! one address in every process and an IPC handle only needs its offset. Unless the GPU is
//! large-BAR, that range is address space the CPU cannot touch, as for private device
//! memory, and hsasim reaches the bytes through a second mapping of the file, its view.
//!
//! The table of allocations lives in the segment ([`hsasim_sched::MemTable`], under its own
//! lock); each allocation records its owner's pid, and the service frees a dead process's
//! allocations. A freed allocation's pages are punched out of the file (they read as zeroes
//! when reused, as fresh private memory does). IPC handles of this memory name the offset,
//! the allocation's serial and the service ([`export`](SharedVram::export)); attaching takes
//! a reference in the table, so memory its owner frees stays until every importer detached
//! or died.
//!
//! The AQL queues of an attached process live here too ([`SharedVram::queue_memory`]): each
//! queue's `amd_queue_t` block and ring are one allocation of the queue kind, so the device
//! service (the model of the command processor) reads their indices at the addresses the
//! runlist records, and reaps them with the rest of a dead process's memory. Producers
//! write packets with the CPU, so that range is mapped for the CPU at its device address
//! even when the rest of the device memory is out of the CPU's reach (as ROCr puts rings in
//! memory the CPU writes).

use crate::error::{HsaError, HsaResult};
use hsa_abi::hsa_amd_ipc_memory_t;
use hsasim_sched::{Device, MemError, Use};
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// "HSIV": the first word of IPC handles of shared device memory.
pub const IPC_MAGIC: u32 = 0x4853_4956;

pub struct SharedVram {
    device: Arc<Device>,
    base: u64,
    size: u64,
    /// Where hsasim reaches byte 0 of the device memory: `base` itself with a large BAR.
    view: u64,
    pid: u32,
    /// Names this service in IPC handles (its start time and pid, folded).
    tag: u32,
    /// The whole range is mapped for the CPU at `base` (`HSASIM_LARGE_BAR=1`).
    large_bar: bool,
}

// SAFETY: the mappings are fixed for the handle's life; the table is reached through the
// device's lock.
unsafe impl Send for SharedVram {}
// SAFETY: as above.
unsafe impl Sync for SharedVram {}

fn mmap(at: u64, len: u64, prot: i32, flags: i32, fd: i32) -> std::io::Result<u64> {
    // SAFETY: a new mapping; with MAP_FIXED_NOREPLACE the kernel refuses to replace anything
    // already mapped, otherwise it picks the place.
    let p = unsafe { libc::mmap(at as *mut libc::c_void, len as usize, prot, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as u64)
}

fn munmap(at: u64, len: u64) {
    // SAFETY: a mapping this module made and no longer hands out.
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
}

impl SharedVram {
    /// Maps the device memory of the service `device` is attached to.
    pub fn attach(device: Arc<Device>, large_bar: bool) -> Result<SharedVram, String> {
        let name = device.name().unwrap_or("?").to_string();
        let file = device.memory_file().ok_or_else(|| {
            format!("device service {name} has no device memory file (is it stopping?)")
        })?;
        let (base, size) = {
            let m = device.memory();
            (m.base, m.size)
        };
        if size == 0 {
            return Err(format!("device service {name} has no device memory"));
        }
        let fd = file.as_raw_fd();
        let shared = libc::MAP_SHARED | libc::MAP_NORESERVE;
        let placed = if large_bar {
            mmap(
                base,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                shared | libc::MAP_FIXED_NOREPLACE,
                fd,
            )
        } else {
            mmap(
                base,
                size,
                libc::PROT_NONE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | libc::MAP_FIXED_NOREPLACE,
                -1,
            )
        }
        .map_err(|e| {
            format!(
                "cannot map device service {name}'s memory at {base:#x}..{:#x} in this process: {e}{}",
                base + size,
                if e.raw_os_error() == Some(libc::EEXIST) {
                    " (something else of this process is mapped there)"
                } else {
                    ""
                }
            )
        })?;
        if placed != base {
            // A kernel without MAP_FIXED_NOREPLACE takes it as a hint.
            munmap(placed, size);
            return Err(format!(
                "cannot map device service {name}'s memory at {base:#x}: the kernel placed it at {placed:#x}"
            ));
        }
        let view = if large_bar {
            base
        } else {
            match mmap(0, size, libc::PROT_READ | libc::PROT_WRITE, shared, fd) {
                Ok(v) => v,
                Err(e) => {
                    munmap(base, size);
                    return Err(format!("cannot map device service {name}'s memory: {e}"));
                }
            }
        };
        let tag = service_tag(&device);
        tracing::info!(target: "hsasim", name, base = format_args!("{base:#x}"), size, large_bar, "device memory of the device service mapped");
        Ok(SharedVram {
            device,
            base,
            size,
            view,
            // SAFETY: getpid has no preconditions.
            pid: unsafe { libc::getpid() } as u32,
            tag,
            large_bar,
        })
    }

    /// Memory for an AQL queue's `amd_queue_t` block and ring (`len` bytes, whole pages):
    /// an allocation of the queue kind, with this process's pid, readable and writable by
    /// the CPU at its device address. Zeroed (fresh pages of the file).
    pub fn queue_memory(self: &Arc<Self>, len: u64) -> HsaResult<QueueMemory> {
        let what = "hsa_queue_create";
        self.check_service(what)?;
        let a = self
            .device
            .memory()
            .allocate_for(len, self.pid, Use::Queue)
            .map_err(|e| self.table_error(what, e))?;
        let start = self.base + a.offset;
        if !self.large_bar {
            if let Err(e) = self.map_window(start, a.offset, a.len, true) {
                tracing::error!(target: "hsasim", start = format_args!("{start:#x}"), "{what}: cannot map the queue's memory for the CPU: {e}");
                let _ = self.free_queue_memory(a.offset, a.serial);
                return Err(HsaError::OUT_OF_RESOURCES);
            }
        }
        Ok(QueueMemory {
            vram: self.clone(),
            start,
            len: a.len,
            serial: a.serial,
        })
    }

    /// Maps `[start, start + len)` of the device memory range (file offset `offset`) for the
    /// CPU (`open`), or hides it again.
    fn map_window(&self, start: u64, offset: u64, len: u64, open: bool) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let fd = match (open, self.device.memory_file()) {
            (true, Some(f)) => f.as_raw_fd(),
            (true, None) => return Err(std::io::Error::from_raw_os_error(libc::ENOENT)),
            (false, _) => -1,
        };
        let (prot, flags) = if open {
            (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED)
        } else {
            (libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS)
        };
        // SAFETY: `[start, start + len)` lies in this handle's own reservation of the device
        // memory range (mapped PROT_NONE in `attach`), which nothing else in the process
        // uses, so MAP_FIXED replaces only pages of ours: the queue's, which no one touches
        // before `queue_memory` returns or after its `QueueMemory` drops.
        let p = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                len as usize,
                prot,
                flags | libc::MAP_FIXED | libc::MAP_NORESERVE,
                fd,
                if open { offset as libc::off_t } else { 0 },
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Frees queue memory at `offset` if it is still the allocation of `serial` (the
    /// runtime's shut-down may have freed it, and the range been allocated again, first).
    fn free_queue_memory(&self, offset: u64, serial: u64) -> HsaResult {
        let mut table = self.device.memory();
        if table.get(offset).is_none_or(|a| a.serial != serial) {
            return Ok(());
        }
        let released = table
            .free(offset, self.pid)
            .map_err(|e| self.table_error("hsa_queue_destroy", e))?;
        if let Some((offset, len)) = released {
            self.device.discard(offset, len);
        }
        Ok(())
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes allocated by every attached process together.
    pub fn used(&self) -> u64 {
        self.device.memory().used
    }

    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }

    fn name(&self) -> &str {
        self.device.name().unwrap_or("?")
    }

    /// An allocation fails, rather than hands out memory no one reaps, once the service
    /// stopped or died.
    fn check_service(&self, what: &str) -> HsaResult {
        if self.device.stop_requested() || !self.device.service_alive() {
            let name = self.name();
            tracing::error!(target: "hsasim", name, "{what}: device service {name} is gone");
            eprintln!(
                "hsasim: {what}: device service {name} is gone; start it again with `hipshim device start --name {name}`"
            );
            return Err(HsaError::OUT_OF_RESOURCES);
        }
        Ok(())
    }

    fn table_error(&self, what: &str, e: MemError) -> HsaError {
        tracing::error!(target: "hsasim", name = self.name(), "{what}: {e}");
        match e {
            MemError::OutOfMemory | MemError::TableFull => HsaError::OUT_OF_RESOURCES,
            MemError::NotFound | MemError::NotYours => HsaError::INVALID_ARGUMENT,
        }
    }

    /// `len` bytes for this process: (device address, hsasim's view of it, bytes mapped).
    pub fn allocate(&self, len: u64) -> HsaResult<(u64, u64, u64)> {
        self.check_service("hsa_amd_memory_pool_allocate")?;
        let a = self
            .device
            .memory()
            .allocate(len, self.pid)
            .map_err(|e| self.table_error("hsa_amd_memory_pool_allocate", e))?;
        Ok((self.base + a.offset, self.view + a.offset, a.len))
    }

    /// Frees this process's allocation at `start`.
    pub fn free(&self, start: u64) -> HsaResult {
        let offset = start - self.base;
        let mut table = self.device.memory();
        let released = table
            .free(offset, self.pid)
            .map_err(|e| self.table_error("hsa_amd_memory_pool_free", e))?;
        // Under the lock: no one may get the range before its old pages are gone.
        if let Some((offset, len)) = released {
            self.device.discard(offset, len);
        }
        Ok(())
    }

    /// `hsa_amd_ipc_memory_create` of the allocation at `start`.
    pub fn export(&self, start: u64, len: u64) -> HsaResult<hsa_amd_ipc_memory_t> {
        let offset = start - self.base;
        let a = self.device.memory().get(offset).ok_or_else(|| {
            tracing::error!(target: "hsasim", start = format_args!("{start:#x}"), "hsa_amd_ipc_memory_create: not an allocation of the device service's memory");
            HsaError::INVALID_ARGUMENT
        })?;
        Ok(encode(&Handle {
            offset,
            len,
            serial: a.serial as u32,
            tag: self.tag,
        }))
    }

    /// `hsa_amd_ipc_memory_attach` of a handle [`export`](Self::export) made, in any process
    /// attached to this service: (device address, hsasim's view, the allocation's length).
    pub fn attach_ipc(&self, handle: &Handle) -> HsaResult<(u64, u64, u64)> {
        let what = "hsa_amd_ipc_memory_attach";
        if handle.tag != self.tag {
            tracing::error!(target: "hsasim", "{what}: the handle is of another device service's memory (or of a service since restarted)");
            return Err(HsaError::INVALID_ARGUMENT);
        }
        let mut table = self.device.memory();
        let serial = table
            .get(handle.offset)
            .filter(|a| a.serial as u32 == handle.serial)
            .map(|a| a.serial)
            .ok_or_else(|| {
                tracing::error!(target: "hsasim", offset = handle.offset, "{what}: the exported allocation was freed");
                HsaError::INVALID_ARGUMENT
            })?;
        let a = table
            .attach(handle.offset, serial, self.pid)
            .map_err(|e| self.table_error(what, e))?;
        Ok((self.base + a.offset, self.view + a.offset, a.len))
    }

    /// `hsa_amd_ipc_memory_detach` of what [`attach_ipc`](Self::attach_ipc) returned.
    pub fn detach_ipc(&self, start: u64) -> HsaResult {
        let mut table = self.device.memory();
        let released = table
            .detach(start - self.base, self.pid)
            .map_err(|e| self.table_error("hsa_amd_ipc_memory_detach", e))?;
        if let Some((offset, len)) = released {
            self.device.discard(offset, len);
        }
        Ok(())
    }

    /// At `hsa_shut_down`: everything this process allocated or attached goes.
    pub fn release_all(&self) {
        let bytes = self.device.release_memory_of(self.pid);
        tracing::debug!(target: "hsasim", bytes, "device memory of the device service released");
    }
}

impl Drop for SharedVram {
    fn drop(&mut self) {
        munmap(self.base, self.size);
        if self.view != self.base {
            munmap(self.view, self.size);
        }
    }
}

/// A queue's block and ring in the device memory ([`SharedVram::queue_memory`]); freed
/// when dropped.
pub struct QueueMemory {
    vram: Arc<SharedVram>,
    pub start: u64,
    pub len: u64,
    serial: u64,
}

impl Drop for QueueMemory {
    fn drop(&mut self) {
        let offset = self.start - self.vram.base;
        if !self.vram.large_bar {
            if let Err(e) = self.vram.map_window(self.start, offset, self.len, false) {
                tracing::warn!(target: "hsasim", start = format_args!("{:#x}", self.start), "cannot hide a destroyed queue's memory from the CPU again: {e}");
            }
        }
        let _ = self.vram.free_queue_memory(offset, self.serial);
    }
}

fn service_tag(device: &Device) -> u32 {
    let t = device.started_ns();
    (t as u32) ^ ((t >> 32) as u32) ^ device.service_pid().rotate_left(16)
}

/// What an IPC handle of shared device memory says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub offset: u64,
    pub len: u64,
    /// The allocation's serial (low 32 bits), so a handle of freed memory attaches nothing.
    pub serial: u32,
    pub tag: u32,
}

fn check_word(words: &[u32; 8]) -> u32 {
    words[..7]
        .iter()
        .fold(0x7e57_ab1e, |acc, w| acc.rotate_left(7) ^ w)
}

pub fn encode(h: &Handle) -> hsa_amd_ipc_memory_t {
    let mut words = [
        IPC_MAGIC,
        h.offset as u32,
        (h.offset >> 32) as u32,
        h.len as u32,
        (h.len >> 32) as u32,
        h.serial,
        h.tag,
        0,
    ];
    words[7] = check_word(&words);
    hsa_amd_ipc_memory_t { handle: words }
}

/// The handle's contents, if [`encode`] made it.
pub fn decode(handle: &hsa_amd_ipc_memory_t) -> Option<Handle> {
    let w = &handle.handle;
    (w[0] == IPC_MAGIC && w[7] == check_word(w)).then(|| Handle {
        offset: u64::from(w[1]) | (u64::from(w[2]) << 32),
        len: u64::from(w[3]) | (u64::from(w[4]) << 32),
        serial: w[5],
        tag: w[6],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_garbage_is_rejected() {
        let h = Handle {
            offset: 5 << 32 | 0x3000,
            len: 0x2000,
            serial: 9,
            tag: 0xabcd,
        };
        assert_eq!(decode(&encode(&h)), Some(h));
        let mut bad = encode(&h);
        bad.handle[1] ^= 1;
        assert_eq!(decode(&bad), None);
        assert_eq!(decode(&hsa_amd_ipc_memory_t::default()), None);
    }
}
