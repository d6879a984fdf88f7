//! Kernels: the code images they come from, loaded per device (`module`: fat binaries,
//! `hipModule_t`, `hipFunction_t`, device symbols; `library`: `hipLibrary_t` over a module,
//! `hipKernel_t`), how many of their work-groups fit (`occupancy`), and the checks and queue
//! of cooperative launches (`cooperative`). Built on memory and copies (symbol copies, device
//! globals); the launch path builds on it.

pub mod cooperative;
pub mod library;
pub mod module;
pub mod occupancy;
