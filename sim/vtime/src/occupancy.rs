//! How many workgroups of a dispatch one CU holds at once, and what stops it holding more.

use crate::DeviceModel;

/// What the dispatcher needs to know of a kernel dispatch (from its kernel descriptor and
/// packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchShape {
    pub workgroups: u64,
    pub waves_per_workgroup: u32,
    /// Architectural VGPRs per lane (`.vgpr_count`).
    pub vgprs: u32,
    /// Accumulation VGPRs per lane (`.agpr_count`); they share the unified file.
    pub agprs: u32,
    pub sgprs: u32,
    /// Group segment (static plus dynamic LDS) per workgroup.
    pub lds_bytes: u32,
    /// Private segment per lane.
    pub scratch_per_lane: u32,
}

/// The resource that bounds a dispatch's occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limiter {
    /// Wave slots: the SIMDs' maximum waves.
    Waves,
    /// The unified VGPR/AGPR file.
    Vgprs,
    Sgprs,
    Lds,
    /// The runtime's scratch limit spread over the CUs.
    Scratch,
    /// One workgroup needs more than a whole CU has: the dispatch cannot run. The model
    /// still places it, one workgroup per CU at a time, so that time goes on.
    DoesNotFit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Workgroups of this dispatch resident on one CU when nothing else runs there
    /// (0 when [`Limiter::DoesNotFit`]).
    pub workgroups_per_cu: u32,
    /// Waves of this dispatch per SIMD at that occupancy (rounded up).
    pub waves_per_simd: u32,
    pub limiter: Limiter,
}

fn round_up(x: u64, granule: u32) -> u64 {
    let g = granule.max(1) as u64;
    x.div_ceil(g).saturating_mul(g)
}

