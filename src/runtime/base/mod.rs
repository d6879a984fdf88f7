//! The leaves of the runtime, which know no device: the handle tables behind every
//! `hip*_t` (`handles`), the kernel-argument layout and launch limits (`kernarg`), what
//! differs between the ROCm ABIs a program may be built for (`compat`), and which kernel
//! faults are failed device-side assertions (`device_assert`).

pub mod callbacks;
pub mod compat;
pub mod device_assert;
pub mod handles;
pub mod kernarg;
