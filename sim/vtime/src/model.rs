//! The modelled devices: one table per part, every number next to where it comes from.
//!
//! A figure marked "calibrated" is not published anywhere; it was chosen so that the checks in
//! `docs/guide/virtual-time-models.md` land near their published results, and the reason is
//! written next to it. Adding a device is adding a `pub const` table here and its name to
//! [`ALL`].

use crate::{Class, WaveCostTable};

/// The compute side: what occupancy and wave timing need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compute {
    pub compute_units: u32,
    /// Accelerator complex dies (XCDs); workgroups are handed to them in turn.
    pub xcds: u32,
    pub simds_per_cu: u32,
    pub max_waves_per_simd: u32,
    /// The unified VGPR+AGPR file of one SIMD, in registers per lane.
    pub vgprs_per_simd_lane: u32,
    /// Allocation granule of that file, in registers per lane.
    pub vgpr_granule: u32,
    pub sgprs_per_simd: u32,
    pub sgpr_granule: u32,
    pub lds_per_cu: u32,
    pub lds_granule: u32,
    pub shader_clock_mhz: u32,
    /// The scratch the runtime lets one dispatch use across the device; kernels with much
    /// scratch per lane get fewer waves than the register file would allow.
    pub scratch_limit_bytes: u64,
    /// Cycles the workgroup dispatcher of one XCD needs per wave it launches.
    pub wave_launch_cycles: u32,
}

/// Memory: the shared bandwidth model and the latencies the wave costs are built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Peak HBM bandwidth, MB/s (10^6 bytes per second).
    pub hbm_mb_per_s: u64,
    /// The share of the peak a streaming kernel achieves, percent.
    pub hbm_efficiency_pct: u32,
    pub l2_bytes: u64,
    /// Infinity Cache (MALL); 0 where there is none. Informational: the model does not
    /// separate cache hits from HBM traffic.
    pub infinity_cache_bytes: u64,
    /// Latency one vector-memory `s_waitcnt` exposes under load, cycles.
    pub latency_cycles: u32,
    pub lds_latency_cycles: u32,
}

/// The command processor's share of a packet's life, in nanoseconds. hsasim adds these
/// itself around what [`crate::Gpu::place`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontEnd {
    /// From the doorbell write to the packet processor starting on the packet.
    pub doorbell_to_dispatch_ns: u64,
    /// Decoding one AQL packet (kernel dispatch) before its workgroups go out.
    pub packet_ns: u64,
    /// A barrier-AND/OR packet once its dependencies are met.
    pub barrier_ns: u64,
    /// End of a kernel to its completion signal being written (release fence: caches
    /// written back, then the signal and the interrupt).
    pub completion_signal_ns: u64,
}

/// Hardware queue descriptors of the compute micro-engine the driver schedules user queues on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hqd {
    pub pipes: u32,
    pub queues_per_pipe: u32,
}

/// What the hardware scheduler's work costs on the virtual time line (queues beyond the HQD
/// slots, runlist updates; see `hsasim_sched::timeline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedCosts {
    /// HQDs of the first MEC the graphics driver keeps for its own kernel compute queues:
    /// user queues get the rest of `hqd`.
    pub driver_queues: u32,
    /// How long a process keeps its slots while the runlist is oversubscribed.
    pub quantum_ns: u64,
    /// Mapping a queue into a slot (loading its descriptor).
    pub map_ns: u64,
    /// Unmapping a queue (preempting and saving it).
    pub unmap_ns: u64,
    /// Building and sending a new runlist.
    pub update_ns: u64,
}

/// SDMA copy engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdmaModel {
    /// Engines the driver offers for host and local copies.
    pub engines: u32,
    /// Further engines reserved for peer (xGMI) copies; informational.
    pub xgmi_engines: u32,
    /// Bandwidth of one engine, MB/s, per direction.
    pub h2d_mb_per_s: u64,
    pub d2h_mb_per_s: u64,
    pub d2d_mb_per_s: u64,
    pub h2h_mb_per_s: u64,
    /// Fixed cost of one copy (fetching the packet, first bytes in flight), ns.
    pub copy_latency_ns: u64,
}

