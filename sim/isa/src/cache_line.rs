//! A value alone on its cache line, for the counters and flags that worker threads share.

/// A value alone on its cache line (128 bytes: adjacent-line prefetchers fetch lines in
/// pairs), so that threads writing it do not slow threads reading its neighbours.
#[repr(align(128))]
pub(crate) struct CacheLine<T>(pub(crate) T);

/// Bytes of a worker's own (LDS, scratch) that start on a cache-line boundary and fill whole
/// lines, so that no other allocation shares a line with them. glibc places the allocations
/// of different workers side by side in one arena (a worker is made on one thread and later
/// runs on another), and a line holding the written end of one worker's buffer and the
/// start of another's would bounce between their cores.
pub struct LineBytes {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

/// The alignment and granule of [`LineBytes`], as [`CacheLine`]'s.
const LINE: usize = 128;

// SAFETY: LineBytes owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for LineBytes {}
// SAFETY: shared access only reads (`as_slice`), like &Vec<u8>.
unsafe impl Sync for LineBytes {}

impl LineBytes {
    pub const fn empty() -> LineBytes {
        LineBytes {
            ptr: std::ptr::NonNull::dangling(),
            len: 0,
        }
    }

    fn layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(len.checked_next_multiple_of(LINE)?, LINE).ok()
    }

    /// `len` zeroed bytes, or `None` when the host cannot give them (a huge private
    /// segment must fail its dispatch, not abort the process). Large zeroed allocations
    /// come from the system lazily, so only what a kernel touches costs memory.
    pub fn zeroed(len: usize) -> Option<LineBytes> {
        if len == 0 {
            return Some(LineBytes::empty());
        }
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(LineBytes { ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` holds `len` initialised (zeroed, then written) bytes owned by self,
        // borrowed mutably for the slice's lifetime; a dangling pointer with len 0 is a
        // valid empty slice.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for LineBytes {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        let layout = Self::layout(self.len).expect("the layout it was allocated with");
        // SAFETY: allocated by `zeroed` with this same layout, and not freed before.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}
