//! hsasim: a software GPU behind the HSA runtime C API.
//!
//! `libhsasim.so` exports the `hsa_*` / `hsa_amd_*` functions HIP runtimes use, with ROCr's
//! struct layouts, so a client cannot tell it from `libhsa-runtime64.so.1` except by the
//! agent names. The modules mirror the hardware (system and agents, memory, signals, queues
//! and their packet processors, copy engines, the loader) and `hsasim_isa`, the GFX9
//! interpreter a kernel dispatch runs on.
//!
//! ## Layers
//! Top first. A module uses modules of the layers below its own only, never one of its own
//! layer or above; `tests/module_layers.rs` reads this list and checks every import of
//! `src/` against it. Where a lower part must reach something above it, the part above
//! installs a hook at initialisation (the memory registry's interrupt, the SIGSEGV
//! handler's lookup, shared signals) or hands a context down (queues, virtual and IPC memory).
//! Start reading at [`system`], then follow a packet from [`api::queue`] into [`queue`].
//!
//! 1. `api`: declares the shells (`api/mod.rs`); a module under `api/` that this list does
//!    not name belongs here, above every shell (a check over all of them, say);
//! 2. `api::copy`, `api::executable`, `api::ipc`, `api::memory`, `api::queue`, `api::region`,
//!    `api::signal`, `api::svm`, `api::unsupported`, `api::vmem`: the exported C shells, one
//!    file per area;
//! 3. `api::system`: `hsa_init`, system, agent and ISA queries (reports the extensions that
//!    `api::extension` serves);
//! 4. `api::extension`: the AMD loader extension's table;
//! 5. `api::shell`, `cabi`: what every shell shares: the panic guard, errors reported once,
//!    the symbol version of macro-made exports; writing results through C out-pointers;
//! 6. `system`: the runtime instance ([`system::Runtime`], `hsa_init` .. `hsa_shut_down`):
//!    owns every part below, waits and deterministic-mode pumping, async handler service;
//!    installs the hooks the lower layers call through;
//! 7. `svm`, `vmem`, `ipc`: SVM attribute ranges, virtual memory (reservations, physical
//!    allocations, mappings), memory shared with other processes: each on a
//!    [`platform::Platform`];
//! 8. `platform`: the context those take: configuration, agents, memory registry, device
//!    service memory;
//! 9. `queue`: AQL queues and their packet processors, on a [`queue::QueueContext`];
//! 10. `loader`: code-object readers, executables and symbols;
//! 11. `agent`: the CPU agent and the GPU agents (gfx942 / gfx90a), their pools, ISAs and copy
//!     engines;
//! 12. `sdma`: copy engines;
//! 13. `async_handler`, `ipc_signal`: `hsa_amd_signal_async_handler`'s handlers; a device
//!     service's IPC signals (installed into `signal` as its shared signals);
//! 14. `virtual_time`: the virtual clock (`HSASIM_TIME=virtual`): entries committed in
//!     submission order onto the device model, the host's clock;
//! 15. `signal`: `amd_signal_t` signals, their registry and the wake-up hub;
//! 16. `handles`: handle maps and slabs;
//! 17. `memory`: pools, allocations and the registry of device-accessible ranges (what the
//!     interpreter translates with);
//! 18. `capture`, `cpu_touch`, `device_memory`, `sched`, `virtual_slots`, `strict`,
//!     `idle_spin`, `testing`, `logging`, `hide`, `clock`, `host_map`: leaves: packet capture
//!     (with its kernel records), the SIGSEGV report of CPU touches of device memory, a device
//!     service's device memory, the hardware queue scheduler model on the host's clock and on
//!     the virtual time line, strict mode's AQL rules, a device thread's idle spin, test
//!     hooks, logging, hidden exports, the system timestamp, host mappings;
//! 19. `config`, `copy_shape`: every knob, read once at `hsa_init`; what one copy job moves
//!     (the engines run it, capture records it);
//! 20. `fail`: `HSASIM_FAIL`, HSA calls failed on purpose (the shells ask it);
//! 21. `error`: `HsaError` and the status texts.
//!
//! ## Standing in for ROCr
//! The library's soname is `libhsa-runtime64.so.1` and every `hsa_*` export carries ROCr's
//! version node `ROCR_1` (see `build.rs`), so ROCr's own clients bind to it: put a link
//! `libhsa-runtime64.so.1 -> libhsasim.so` in a directory on `LD_LIBRARY_PATH` and Debian's
//! `rocminfo` or AMD's `libamdhip64.so.5` run on the simulated GPUs. hipshim itself loads
//! the library by path, which the soname does not affect.
//!
//! ## Bad packets, faults and runaway kernels
//! Nothing a client submits can take the process down. A packet the processor cannot run
//! (an unknown type, a `kernel_object` that is not a kernel descriptor the loader placed,
//! impossible workgroup or segment sizes) fails its queue with
//! `HSA_STATUS_ERROR_INVALID_PACKET_FORMAT`, one naming a signal that does not exist with
//! `HSA_STATUS_ERROR_INVALID_SIGNAL`, a kernel access outside every allocation (a bad
//! kernarg address included) with `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION`; the error
//! callback is told, as on ROCr. `HSASIM_MAX_WAVE_INSTRUCTIONS` and
//! `HSASIM_DISPATCH_TIMEOUT` stop a dispatch that would never end (see [`config`]). A copy
//! whose memory is gone by the time its engine runs it is not done, is reported on stderr,
//! and still completes its signal. A panic inside a packet processor, a copy engine or
//! the interpreter fails that packet (`HSA_STATUS_ERROR`) or copy the same way.
//!
//! ## Strict mode: behaving like hardware
//! `HSASIM_STRICT=1` (on for everything cargo runs in this repository) turns what a lenient
//! simulator forgives into named errors, so a runtime developed here does not hang or compute
//! garbage on a real GPU: AQL rules a command processor checks or depends on ([`strict`],
//! including a header published before its body and a single-producer doorbell that goes
//! back), locked host memory reached only through an agent address of its own ([`memory`]),
//! and, unless `HSASIM_LARGE_BAR=1`, device memory the CPU cannot touch ([`cpu_touch`]
//! names the touch). Signals get KFD's interrupt events as ROCr hands them out, 4096 per
//! process, in either mode ([`signal`]).
//!
//! ## What is not modelled
//! `api::unsupported` lists the exported functions that return `HSA_STATUS_ERROR` and log
//! their name once (images and samplers, graphics interop, the HSA 1.0
//! code-object API, soft queues, ...). The only extension table is the AMD loader's.

pub mod agent;
pub mod api;
mod async_handler;
pub mod cabi;
pub mod capture;
pub mod clock;
pub mod config;
pub mod copy_shape;
pub mod cpu_touch;
pub mod device_memory;
pub mod error;
pub mod fail;
mod handles;
pub mod hide;
pub mod host_map;
mod idle_spin;
pub mod ipc;
pub mod ipc_signal;
pub mod loader;
mod logging;
pub mod memory;
pub mod platform;
pub mod queue;
pub mod sched;
pub mod sdma;
pub mod signal;
pub mod strict;
pub mod svm;
pub mod system;
#[doc(hidden)]
pub mod testing;
pub mod virtual_slots;
pub mod virtual_time;
pub mod vmem;
