//! hsasim's virtual-time model of an Instinct GPU (`HSASIM_TIME=virtual`).
//!
//! The functional simulation runs as always; it only counts what each wave executed, by
//! instruction class ([`Mix`]). This crate turns those counts into durations on a modelled
//! device ([`DeviceModel`], one table per part, every number with its public source), places
//! workgroups on compute units shared by all queues ([`Gpu`]), and times copies on SDMA
//! engines ([`Sdma`]). It knows nothing of HSA, queues or signals: hsasim decides the order in
//! which dispatches and copies are placed (so that the result is the same in every run) and
//! when each may start.
//!
//! Times are virtual nanoseconds since the device was created; cycles are shader-clock cycles
//! of the modelled device.

/// The classes of executed wave-instructions the model prices differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Class {
    /// SALU and SOPP that is not below.
    Salu,
    /// Scalar memory (`s_load_*`, `s_buffer_load_*`, `s_store_*`, `s_memtime`).
    Smem,
    /// Taken or not, `s_branch`, `s_cbranch_*`, `s_setpc`/`s_swappc`.
    Branch,
    /// `s_waitcnt` (the model charges the latency it exposes).
    Waitcnt,
    /// `s_barrier`.
    Barrier,
    /// 32-bit (and packed 16-bit) VALU.
    Valu,
    /// 64-bit float VALU (`v_fma_f64`, `v_add_f64`, ...).
    ValuF64,
    /// Transcendentals (`v_exp_f32`, `v_rcp_*`, `v_sqrt_*`, `v_sin_*`, ...).
    ValuTrans,
    /// MFMA by passes (a pass is 4 cycles): 2, 4, 8, 16 passes.
    Mfma2,
    Mfma4,
    Mfma8,
    Mfma16,
    /// LDS (`ds_*` that is not GWS).
    Lds,
    /// Global/buffer/flat loads by bytes per lane (x3 counts as 16).
    Load4,
    Load8,
    Load16,
    /// Global/buffer/flat stores by bytes per lane.
    Store4,
    Store8,
    Store16,
    /// Vector atomics (global, buffer, flat).
    Atomic,
    /// Everything else (`s_nop`, `s_setprio`, exports, ...).
    Other,
}

impl Class {
    pub const COUNT: usize = Class::Other as usize + 1;
}

/// What one wave (or, summed, a workgroup) executed, by [`Class`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mix {
    pub count: [u64; Class::COUNT],
}

impl Mix {
    #[inline(always)]
    pub fn add(&mut self, class: Class) {
        self.count[class as usize] += 1;
    }
}

/// What the model needs of one wave, reduced from its [`Mix`] as soon as the wave ends
/// (so a dispatch keeps a few words per workgroup, not a [`Mix`] per wave).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaveCost {
    /// Shader cycles the wave takes alone on a SIMD: issue cycles plus the memory latency
    /// its `s_waitcnt`s expose.
    pub cycles: u64,
    /// Bytes it moved to or from global memory (the shared L2/HBM bandwidth model).
    pub bytes: u64,
    /// The part of `cycles` during which the wave holds its SIMD's issue port; only this
    /// part slows the other waves on the same SIMD (latency overlaps, issue does not).
    pub issue: u64,
    /// Cycles the wave holds its SIMD's matrix core (MFMA passes × 4). The matrix core is a
    /// pipe of its own: while one wave's MFMA runs there, the SIMD issues other waves' (and
    /// this wave's independent) VALU, scalar and memory instructions, so the SIMD's waves
    /// are bound by the busier of the two, not by their sum.
    pub matrix: u64,
}

/// The waves of one workgroup, or of a run of consecutive workgroups (`workgroups` > 1:
/// large grids are bucketed so that a dispatch's record stays small).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkgroupCost {
    pub workgroups: u32,
    pub waves: u32,
    /// Sum of the waves' cycles.
    pub cycles_sum: u64,
    /// The longest wave's cycles (a workgroup ends with its last wave).
    pub cycles_max: u64,
    pub bytes: u64,
    /// Sum of the waves' issue cycles ([`WaveCost::issue`]).
    pub issue_sum: u64,
    /// Sum of the waves' matrix-core cycles ([`WaveCost::matrix`]).
    pub matrix_sum: u64,
}

impl WorkgroupCost {
    pub fn add_wave(&mut self, wave: WaveCost) {
        self.waves = self.waves.saturating_add(1);
        self.cycles_sum = self.cycles_sum.saturating_add(wave.cycles);
        self.cycles_max = self.cycles_max.max(wave.cycles);
        self.bytes = self.bytes.saturating_add(wave.bytes);
        self.issue_sum = self.issue_sum.saturating_add(wave.issue);
        self.matrix_sum = self.matrix_sum.saturating_add(wave.matrix);
    }

    /// Folds another record (a workgroup or a bucket) into this one, as the bucketing of
    /// large grids does.
    pub fn merge(&mut self, other: &WorkgroupCost) {
        self.workgroups = self.workgroups.saturating_add(other.workgroups);
        self.waves = self.waves.saturating_add(other.waves);
        self.cycles_sum = self.cycles_sum.saturating_add(other.cycles_sum);
        self.cycles_max = self.cycles_max.max(other.cycles_max);
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.issue_sum = self.issue_sum.saturating_add(other.issue_sum);
        self.matrix_sum = self.matrix_sum.saturating_add(other.matrix_sum);
    }
}

/// The linear part of the wave model: cycles and global-memory bytes per executed
/// instruction of each class, for one device. A wave's cost is its [`Mix`] weighted by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaveCostTable {
    pub cycles: [u32; Class::COUNT],
    pub bytes: [u32; Class::COUNT],
    /// Cycles of each class that occupy the SIMD's issue port (see [`WaveCost::issue`]).
    pub issue: [u32; Class::COUNT],
    /// Cycles of each class that occupy the SIMD's matrix core (see [`WaveCost::matrix`]).
    pub matrix: [u32; Class::COUNT],
}

impl WaveCostTable {
    /// The fewest cycles of a wave's own time any one instruction costs: a wave that has
    /// executed `n` instructions has taken at least `n` times this.
    pub fn min_cycles(&self) -> u64 {
        self.cycles.iter().copied().min().unwrap_or(0) as u64
    }

    pub fn cost(&self, mix: &Mix) -> WaveCost {
        let mut cost = WaveCost::default();
        for (c, &n) in mix.count.iter().enumerate() {
            cost.cycles = cost
                .cycles
                .saturating_add(n.saturating_mul(self.cycles[c] as u64));
            cost.bytes = cost
                .bytes
                .saturating_add(n.saturating_mul(self.bytes[c] as u64));
            cost.issue = cost
                .issue
                .saturating_add(n.saturating_mul(self.issue[c] as u64));
            cost.matrix = cost
                .matrix
                .saturating_add(n.saturating_mul(self.matrix[c] as u64));
        }
        cost
    }
}

mod cu_use;
mod gpu;
mod model;
mod occupancy;
mod sdma;

pub use cu_use::{CuUse, MAX_INTERVALS as MAX_CU_INTERVALS};
pub use gpu::{CuBusy, Gpu, Placement};
pub use model::{
    by_name, default_for, names, Compute, DeviceModel, FrontEnd, HostCosts, Hqd, Memory, SdmaModel,
    MI250X_GCD, MI300X, MI308X,
};
pub use occupancy::{occupancy, DispatchShape, Limiter, Occupancy};
pub use sdma::{CopyTiming, Direction, Sdma};
