//! The HIP API breadth programs in `c_tests/api/` (memory, device, errors, symbols), run on
//! hipshim over hsasim for gfx942 and gfx90a, and the module tests in `c_tests/api/modules/`,
//! which load a code object and an offload bundle the test builds from
//! `c_tests/api/modules/kernels.hip` with clang-19 and passes in the environment.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::ctest::{build, c_tests_dir, CLANG};
use common::Fnv;

c_tests! {
    dir "api";
    memory_gfx942 => "memory" on "gfx942";
    memory_gfx90a => "memory" on "gfx90a";
    device_gfx942 => "device" on "gfx942";
    device_gfx90a => "device" on "gfx90a";
    symbols_gfx942 => "symbols" on "gfx942";
    symbols_gfx90a => "symbols" on "gfx90a";
}
