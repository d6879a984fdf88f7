//! Occupancy: how many work-groups of a kernel one compute unit can hold at once, from the
//! kernel's register and LDS use (code object metadata) and the device's limits.
//!
//! The model is AMD's runtime's (GFX9 CDNA: gfx90a, gfx942), per compute unit:
//! - waves per SIMD: at most `max_waves_per_cu / 4` (8 on these GPUs), fewer if the wave's
//!   vector registers (512 per lane per SIMD, granules of 8, ArchVGPRs and AccVGPRs in one
//!   file) or scalar registers (800 per SIMD, granules of 16) run out first;
//! - waves per CU: that times the 4 SIMDs, shared by whole work-groups in any placement (a
//!   one-wave group takes one wave slot, not one per SIMD);
//! - LDS: the device's LDS per CU, shared by the resident groups (static + dynamic bytes).
//!
//! Resident groups = the smaller of (waves per CU / the group's waves) and the LDS limit.
//! AMD's runtime gives the same numbers on hsasim (`tests/existing_binary.rs` compares them),
//! but for blocks larger than the kernel's `max_flat_workgroup_size`: AMD counts them as if
//! they could run, hipshim answers 0 (such a launch fails) and never proposes them.

use crate::error::{HipError, HipResult};
use crate::runtime::code_object::KernelInfo;
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::Function;

const SIMDS_PER_CU: u32 = 4;
const VGPRS_PER_SIMD_LANE: u32 = 512;
const VGPR_GRANULE: u32 = 8;
const SGPRS_PER_SIMD: u32 = 800;
const SGPR_GRANULE: u32 = 16;

/// What the device contributes to the formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuLimits {
    pub wave_size: u32,
    pub max_waves_per_cu: u32,
    pub lds_bytes: u32,
}

fn round_up(v: u32, granule: u32) -> u32 {
    v.div_ceil(granule) * granule
}

/// Work-groups of `block_threads` threads that fit on one compute unit at once (0 if the
/// block cannot run at all: too large for the kernel or for the LDS).
pub fn max_active_blocks(
    info: &KernelInfo,
    limits: CuLimits,
    block_threads: u32,
    dynamic_lds: usize,
) -> u32 {
    let max_block = match info.max_flat_workgroup_size {
        0 => 1024,
        n => n.min(1024),
    };
    if block_threads == 0 || block_threads > max_block {
        return 0;
    }
    let wave = limits.wave_size.max(1);
    let waves_per_group = block_threads.div_ceil(wave);
    let simd_wave_slots = (limits.max_waves_per_cu / SIMDS_PER_CU).max(1);
    let vgprs = round_up(info.vgpr_count + info.agpr_count, VGPR_GRANULE);
    let by_vgpr = match vgprs {
        0 => simd_wave_slots,
        v => VGPRS_PER_SIMD_LANE / v,
    };
    let sgprs = round_up(info.sgpr_count, SGPR_GRANULE);
    let by_sgpr = match sgprs {
        0 => simd_wave_slots,
        s => SGPRS_PER_SIMD / s,
    };
    let waves_per_simd = simd_wave_slots.min(by_vgpr).min(by_sgpr);
    let by_waves = waves_per_simd * SIMDS_PER_CU / waves_per_group;
    let lds_per_group = info.group_segment_fixed_size as usize + dynamic_lds;
    let by_lds = match lds_per_group {
        0 => u32::MAX,
        n if n > limits.lds_bytes as usize => 0,
        n => (limits.lds_bytes as usize / n) as u32,
    };
    by_waves.min(by_lds)
}

