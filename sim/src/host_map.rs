//! Host mappings: the page size, anonymous mappings (backed lazily or at once), address space
//! the CPU cannot touch, and whether a host range is mapped at all. The leaf under every part
//! that owns memory (the registry's pool allocations, signal slabs, queue rings, loaded code
//! objects, virtual and IPC memory); it knows nothing of regions or agents.

use crate::error::{HsaError, HsaResult};

pub const PAGE: u64 = 4096;

/// An anonymous private mapping: zeroed, lazily backed, page aligned.
pub fn map_anon(len: u64) -> HsaResult<*mut u8> {
    map_private(len, libc::PROT_READ | libc::PROT_WRITE, 0)
}

/// An anonymous private mapping whose first `backed` bytes are backed at once, the rest as
/// they are touched: a pinned pool allocation's memory, without paying for pages nothing
/// touches (see `memory::BACKED_AT_ALLOCATION_BYTES`).
pub fn map_anon_backed_prefix(len: u64, backed: u64) -> HsaResult<*mut u8> {
    let p = map_anon(len)?;
    let backed = backed.min(len);
    if backed != 0 {
        // SAFETY: `[p, p + backed)` is inside the mapping just made; populating a private
        // anonymous range only allocates its (zeroed) pages and changes no byte.
        let populated =
            unsafe { libc::madvise(p.cast(), backed as usize, libc::MADV_POPULATE_WRITE) };
        if populated != 0 {
            // A kernel before 5.14 has no MADV_POPULATE_WRITE: write each page instead.
            for page in (0..backed).step_by(PAGE as usize) {
                // SAFETY: inside the fresh mapping, which nothing else sees yet; it already
                // reads 0.
                unsafe { p.add(page as usize).write_volatile(0) };
            }
        }
    }
    Ok(p)
}

/// Address space the CPU cannot touch (`PROT_NONE`, nothing behind it): what the program
/// sees of device memory that is not mapped through the BAR. A touch faults with the exact
/// address, which `cpu_touch` reports.
pub fn reserve_unmapped(len: u64) -> HsaResult<*mut u8> {
    map_private(len, libc::PROT_NONE, 0)
}

fn map_private(len: u64, protection: libc::c_int, extra_flags: libc::c_int) -> HsaResult<*mut u8> {
    let len = usize::try_from(len).map_err(|_| HsaError::OUT_OF_RESOURCES)?;
    // SAFETY: a fresh anonymous mapping has no aliasing requirements; failure is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            protection,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | extra_flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(HsaError::OUT_OF_RESOURCES);
    }
    Ok(p.cast())
}

/// # Safety
/// `ptr`/`len` must be a mapping returned by [`map_anon`] that nothing uses any more.
pub unsafe fn unmap(ptr: *mut u8, len: u64) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        libc::munmap(ptr.cast(), len as usize);
    }
}

pub fn round_up(v: u64, to: u64) -> Option<u64> {
    v.checked_add(to - 1).map(|x| x / to * to)
}

/// Whether every page of `[addr, addr + len)` is mapped in this process; `Err(page)` is the
/// first page that is not. The one place hsasim asks "is this host memory there?" (ROCr's
/// driver answers it when it pins pages; hsasim has no driver); `host_pages` says how.
pub fn host_range_mapped(addr: u64, len: u64) -> Result<(), u64> {
    let (Ok(addr), Ok(len)) = (usize::try_from(addr), usize::try_from(len)) else {
        return Err(addr / PAGE * PAGE);
    };
    host_pages::host_range_mapped(addr, len).map_err(|page| page as u64)
}
