//! Bad code images (`c_tests/modules_bad/`): images without a length whose header claims
//! more bytes than exist, and malformed `hipModuleLaunchKernel` argument buffers, run on
//! hipshim over hsasim for gfx942 and gfx90a.

mod common;

c_tests! {
    dir "modules_bad";
    truncated_images_gfx942 => "truncated_images" on "gfx942";
    truncated_images_gfx90a => "truncated_images" on "gfx90a";
}
