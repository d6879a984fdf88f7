//! The interpreter's address map for LDS and private (scratch) memory: where flat, buffer
//! and scratch addresses into them lie. The wave reports these bases through its constant
//! operands (`src_shared_base`, ...), and the memory handlers translate addresses with them.

/// Flat addresses in these 4 GiB windows are LDS / private (scratch) addresses. They lie
/// above the 47-bit host user address space, so they never alias a device allocation, and
/// below 2^48 so a buffer resource (48-bit base) can point into the private window.
pub const SHARED_BASE: u64 = 0x0000_a000_0000_0000;
pub const PRIVATE_BASE: u64 = 0x0000_c000_0000_0000;
pub const APERTURE_SIZE: u64 = 1 << 32;
/// The flat *apertures* for LDS and private memory, as SH_MEM_BASES (and so `src_shared_base`
/// / `src_private_base`) expresses them: on GFX9 only address bits 63:48 are programmable, so
/// an aperture starts at a multiple of 2^48. As on hardware, a flat access in an aperture is
/// translated to the same LDS / per-lane scratch the windows above reach; the windows stay
/// for buffer and flat-scratch addressing, whose 48-bit bases cannot reach the apertures.
pub const SHARED_APERTURE: u64 = 1 << 48;
pub const PRIVATE_APERTURE: u64 = 2 << 48;
