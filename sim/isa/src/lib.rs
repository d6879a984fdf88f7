//! GFX9-family (gfx942 = CDNA3, gfx90a = CDNA2) wave64 machine-code interpreter.
//!
//! hsasim's packet processor hands one kernel dispatch to [`run_dispatch`]; this crate sets
//! up each wave's initial register state as the hardware does (user SGPRs per the kernel
//! descriptor's enable bits, workgroup ids, packed work-item ids in v0), runs the waves of a
//! workgroup interleaved (switching at `s_barrier`) and the workgroups in parallel on host
//! threads, and returns the first error that stopped the dispatch.
//!
//! hsasim backs every device allocation with host memory, so a global load is a host load
//! at the address [`GuestMemory::translate`] gives for the device address (mostly the same
//! address).

//! ## What is modelled
//! - Floats: IEEE round-to-nearest-even everywhere; MODE starts from the descriptor's
//!   COMPUTE_PGM_RSRC1 and `s_setreg` changes it; its FP_DENORM field flushes f32 (and
//!   f64) denormal inputs and results to signed zero when 0 and keeps them when 3 (HIP's
//!   default). Other rounding modes and the partial denormal modes are not modelled.
//! - Division: `v_div_scale`/`v_div_fmas`/`v_div_fixup` scale so the compiler's
//!   Newton-Raphson sequence is correctly rounded over the whole range (see exec/valu/div.rs).
//! - MFMA: every dense gfx90a/gfx942 shape (f32, f16, bf16, i8; not f64, sparse or fp8),
//!   AGPR/VGPR operands, without the cbsz/abid/blgp broadcasts (exec/mai.rs).
//! - Scratch: per-lane private memory; FLAT/SCRATCH addresses are per-lane offsets, GFX9
//!   MUBUF through the private-segment buffer takes soffset in wave units (swizzled
//!   layout); an access past the private segment is `Illegal` ("stack overflow?").
//!   Kernels with USES_DYNAMIC_STACK get at least 1024 extra bytes (HIP's default limit).
//! - Watchdog: a wave that executes more than [`ExecConfig::max_wave_instructions`]
//!   instructions stops the dispatch with [`DispatchError::Watchdog`]; a dispatch still
//!   running after [`ExecConfig::timeout`] stops with [`DispatchError::Timeout`]. Either
//!   stops every wave of the dispatch. hsasim fills both from its configuration.
//! - Cooperative dispatches ([`run_cooperative_dispatch`], for queues created
//!   `HSA_QUEUE_TYPE_COOPERATIVE`): all workgroups resident at once, interleaved on each
//!   host worker, with the queue's Global Wave Sync unit behind `ds_gws_init` and
//!   `ds_gws_barrier` (see `coop` and `gws`). Elsewhere a `ds_gws_*` instruction is
//!   `Illegal`, naming the queue type it needs.
//! - Queue priority ([`ExecConfig::priority`]): while a higher-priority dispatch of the same
//!   device has workgroups not yet started, workers of a lower one start none (those running
//!   finish), and then go on only as the higher one's workers free host threads; a higher
//!   dispatch stuck inside its workgroups for 200 ms lets the others on (see `arbiter`).
//!   Cooperative dispatches take no part.
//! - Virtual time ([`ExecConfig::timing`], issue 42): every wave counts what it executes by
//!   instruction class ([`Mix`], the class found once per decoded instruction; translated
//!   code counts exactly as the interpreter does). With timing on, each wave's counts are
//!   priced when it ends and summed per workgroup ([`DispatchStats::costs`], from
//!   [`run_dispatch_timed`]), and `s_memtime`/`s_memrealtime` read the wave's own virtual
//!   clock instead of the host's.
//! - Other ISAs: wave32 code and descriptors with gfx10+ RSRC1 bits are refused before
//!   running; unknown encodings are `UnknownInstruction` naming family and opcode.

// Lane loops index several 64-entry arrays (sources, results, addresses) by the lane
// number; iterator chains over four arrays would hide the per-lane EXEC test.
#![allow(clippy::needless_range_loop)]

pub mod aperture;
mod api;
mod arbiter;
mod cache_line;
mod coop;
pub mod decode;
mod disasm;
mod dispatch;
pub mod exec;
pub mod gws;
pub mod inst;
mod jit;
mod mix;
mod pool;
pub mod wave;

pub use api::{
    Dispatch, DispatchError, ExecConfig, GfxModel, GuestMemory, QueuePriority, Span, Timing,
};
pub use arbiter::waiting_workers;
pub use decode::{decode, DecodeError};
pub use dispatch::{panic_message, DispatchStats, MAX_COST_ENTRIES, MAX_DECODE_CACHE_BYTES};
pub use gws::Gws;
pub use hsasim_vtime::{Class, Mix, WaveCost, WaveCostTable, WorkgroupCost};
pub use inst::{Enc, Inst};

/// Runs every workgroup of `dispatch` to completion, or stops at the first error.
///
/// On `Ok`, all memory effects of the kernel are visible to the caller.
pub fn run_dispatch(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
) -> Result<(), DispatchError> {
    dispatch::run(dispatch, memory, config, false).map(|_| ())
}

/// [`run_dispatch`], returning counts of what ran (for benchmarks and traces).
pub fn run_dispatch_with_stats(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
) -> Result<DispatchStats, DispatchError> {
    dispatch::run(dispatch, memory, config, true)
}

/// [`run_dispatch`], returning its figures without the per-opcode counts (which
/// [`run_dispatch_with_stats`] gathers at some cost): what a caller under virtual time
/// ([`ExecConfig::timing`]) needs, [`DispatchStats::costs`] and [`DispatchStats::mix`]
/// (both empty without virtual time, when nothing is counted).
pub fn run_dispatch_timed(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
) -> Result<DispatchStats, DispatchError> {
    dispatch::run(dispatch, memory, config, false)
}

/// Runs a dispatch from a cooperative queue: every workgroup resident at once, `ds_gws_*`
/// on `gws`, the queue's Global Wave Sync unit (one per queue, kept across its dispatches).
/// A grid larger than the agent can hold at once is `InvalidDispatch`.
pub fn run_cooperative_dispatch(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
    gws: &Gws,
) -> Result<(), DispatchError> {
    coop::run(dispatch, memory, config, gws, false).map(|_| ())
}

/// [`run_cooperative_dispatch`], returning counts of what ran.
pub fn run_cooperative_dispatch_with_stats(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
    gws: &Gws,
) -> Result<DispatchStats, DispatchError> {
    coop::run(dispatch, memory, config, gws, true)
}

/// [`run_cooperative_dispatch`], returning its figures without the per-opcode counts (see
/// [`run_dispatch_timed`]).
pub fn run_cooperative_dispatch_timed(
    dispatch: &Dispatch,
    memory: &dyn GuestMemory,
    config: &ExecConfig,
    gws: &Gws,
) -> Result<DispatchStats, DispatchError> {
    coop::run(dispatch, memory, config, gws, false)
}