/// What the host side costs, for a virtual clock of the application's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCosts {
    /// A kernel launch through the HIP runtime, up to its doorbell.
    pub host_launch_ns: u64,
    /// Any other submission (an event record or a wait: barrier packets; an async copy), up
    /// to its doorbell.
    pub host_submit_ns: u64,
    /// A waiting host thread seeing a completion (interrupt, wake-up, return).
    pub host_wake_ns: u64,
}

/// One modelled GPU (or one GCD of a multi-die part).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceModel {
    /// Lower-case key for [`by_name`].
    pub name: &'static str,
    pub marketing_name: &'static str,
    /// The gfx target the part runs.
    pub processor: &'static str,
    pub compute: Compute,
    pub memory: Memory,
    pub wave_costs: WaveCostTable,
    pub front_end: FrontEnd,
    pub hqd: Hqd,
    /// VMIDs the kernel driver gives to compute processes (KFD).
    pub vmids: u32,
    pub sched: SchedCosts,
    pub sdma: SdmaModel,
    pub host: HostCosts,
    /// (field, public source or "calibrated: why") for every number above.
    pub sources: &'static [(&'static str, &'static str)],
}

impl DeviceModel {
    /// Shader cycles to nanoseconds, rounded up so that work never takes zero time.
    pub fn cycles_to_ns(&self, cycles: u64) -> u64 {
        let mhz = self.compute.shader_clock_mhz.max(1) as u128;
        let ns = (cycles as u128 * 1000).div_ceil(mhz);
        ns.min(u64::MAX as u128) as u64
    }

    /// A kernel's launch-to-completion time on an idle queue: the doorbell, its packet,
    /// the `kernel_ns` that [`crate::Gpu::place`] gave it, and the completion signal.
    pub fn launch_to_completion_ns(&self, kernel_ns: u64) -> u64 {
        let f = &self.front_end;
        f.doorbell_to_dispatch_ns
            .saturating_add(f.packet_ns)
            .saturating_add(kernel_ns)
            .saturating_add(f.completion_signal_ns)
    }

    /// The HBM bandwidth a streaming dispatch achieves, MB/s.
    pub fn effective_hbm_mb_per_s(&self) -> u64 {
        let bw = self.memory.hbm_mb_per_s as u128 * self.memory.hbm_efficiency_pct.min(100) as u128;
        ((bw / 100) as u64).max(1)
    }
}

/// Bytes a wave64 moves for one instruction of `bytes_per_lane`.
const fn wave_bytes(bytes_per_lane: u32) -> u32 {
    bytes_per_lane * 64
}

