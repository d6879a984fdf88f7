//! The exported HSA C ABI. Each shell catches panics, converts arguments and calls a typed
//! function returning `HsaResult`; no simulator logic lives here.

pub mod copy;
pub mod executable;
pub mod extension;
pub mod ipc;
pub mod memory;
pub mod queue;
pub mod region;
mod shell;
pub mod signal;
pub mod svm;
pub mod system;
pub mod unsupported;
pub mod vmem;