/// The occupancy of `shape` on one otherwise idle CU of `model`, as the workgroup dispatcher
/// computes it: each resource's capacity over the dispatch's per-workgroup need, the least
/// of them wins (ties go to the first in [`Limiter`]'s order).
pub fn occupancy(model: &DeviceModel, shape: &DispatchShape) -> Occupancy {
    let c = &model.compute;
    let simds = c.simds_per_cu.max(1) as u64;
    let max_waves = c.max_waves_per_simd.max(1) as u64;
    let waves = shape.waves_per_workgroup.max(1) as u64;

    // AGPRs start at an offset aligned to 4 registers after the VGPRs (gfx90a/gfx942).
    let unified = if shape.agprs > 0 {
        round_up(shape.vgprs as u64, 4).saturating_add(shape.agprs as u64)
    } else {
        shape.vgprs as u64
    };
    let vgpr_waves = match round_up(unified, c.vgpr_granule) {
        0 => max_waves,
        r => (c.vgprs_per_simd_lane as u64 / r).min(max_waves),
    };
    let sgpr_waves = match round_up(shape.sgprs as u64, c.sgpr_granule) {
        0 => max_waves,
        r => (c.sgprs_per_simd as u64 / r).min(max_waves),
    };
    let per_cu = |waves_per_simd: u64| waves_per_simd * simds / waves;
    let mut limits = [
        (Limiter::Waves, per_cu(max_waves)),
        (Limiter::Vgprs, per_cu(vgpr_waves)),
        (Limiter::Sgprs, per_cu(sgpr_waves)),
        (Limiter::Lds, u64::MAX),
        (Limiter::Scratch, u64::MAX),
    ];
    let lds = round_up(shape.lds_bytes as u64, c.lds_granule);
    if let Some(n) = (c.lds_per_cu as u64).checked_div(lds) {
        limits[3].1 = n;
    }
    if shape.scratch_per_lane > 0 {
        let per_wave = shape.scratch_per_lane as u64 * 64;
        let device_waves = c.scratch_limit_bytes / per_wave;
        let cu_waves = device_waves / c.compute_units.max(1) as u64;
        limits[4].1 = cu_waves / waves;
    }
    let (mut limiter, mut wgs) = limits[0];
    for &(l, n) in &limits[1..] {
        if n < wgs {
            (limiter, wgs) = (l, n);
        }
    }
    if wgs == 0 {
        // Which resource it is matters less than that nothing fits; keep the first that
        // is exhausted for the message, and report it as not fitting.
        limiter = Limiter::DoesNotFit;
    }
    let wgs = wgs.min(u32::MAX as u64) as u32;
    let waves_per_simd = (wgs as u64 * waves).div_ceil(simds).min(max_waves) as u32;
    Occupancy {
        workgroups_per_cu: wgs,
        waves_per_simd,
        limiter,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MI250X_GCD, MI300X};

    fn shape(waves: u32, vgprs: u32, lds: u32) -> DispatchShape {
        DispatchShape {
            workgroups: 1000,
            waves_per_workgroup: waves,
            vgprs,
            sgprs: 32,
            lds_bytes: lds,
            ..Default::default()
        }
    }

    #[test]
    fn small_kernels_are_bound_by_wave_slots() {
        // 256 threads = 4 waves; 8 waves x 4 SIMDs = 32 slots per CU.
        let o = occupancy(&MI300X, &shape(4, 16, 0));
        assert_eq!(
            o,
            Occupancy {
                workgroups_per_cu: 8,
                waves_per_simd: 8,
                limiter: Limiter::Waves
            }
        );
        let o = occupancy(&MI300X, &shape(1, 16, 0));
        assert_eq!((o.workgroups_per_cu, o.waves_per_simd), (32, 8));
    }

    #[test]
    fn vgprs_limit() {
        // 128 VGPRs: 512 / 128 = 4 waves per SIMD = 16 per CU = 4 workgroups of 4 waves.
        let o = occupancy(&MI300X, &shape(4, 128, 0));
        assert_eq!(
            o,
            Occupancy {
                workgroups_per_cu: 4,
                waves_per_simd: 4,
                limiter: Limiter::Vgprs
            }
        );
        // 100 VGPRs + 100 AGPRs: 100 -> 100 (aligned), +100 = 200 -> 200 (granule 8);
        // 512 / 200 = 2 waves per SIMD.
        let s = DispatchShape {
            agprs: 100,
            ..shape(4, 100, 0)
        };
        let o = occupancy(&MI250X_GCD, &s);
        assert_eq!(
            (o.workgroups_per_cu, o.waves_per_simd, o.limiter),
            (2, 2, Limiter::Vgprs)
        );
    }

    #[test]
    fn lds_limit() {
        // 20 KiB per workgroup: 64 KiB holds 3.
        let o = occupancy(&MI300X, &shape(4, 16, 20 * 1024));
        assert_eq!(
            (o.workgroups_per_cu, o.waves_per_simd, o.limiter),
            (3, 3, Limiter::Lds)
        );
        // 100 bytes still take a whole 512-byte granule: 128 per CU, waves bind first.
        let o = occupancy(&MI300X, &shape(1, 16, 100));
        assert_eq!(o.limiter, Limiter::Waves);
    }

    #[test]
    fn sgprs_scratch_and_misfits() {
        let s = DispatchShape {
            sgprs: 400,
            ..shape(4, 16, 0)
        };
        let o = occupancy(&MI300X, &s);
        assert_eq!((o.workgroups_per_cu, o.limiter), (2, Limiter::Sgprs));
        // 16 KiB per lane = 1 MiB per wave: 140 waves device-wide, none per CU.
        let s = DispatchShape {
            scratch_per_lane: 16 * 1024,
            ..shape(1, 16, 0)
        };
        assert_eq!(occupancy(&MI300X, &s).limiter, Limiter::DoesNotFit);
        // 512 bytes per lane: 4480 waves, 14 per CU.
        let s = DispatchShape {
            scratch_per_lane: 512,
            ..shape(1, 16, 0)
        };
        let o = occupancy(&MI300X, &s);
        assert_eq!((o.workgroups_per_cu, o.limiter), (14, Limiter::Scratch));
        // 33 waves cannot share a 32-slot CU; zero waves count as one.
        assert_eq!(
            occupancy(&MI300X, &shape(33, 16, 0)).limiter,
            Limiter::DoesNotFit
        );
        assert_eq!(occupancy(&MI300X, &shape(0, 0, 0)).workgroups_per_cu, 32);
        let huge = DispatchShape {
            lds_bytes: u32::MAX,
            vgprs: u32::MAX,
            ..shape(4, 0, 0)
        };
        assert_eq!(occupancy(&MI300X, &huge).workgroups_per_cu, 0);
    }
}