/// `hipOccupancyMaxPotentialBlockSize`: the block size (a multiple of the wave size, at
/// most `block_limit` if non-zero) that keeps the most threads resident per CU, the larger
/// block on ties; and the grid (in blocks) that fills every CU at that occupancy.
pub fn max_potential_block_size(
    info: &KernelInfo,
    limits: CuLimits,
    compute_units: u32,
    dynamic_lds: usize,
    block_limit: u32,
) -> (u32, u32) {
    let wave = limits.wave_size.max(1);
    let mut cap = match info.max_flat_workgroup_size {
        0 => 1024,
        n => n.min(1024),
    };
    if block_limit > 0 {
        cap = cap.min(block_limit);
    }
    let mut best = (0u32, 0u32, 0u32); // (resident threads, block size, blocks per CU)
    let mut block = wave;
    while block <= cap.max(wave) {
        let size = block.min(cap);
        let blocks = max_active_blocks(info, limits, size, dynamic_lds);
        let threads = blocks * size;
        if threads >= best.0 && blocks > 0 {
            best = (threads, size, blocks);
        }
        block += wave;
    }
    (best.2 * compute_units, best.1)
}

impl CuLimits {
    pub fn of(device: &Device) -> CuLimits {
        CuLimits {
            wave_size: device.info.warp_size.max(1) as u32,
            max_waves_per_cu: device.info.max_waves_per_cu.max(4) as u32,
            lds_bytes: device.lds_bytes,
        }
    }
}

/// `hipOccupancyMaxActiveBlocksPerMultiprocessor` for `function` on `device`.
pub fn active_blocks_of(
    function: &Function,
    device: &Device,
    block_size: i32,
    dynamic_lds: usize,
) -> HipResult<i32> {
    if block_size <= 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let info = &function.kernel(device)?.info;
    let blocks = max_active_blocks(info, CuLimits::of(device), block_size as u32, dynamic_lds);
    Ok(blocks as i32)
}

/// The most dynamic LDS each of `blocks` work-groups of `block_threads` threads may ask for
/// while all of them still fit on one compute unit at once; 0 when they do not fit whatever
/// they ask for (too many waves, registers, or the kernel's own LDS).
pub fn available_dynamic_lds(
    info: &KernelInfo,
    limits: CuLimits,
    blocks: u32,
    block_threads: u32,
) -> usize {
    if blocks == 0 || max_active_blocks(info, limits, block_threads, 0) < blocks {
        return 0;
    }
    // `blocks` groups fit by LDS while each takes at most an equal share of it.
    (limits.lds_bytes / blocks).saturating_sub(info.group_segment_fixed_size) as usize
}

