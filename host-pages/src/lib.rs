//! Is this host memory there? Both hipshim (a copy from a pointer no allocation covers) and
//! hsasim (locking, registering or copying host memory, where ROCr's driver would answer when
//! it pins the pages) must know before they touch a range a program handed them.
//!
//! The answer comes from `mincore`, which reads the page tables: nothing is read or faulted
//! in, an unmapped page is an answer instead of a SIGSEGV, and one call covers up to 16 MiB
//! for about a microsecond (parsing `/proc/self/maps` costs ~100 us with a few hundred
//! mappings; `process_vm_readv` has to copy the bytes, at a fifth of memcpy's speed).
//! Protections are not seen: a PROT_NONE page counts as mapped. Where the kernel cannot
//! answer (the call is filtered), the range is taken as mapped.

use std::sync::OnceLock;

/// The host's page size.
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    })
}

/// Whether every page of `[addr, addr + len)` is mapped in this process; `Err(page)` is the
/// first page that is not (the first page of the range, for a range that wraps around the
/// address space). An empty range is mapped.
pub fn host_range_mapped(addr: usize, len: usize) -> Result<(), usize> {
    let page = page_size();
    if len == 0 {
        return Ok(());
    }
    let first = addr / page * page;
    let Some(end) = addr
        .checked_add(len)
        .and_then(|e| e.checked_next_multiple_of(page))
    else {
        return Err(first);
    };
    // Pages per call: the kernel writes one byte per page into `vec`. Those bytes (which
    // pages are resident) are never read, so the buffer is left uninitialised: zeroing 4 KiB
    // on every call cost more than the rest of a small copy's check.
    const CHUNK: usize = 4096;
    let mut vec = [std::mem::MaybeUninit::<u8>::uninit(); CHUNK];
    let mut mapped = |at: usize, pages: usize| -> Option<bool> {
        // SAFETY: `at` is page aligned and `vec` holds at least `pages` bytes; mincore only
        // writes `vec` (uninitialised bytes may be written), and nothing reads it.
        let rc = unsafe {
            libc::mincore(
                at as *mut libc::c_void,
                pages * page,
                vec.as_mut_ptr().cast::<u8>(),
            )
        };
        if rc == 0 {
            return Some(true);
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOMEM) => Some(false),
            _ => None,
        }
    };
    let mut at = first;
    while at < end {
        let pages = ((end - at) / page).min(CHUNK);
        match mapped(at, pages) {
            Some(true) => at += pages * page,
            Some(false) => {
                // The first `lo` pages are mapped; the first `hi` are not all mapped.
                let (mut lo, mut hi) = (0, pages);
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2;
                    if mapped(at, mid) == Some(false) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                return Err(at + lo * page);
            }
            None => return Ok(()),
        }
    }
    Ok(())
}

/// Address-space holes for tests of code that must not touch unmapped memory.
pub mod testing {
    use super::page_size;

    /// A fresh private anonymous mapping of `pages` pages whose page `hole` is unmapped
    /// again. Unmapped by [`Holed::release`]; never dropped implicitly, since a test may
    /// hand the address to code that outlives it.
    pub struct Holed {
        pub base: usize,
        pub pages: usize,
        pub hole: usize,
    }

    impl Holed {
        pub fn new(pages: usize, hole: usize) -> Holed {
            assert!(hole < pages);
            let page = page_size();
            // SAFETY: a new private anonymous mapping, then one of its own pages unmapped.
            let base = unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    pages * page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED);
                let unmapped = libc::munmap((p as usize + hole * page) as *mut libc::c_void, page);
                assert_eq!(unmapped, 0);
                p as usize
            };
            Holed { base, pages, hole }
        }

        /// The address of page `n` of the mapping.
        pub fn page(&self, n: usize) -> usize {
            self.base + n * page_size()
        }

        /// Unmaps the pages still mapped.
        pub fn release(self) {
            for n in (0..self.pages).filter(|&n| n != self.hole) {
                // SAFETY: a page of this mapping that is still mapped.
                unsafe { libc::munmap(self.page(n) as *mut libc::c_void, page_size()) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_is_checked_page_by_page() {
        let page = page_size();
        let holed = testing::Holed::new(3, 1);
        let base = holed.base;
        assert_eq!(host_range_mapped(base, 0), Ok(()));
        assert_eq!(host_range_mapped(base, page), Ok(()));
        assert_eq!(host_range_mapped(base + 10, page - 10), Ok(()));
        assert_eq!(host_range_mapped(base + 2 * page, page), Ok(()));
        assert_eq!(host_range_mapped(base, page + 1), Err(base + page));
        assert_eq!(host_range_mapped(base + page - 1, 2), Err(base + page));
        assert_eq!(host_range_mapped(base, 3 * page), Err(base + page));
        assert_eq!(host_range_mapped(base + page, 1), Err(base + page));
        assert_eq!(host_range_mapped(base, 1 << 63), Err(base + page));
        assert_eq!(host_range_mapped(base, usize::MAX), Err(base));
        holed.release();
    }
}
