//! hipshim: a HIP runtime (`libamdhip64.so`) that owns its AQL queues and runs on any HSA
//! runtime — ROCr with a GPU, or the bundled software GPU hsasim.
//!
//! The one path of every operation: `api` (C ABI shells) → `runtime` (devices, streams,
//! memory, modules, launch) → `policy` (which queue serves a stream) → `hsa` (the loaded
//! HSA runtime's function table and resource wrappers).

pub mod api;
pub mod config;
pub mod error;
pub mod fork_guard;
pub mod hsa;
mod logging;
pub mod policy;
pub mod probe;
pub mod runtime;
pub mod trace;