/// The per-class table of a CDNA2/CDNA3 SIMD. The issue cycles follow the CU's cadence: a
/// wave64 VALU op occupies a 16-lane SIMD for 4 cycles; transcendentals run at quarter rate;
/// a vector-memory op spends a cycle per 64 bytes in the texture addresser. Scalar work
/// co-issues with vector work (the CU issues one instruction of each kind per SIMD turn), so
/// it costs the SIMD little. An MFMA of P passes takes one VALU issue turn (4 cycles) and
/// holds the SIMD's matrix core for 4·P cycles: the matrix core is a resource of its own
/// (LLVM's SISchedule.td gives MAI writes the `HWXDL` resource for their passes, apart from
/// `HWVALU`; LLVM's gfx942 co-execution rules, llvm/llvm-project PR 233721, let a VALU
/// instruction issue a cycle or two after an XDL MFMA while its passes run), so a wave alone
/// still waits for its MFMAs one after the other (`cycles` 4·P) but other waves' vector work
/// overlaps them. Latency is charged once, where a wave waits for it (`s_waitcnt`).
const fn cdna_wave_costs(latency: u32, lds_latency: u32, f64_cycles: u32) -> WaveCostTable {
    let mut cycles = [0u32; Class::COUNT];
    let mut issue = [0u32; Class::COUNT];
    let mut bytes = [0u32; Class::COUNT];
    let mut matrix = [0u32; Class::COUNT];
    macro_rules! set {
        ($c:expr, $alone:expr, $busy:expr) => {
            cycles[$c as usize] = $alone;
            issue[$c as usize] = $busy;
        };
    }
    macro_rules! mfma {
        ($c:expr, $passes:expr) => {
            cycles[$c as usize] = 4 * $passes;
            issue[$c as usize] = 4;
            matrix[$c as usize] = 4 * $passes;
        };
    }
    set!(Class::Salu, 4, 1);
    set!(Class::Smem, 4, 1);
    // A taken branch refetches instructions.
    set!(Class::Branch, 8, 1);
    set!(Class::Waitcnt, latency, 0);
    // Waiting for the slowest wave of the group is counted in the workgroup's longest wave.
    set!(Class::Barrier, 16, 0);
    set!(Class::Valu, 4, 4);
    set!(Class::ValuF64, f64_cycles, f64_cycles);
    set!(Class::ValuTrans, 16, 16);
    mfma!(Class::Mfma2, 2);
    mfma!(Class::Mfma4, 4);
    mfma!(Class::Mfma8, 8);
    mfma!(Class::Mfma16, 16);
    set!(Class::Lds, lds_latency, 4);
    set!(Class::Load4, 4, 4);
    set!(Class::Load8, 8, 8);
    set!(Class::Load16, 16, 16);
    set!(Class::Store4, 4, 4);
    set!(Class::Store8, 8, 8);
    set!(Class::Store16, 16, 16);
    // An atomic returns its old value: the wave nearly always waits for it.
    set!(Class::Atomic, latency, 4);
    set!(Class::Other, 4, 1);
    bytes[Class::Load4 as usize] = wave_bytes(4);
    bytes[Class::Load8 as usize] = wave_bytes(8);
    bytes[Class::Load16 as usize] = wave_bytes(16);
    bytes[Class::Store4 as usize] = wave_bytes(4);
    bytes[Class::Store8 as usize] = wave_bytes(8);
    bytes[Class::Store16 as usize] = wave_bytes(16);
    // Read and write of one dword per lane.
    bytes[Class::Atomic as usize] = wave_bytes(8);
    WaveCostTable {
        cycles,
        bytes,
        issue,
        matrix,
    }
}

const ROCM_SPECS: &str = "ROCm docs, reference/gpu-specs (AMD GPU specifications table)";
const ROCM_MI300: &str =
    "ROCm docs, conceptual/gpu-arch/mi300 (peak FLOPS/clock/CU and peak TFLOPS table; 5.3 TB/s)";
const LLVM_USAGE: &str = "LLVM AMDGPUUsage and AMDGPUBaseInfo (gfx90a/gfx942: 8 waves per EU, \
     512 unified VGPRs per lane, granule 8; 800 SGPRs, granule 16; LDS granule 128 dwords)";
const KFD: &str = "Linux amdgpu/amdkfd: gfx_v9_0.c / gfx_v9_4_3.c (MEC: 4 pipes x 8 queues), \
     kfd_device.c (8 VMIDs for KFD; 2 SDMA engines for host/local copies, the rest xGMI)";
const ROCR_SCRATCH: &str =
    "ROCr HSA_SCRATCH_SINGLE_LIMIT default 146800640 bytes (140 MiB), ROCm environment variables";
const CAL_LATENCY: &str = "calibrated: loaded vector-memory latency chosen so vectorAdd 1M on \
     MI308X lands near 13.52 us (unloaded HBM latency is lower; queueing under 16K waves is not)";
const CAL_FRONT: &str =
    "calibrated: split of the 4.04 us hipEvent time of an empty 256x256 kernel \
     (ROCm/TransferBench PR 297) between doorbell, packet and completion";
const CAL_HOST: &str = "calibrated: with the front end, 16.9 us launch+synchronize of a small \
     kernel on bare-metal MI325X (pytorch/FBGEMM PR 6219)";
const CAL_SDMA: &str = "calibrated: PCIe achieved rate ~80% of the link's 64 GB/s (Gen5 x16) or \
     32 GB/s (Gen4 x16) per direction; D2D and latency are guesses";
const CAL_LAUNCH: &str = "calibrated: one wave launched per cycle per XCD (guess)";
const MFMA_PIPE: &str = "LLVM SISchedule.td: MAI writes hold HWXDL (the matrix core), a resource \
     apart from HWVALU, for their passes; gfx940 model: 32x32x8 f16 8 passes, 16x16x16 f16 4 \
     (gfx90a: 16 and 8); llvm/llvm-project PR 233721, getVALUIssueCycle (on gfx942 a VALU \
     issues a cycle or two after an XDL MFMA, while its passes run)";
