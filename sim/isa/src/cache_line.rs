//! A value alone on its cache line, for the counters and flags that worker threads share.

/// A value alone on its cache line (128 bytes: adjacent-line prefetchers fetch lines in
/// pairs), so that threads writing it do not slow threads reading its neighbours.
#[repr(align(128))]
pub(crate) struct CacheLine<T>(pub(crate) T);
