//! What one copy job moves: the copy engines (`sdma`) run it and the capture file records it,
//! so both name this one type and neither names the other.

/// What one job moves. Addresses were checked against the memory registry at submission,
/// and are checked again when the job runs (the client may have freed the memory since).
#[derive(Clone, Copy, Debug)]
pub enum CopyShape {
    Linear {
        dst: u64,
        src: u64,
        size: u64,
    },
    /// `hsa_amd_memory_async_copy_rect`: `range` = (bytes per row, rows, slices).
    Rect {
        dst: u64,
        dst_pitch: u64,
        dst_slice: u64,
        src: u64,
        src_pitch: u64,
        src_slice: u64,
        range: [u64; 3],
    },
    /// `hsa_amd_svm_prefetch_async`: nothing moves (all memory is already where the
    /// device reads it); the job orders the completion after the dependencies.
    Prefetch,
}
