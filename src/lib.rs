//! hipshim: a HIP runtime (`libamdhip64.so`) that owns its AQL queues and runs on any HSA
//! runtime — ROCr with a GPU, or the bundled software GPU hsasim.
//!
//! The one path of every operation: `api` (C ABI shells) → `runtime` (devices, streams,
//! memory, modules, launch) → `policy` (which queue serves a stream) → `hsa` (the loaded
//! HSA runtime's function table and resource wrappers).
//!
//! Beside it: `trace`, the recorder of the timeline and stats, sits above `hsa` (it reads
//! completion timestamps through it) and is called by `api`, `runtime` and `policy`; `hsa`
//! reports to it through `probe`, a leaf holding the recording flag, the clock, HSA call
//! counts and the sink the recorder installs. `config`, `error`, `probe`, `fork_guard` and
//! `logging` are leaves any module may use. No module uses one above it
//! (`tests/module_graph.rs` checks the layers and that there is no import circle).

pub mod api;
pub mod config;
pub mod error;
pub mod fork_guard;
pub mod hsa;
mod logging;
pub mod observed;
pub mod policy;
pub mod probe;
pub mod runtime;
pub mod trace;