/// `hipOccupancyAvailableDynamicSMemPerBlock` for `function` on `device`. As in AMD's
/// runtime, a count or block size of 0 or less, or a block larger than a compute unit holds,
/// is `hipErrorInvalidValue`.
pub fn available_dynamic_lds_of(
    function: &Function,
    device: &Device,
    blocks: i32,
    block_size: i32,
) -> HipResult<usize> {
    let limits = CuLimits::of(device);
    let cu_threads = limits.max_waves_per_cu.saturating_mul(limits.wave_size);
    if blocks <= 0 || block_size <= 0 || block_size as u32 > cu_threads {
        tracing::error!(
            blocks,
            block_size,
            cu_threads,
            "hipOccupancyAvailableDynamicSMemPerBlock: the block count and size must be positive and a block at most what a compute unit holds"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let info = &function.kernel(device)?.info;
    Ok(available_dynamic_lds(
        info,
        limits,
        blocks as u32,
        block_size as u32,
    ))
}

/// `hipOccupancyMaxPotentialBlockSize` for `function` on `device`: (grid, block).
pub fn potential_block_size_of(
    function: &Function,
    device: &Device,
    dynamic_lds: usize,
    block_limit: i32,
) -> HipResult<(i32, i32)> {
    let info = &function.kernel(device)?.info;
    let (grid, block) = max_potential_block_size(
        info,
        CuLimits::of(device),
        device.info.compute_units.max(1) as u32,
        dynamic_lds,
        block_limit.max(0) as u32,
    );
    if block == 0 {
        // Not even one wave fits (the dynamic LDS alone exceeds the device's).
        return Err(HipError::INVALID_VALUE);
    }
    Ok((grid as i32, block as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(vgpr: u32, agpr: u32, sgpr: u32, lds: u32, max_flat: u32) -> KernelInfo {
        KernelInfo::with_resources(max_flat, lds, sgpr, vgpr, agpr)
    }

    const CDNA: CuLimits = CuLimits {
        wave_size: 64,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
    };

    #[test]
    fn available_dynamic_lds_is_an_equal_share_of_the_cu_less_the_kernels_own() {
        let k = kernel(16, 0, 16, 1024, 1024);
        // Two blocks: 32 KiB each, less the kernel's 1 KiB.
        assert_eq!(available_dynamic_lds(&k, CDNA, 2, 256), (32 << 10) - 1024);
        // Whatever each asks, the blocks fit by LDS exactly then, and not with a byte more.
        let d = available_dynamic_lds(&k, CDNA, 3, 256);
        assert_eq!(max_active_blocks(&k, CDNA, 256, d), 3);
        assert!(max_active_blocks(&k, CDNA, 256, d + 1) < 3);
        // Nine 256-thread blocks are 36 waves: more than a CU's 32 slots, so nothing.
        assert_eq!(available_dynamic_lds(&k, CDNA, 9, 256), 0);
        // The kernel's own LDS already too large for 64 blocks of 64 threads.
        assert_eq!(available_dynamic_lds(&k, CDNA, 64, 64), 0);
    }

    #[test]
    fn light_kernels_are_limited_by_wave_slots() {
        let k = kernel(16, 0, 16, 0, 1024);
        // 8 waves per SIMD, 32 per CU; a 256-thread group has 4 waves.
        assert_eq!(max_active_blocks(&k, CDNA, 256, 0), 8);
        // 1024 threads = 16 waves.
        assert_eq!(max_active_blocks(&k, CDNA, 1024, 0), 2);
        // One-wave groups take one slot each (AMD's runtime: 32, its occupancy example's 50%
        // for a 32-thread block).
        assert_eq!(max_active_blocks(&k, CDNA, 64, 0), 32);
        assert_eq!(max_active_blocks(&k, CDNA, 32, 0), 32);
        // 3 waves: 10 groups in 32 slots.
        assert_eq!(max_active_blocks(&k, CDNA, 192, 0), 10);
    }

    #[test]
    fn registers_and_lds_limit_residency() {
        // 128 VGPRs: 4 waves per SIMD.
        assert_eq!(
            max_active_blocks(&kernel(128, 0, 16, 0, 1024), CDNA, 256, 0),
            4
        );
        // 64 + 64 AGPRs share the unified file: same as 128.
        assert_eq!(
            max_active_blocks(&kernel(64, 64, 16, 0, 1024), CDNA, 256, 0),
            4
        );
        // 100 SGPRs -> 112 allocated -> 7 waves per SIMD.
        assert_eq!(
            max_active_blocks(&kernel(8, 0, 100, 0, 1024), CDNA, 256, 0),
            7
        );
        // 20 KiB of LDS per group: 3 groups in 64 KiB.
        assert_eq!(
            max_active_blocks(&kernel(8, 0, 16, 20 << 10, 1024), CDNA, 256, 0),
            3
        );
        assert_eq!(
            max_active_blocks(&kernel(8, 0, 16, 0, 1024), CDNA, 256, 32 << 10),
            2
        );
        assert_eq!(
            max_active_blocks(&kernel(8, 0, 16, 0, 1024), CDNA, 256, 65 << 10),
            0
        );
    }

    #[test]
    fn blocks_over_the_kernel_limit_cannot_run() {
        assert_eq!(
            max_active_blocks(&kernel(8, 0, 16, 0, 256), CDNA, 512, 0),
            0
        );
    }

    #[test]
    fn potential_block_size_maximises_resident_threads() {
        let k = kernel(16, 0, 16, 0, 1024);
        let (grid, block) = max_potential_block_size(&k, CDNA, 80, 0, 0);
        // Every multiple of 256 up to 1024 reaches 2048 threads; the largest wins.
        assert_eq!(block, 1024);
        assert_eq!(grid, 2 * 80);
        let (_, limited) = max_potential_block_size(&k, CDNA, 80, 0, 128);
        assert_eq!(limited, 128);
        let bounded = kernel(16, 0, 16, 0, 256);
        assert_eq!(max_potential_block_size(&bounded, CDNA, 80, 0, 0).1, 256);
    }
}
