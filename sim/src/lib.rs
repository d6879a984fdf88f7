//! hsasim: a software GPU behind the HSA runtime C API.
//!
//! `libhsasim.so` exports the `hsa_*` / `hsa_amd_*` functions HIP runtimes use, with ROCr's
//! struct layouts, so a client cannot tell it from `libhsa-runtime64.so.1` except by the
//! agent names. The modules mirror the hardware:
//!
//! - [`system`]: the runtime instance (`hsa_init` .. `hsa_shut_down`), waits, and
//!   deterministic-mode pumping;
//! - [`agent`]: the CPU agent and the GPU agents (gfx942 / gfx90a) with their ISAs;
//! - [`memory`]: pools, allocations and the registry of device-accessible ranges;
//! - [`signal`]: `amd_signal_t` signals and the wake-up hub;
//! - [`queue`]: AQL queues and their packet processors;
//! - [`sdma`]: copy engines;
//! - [`loader`]: code-object readers, executables and symbols;
//! - [`api`]: the exported C shells;
//! - `hsasim_isa`: the GFX9 interpreter a kernel dispatch runs on.

pub mod agent;
pub mod api;
pub mod cabi;
pub mod config;
pub mod error;
pub mod loader;
mod logging;
pub mod memory;
pub mod queue;
pub mod sdma;
pub mod signal;
pub mod system;