const AMDGPU_KCQ: &str = "Linux amdgpu: amdgpu_drv.c num_kcq (8 kernel compute queues by \
     default) on the first MEC; amdgpu_amdkfd.c gives KFD the complement of those queues in the \
     first MEC (cp_queue_bitmap): 32 - 8 = 24 HQDs for user queues";
const GUESS_SCHED: &str = "guess: 10 ms process quantum (the MES scheduler's documented default \
     quantum per process); map 20 us, unmap 50 us, runlist update 200 us are assumptions of the \
     order of a few HIQ packets and a queue preemption, no public measurement";
const CAL_EFF: &str = "calibrated: streaming kernels reach ~80% of peak HBM bandwidth (guess)";

const CDNA3_SOURCES: &[(&str, &str)] = &[
    ("compute_units, xcds (304 = 38 x 8), lds_per_cu 64 KiB, l2 4 MiB per XCD, infinity cache 256 MiB, VGPR file 512 KiB per CU, SGPR file 12.5 KiB per CU", ROCM_SPECS),
    ("shader_clock_mhz 2100 (1307.4 TFLOPS = 304 CU x 2048 FLOPS/clk x 2.1 GHz), hbm 5.3 TB/s, MFMA rate 2048 FP16 FLOPS/clk/CU, FP64 vector 128 FLOPS/clk/CU", ROCM_MI300),
    ("simds_per_cu, max_waves_per_simd, vgprs_per_simd_lane, vgpr_granule, sgprs_per_simd, sgpr_granule, lds_granule", LLVM_USAGE),
    ("hqd pipes/queues_per_pipe, vmids, sdma engines/xgmi_engines", KFD),
    ("sched.driver_queues 8", AMDGPU_KCQ),
    ("sched.quantum_ns, map_ns, unmap_ns, update_ns", GUESS_SCHED),
    ("scratch_limit_bytes", ROCR_SCRATCH),
    ("memory.latency_cycles", CAL_LATENCY),
    ("memory.lds_latency_cycles 64", "calibrated: CDNA3 LDS load-to-use latency of the order of 64 cycles (guess)"),
    ("memory.hbm_efficiency_pct", CAL_EFF),
    ("compute.wave_launch_cycles", CAL_LAUNCH),
    ("wave_costs MFMA: 4 x passes cycles on the matrix core, one 4-cycle issue turn", MFMA_PIPE),
    ("workgroup i goes to XCD i mod xcds", "Modular docs, chiplet_transform_chunked (MI300X: WG0 to XCD0, WG1 to XCD1, ...)"),
    ("CU mask bit i is on XCD i mod xcds", "Linux amdkfd kfd_mqd_manager.c, mqd_symmetrically_map_cu_mask (steps by the XCC count)"),
    ("front_end.*", CAL_FRONT),
    ("host.*", CAL_HOST),
    ("sdma.*_mb_per_s, sdma.copy_latency_ns", CAL_SDMA),
];

const MI308X_SOURCES: &[(&str, &str)] = &[
    (
        "compute_units 80 (gfx942), 4 XCDs (one MQD maps to 4 HQDs)",
        "public deployment notes of MI308X systems (gfx942, 80 CU); issue 42",
    ),
    (
        "shader_clock_mhz, hbm, per-CU figures",
        "assumed equal to MI300X: same XCD and HBM3 package (no AMD data sheet is public)",
    ),
    (
        "l2 16 MiB",
        "4 MiB per XCD (ROCm docs, gpu-specs, MI300 series) x 4 XCDs",
    ),
    ("everything else", "as MI300X; see its sources"),
];

