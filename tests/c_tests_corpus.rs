//! The interpreter corpus (`c_tests/corpus/`): ordinary HIP programs built with a stock
//! clang-19 against `hip_headers/` at -O3, for gfx942 and gfx90a, run on hipshim over
//! hsasim, each checking its own results against a host computation.
//!
//! `mfma` is gfx942-only (its builtins use CDNA3 shapes); everything else runs on both.

mod common;

c_tests! {
    dir "corpus";
    saxpy_gfx942 => "saxpy" on "gfx942";
    saxpy_gfx90a => "saxpy" on "gfx90a";
    grid_2d_3d_gfx942 => "grid_2d_3d" on "gfx942";
    grid_2d_3d_gfx90a => "grid_2d_3d" on "gfx90a";
    x_only_ids_gfx942 => "x_only_ids" on "gfx942";
    x_only_ids_gfx90a => "x_only_ids" on "gfx90a";
    matmul_tiled_gfx942 => "matmul_tiled" on "gfx942";
    matmul_tiled_gfx90a => "matmul_tiled" on "gfx90a";
    block_reduce_gfx942 => "block_reduce" on "gfx942";
    block_reduce_gfx90a => "block_reduce" on "gfx90a";
    warp_reduce_gfx942 => "warp_reduce" on "gfx942";
    warp_reduce_gfx90a => "warp_reduce" on "gfx90a";
    atomics_gfx942 => "atomics" on "gfx942";
    atomics_gfx90a => "atomics" on "gfx90a";
    lds_histogram_gfx942 => "lds_histogram" on "gfx942";
    lds_histogram_gfx90a => "lds_histogram" on "gfx90a";
    dynamic_shared_gfx942 => "dynamic_shared" on "gfx942";
    dynamic_shared_gfx90a => "dynamic_shared" on "gfx90a";
    templates_gfx942 => "templates" on "gfx942";
    templates_gfx90a => "templates" on "gfx90a";
    noinline_stack_gfx942 => "noinline_stack" on "gfx942";
    noinline_stack_gfx90a => "noinline_stack" on "gfx90a";
    math_lib_gfx942 => "math_lib" on "gfx942";
    math_lib_gfx90a => "math_lib" on "gfx90a";
    half_precision_gfx942 => "half_precision" on "gfx942";
    half_precision_gfx90a => "half_precision" on "gfx90a";
    divergence_gfx942 => "divergence" on "gfx942";
    divergence_gfx90a => "divergence" on "gfx90a";
    int_divmod_gfx942 => "int_divmod" on "gfx942";
    int_divmod_gfx90a => "int_divmod" on "gfx90a";
    cross_lane_gfx942 => "cross_lane" on "gfx942";
    cross_lane_gfx90a => "cross_lane" on "gfx90a";
    mfma_gfx942 => "mfma" on "gfx942";
    rounding_modes_gfx942 => "rounding_modes" on "gfx942";
    rounding_modes_gfx90a => "rounding_modes" on "gfx90a";
    packed_int_dot_gfx942 => "packed_int_dot" on "gfx942";
    packed_int_dot_gfx90a => "packed_int_dot" on "gfx90a";
}