const CDNA2_SOURCES: &[(&str, &str)] = &[
    ("compute_units 110 per GCD, lds 64 KiB, l2 8 MiB per GCD, VGPR file 512 KiB per CU", ROCM_SPECS),
    ("shader_clock_mhz 1700, hbm 3.2 TB/s per MI250X (1.6 TB/s per GCD), 383 FP16 matrix TFLOPS per MI250X (1024 FLOPS/clk/CU), FP64 vector 47.9 TFLOPS (128 FLOPS/clk/CU)", "AMD Instinct MI250X data sheet; ROCm docs, conceptual/gpu-arch/mi250"),
    ("simds_per_cu, max_waves_per_simd, vgprs_per_simd_lane, granules", LLVM_USAGE),
    ("hqd, vmids, sdma engines", KFD),
    ("sched.driver_queues 8", AMDGPU_KCQ),
    ("sched.quantum_ns, map_ns, unmap_ns, update_ns", GUESS_SCHED),
    ("scratch_limit_bytes", ROCR_SCRATCH),
    ("memory.latency_cycles", "calibrated: as MI300X in nanoseconds, scaled to 1.7 GHz (guess)"),
    ("memory.hbm_efficiency_pct", CAL_EFF),
    ("compute.wave_launch_cycles", CAL_LAUNCH),
    ("wave_costs MFMA: 4 x passes cycles on the matrix core, one 4-cycle issue turn", MFMA_PIPE),
    ("front_end.*, host.*", "calibrated: as MI300X (same firmware family; guess)"),
    ("sdma.*", CAL_SDMA),
];

const MI300X_LATENCY: u32 = 1300;

/// MI300X (gfx942, CDNA3): 8 XCDs of 38 CUs, 8 stacks of HBM3.
pub const MI300X: DeviceModel = DeviceModel {
    name: "mi300x",
    marketing_name: "AMD Instinct MI300X",
    processor: "gfx942",
    compute: Compute {
        compute_units: 304,
        xcds: 8,
        simds_per_cu: 4,
        max_waves_per_simd: 8,
        vgprs_per_simd_lane: 512,
        vgpr_granule: 8,
        sgprs_per_simd: 800,
        sgpr_granule: 16,
        lds_per_cu: 64 * 1024,
        lds_granule: 512,
        shader_clock_mhz: 2100,
        scratch_limit_bytes: 146_800_640,
        wave_launch_cycles: 1,
    },
    memory: Memory {
        hbm_mb_per_s: 5_300_000,
        hbm_efficiency_pct: 80,
        l2_bytes: 32 << 20,
        infinity_cache_bytes: 256 << 20,
        latency_cycles: MI300X_LATENCY,
        lds_latency_cycles: 64,
    },
    wave_costs: cdna_wave_costs(MI300X_LATENCY, 64, 4),
    front_end: FrontEnd {
        doorbell_to_dispatch_ns: 1_400,
        packet_ns: 400,
        barrier_ns: 400,
        completion_signal_ns: 2_000,
    },
    hqd: Hqd {
        pipes: 4,
        queues_per_pipe: 8,
    },
    vmids: 8,
    sched: SchedCosts {
        driver_queues: 8,
        quantum_ns: 10_000_000,
        map_ns: 20_000,
        unmap_ns: 50_000,
        update_ns: 200_000,
    },
    sdma: SdmaModel {
        engines: 2,
        xgmi_engines: 14,
        h2d_mb_per_s: 51_000,
        d2h_mb_per_s: 51_000,
        d2d_mb_per_s: 200_000,
        h2h_mb_per_s: 40_000,
        copy_latency_ns: 2_000,
    },
    host: HostCosts {
        host_launch_ns: 1_000,
        host_submit_ns: 1_000,
        host_wake_ns: 10_000,
    },
    sources: CDNA3_SOURCES,
};

/// MI308X (gfx942): the MI300X package with 4 XCDs of 20 CUs.
pub const MI308X: DeviceModel = DeviceModel {
    name: "mi308x",
    marketing_name: "AMD Instinct MI308X",
    compute: Compute {
        compute_units: 80,
        xcds: 4,
        ..MI300X.compute
    },
    memory: Memory {
        l2_bytes: 16 << 20,
        ..MI300X.memory
    },
    sources: MI308X_SOURCES,
    ..MI300X
};

const MI250X_LATENCY: u32 = 1050;

/// One GCD of an MI250X (gfx90a, CDNA2), as ROCm shows it: a GPU of its own.
pub const MI250X_GCD: DeviceModel = DeviceModel {
    name: "mi250x-gcd",
    marketing_name: "AMD Instinct MI250X (one GCD)",
    processor: "gfx90a",
    compute: Compute {
        compute_units: 110,
        xcds: 1,
        simds_per_cu: 4,
        max_waves_per_simd: 8,
        vgprs_per_simd_lane: 512,
        vgpr_granule: 8,
        sgprs_per_simd: 800,
        sgpr_granule: 16,
        lds_per_cu: 64 * 1024,
        lds_granule: 512,
        shader_clock_mhz: 1700,
        scratch_limit_bytes: 146_800_640,
        wave_launch_cycles: 1,
    },
    memory: Memory {
        hbm_mb_per_s: 1_638_400,
        hbm_efficiency_pct: 80,
        l2_bytes: 8 << 20,
        infinity_cache_bytes: 0,
        latency_cycles: MI250X_LATENCY,
        lds_latency_cycles: 64,
    },
    wave_costs: cdna_wave_costs(MI250X_LATENCY, 64, 4),
    front_end: MI300X.front_end,
    hqd: Hqd {
        pipes: 4,
        queues_per_pipe: 8,
    },
    vmids: 8,
    sched: MI300X.sched,
    sdma: SdmaModel {
        engines: 2,
        xgmi_engines: 3,
        h2d_mb_per_s: 25_000,
        d2h_mb_per_s: 25_000,
        d2d_mb_per_s: 100_000,
        h2h_mb_per_s: 20_000,
        copy_latency_ns: 2_000,
    },
    host: MI300X.host,
    sources: CDNA2_SOURCES,
};

const ALL: &[&DeviceModel] = &[&MI300X, &MI308X, &MI250X_GCD];
const NAMES: &[&str] = &["mi300x", "mi308x", "mi250x-gcd"];

/// The table called `name` (case-insensitive).
pub fn by_name(name: &str) -> Option<&'static DeviceModel> {
    ALL.iter()
        .copied()
        .find(|m| m.name.eq_ignore_ascii_case(name.trim()))
}

/// The model a gfx target gets when none is named: gfx942 is an MI300X, gfx90a an MI250X
/// GCD, anything else an MI300X.
pub fn default_for(processor: &str) -> &'static DeviceModel {
    // Target features (`gfx90a:xnack-`) do not change the part.
    let base = processor.split(':').next().unwrap_or("");
    if base.eq_ignore_ascii_case("gfx90a") {
        &MI250X_GCD
    } else {
        &MI300X
    }
}

/// Every model's name, as [`by_name`] takes it.
pub fn names() -> &'static [&'static str] {
    NAMES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_agree() {
        for n in names() {
            let m = by_name(n).expect("listed name resolves");
            assert_eq!(&m.name, n);
            assert!(!m.sources.is_empty());
        }
        assert_eq!(by_name("MI308X").map(|m| m.compute.compute_units), Some(80));
        assert_eq!(by_name(" Mi250X-GCD ").map(|m| m.processor), Some("gfx90a"));
        assert!(by_name("mi100").is_none());
        assert_eq!(default_for("gfx942").name, "mi300x");
        assert_eq!(default_for("gfx90a:xnack+").name, "mi250x-gcd");
        assert_eq!(default_for("gfx1100").name, "mi300x");
    }

    #[test]
    fn published_peaks_follow_from_the_tables() {
        // 304 CUs x 2048 FLOPS per clock x 2.1 GHz = 1307.4 TFLOPS (ROCm MI300 table).
        let m = &MI300X;
        let tflops =
            m.compute.compute_units as f64 * 2048.0 * m.compute.shader_clock_mhz as f64 / 1e6;
        assert!((tflops - 1307.4).abs() < 0.1, "{tflops}");
        // One wave64 VGPR file entry per lane is 4 bytes: 512 KiB per CU over 4 SIMDs.
        let vgpr_kib = m.compute.vgprs_per_simd_lane * 64 * 4 * m.compute.simds_per_cu / 1024;
        assert_eq!(vgpr_kib, 512);
        // 800 SGPRs x 4 bytes x 4 SIMDs = 12.5 KiB.
        assert_eq!(
            m.compute.sgprs_per_simd * 4 * m.compute.simds_per_cu,
            12_800
        );
        assert_eq!(m.cycles_to_ns(2100), 1000);
        assert_eq!(m.cycles_to_ns(1), 1);
        assert_eq!(m.effective_hbm_mb_per_s(), 4_240_000);
    }
}
