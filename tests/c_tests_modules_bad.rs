//! Bad module input (`c_tests/modules_bad/`): images without a length whose header claims
//! more bytes than exist, files that are not code objects (or not files), and argument
//! buffers of the wrong size for `hipModuleLaunchKernel`, and an unload racing another
//! thread's launches, run on hipshim over hsasim for gfx942 and gfx90a.

mod common;

c_tests! {
    dir "modules_bad";
    truncated_images_gfx942 => "truncated_images" on "gfx942";
    truncated_images_gfx90a => "truncated_images" on "gfx90a";
    launch_buffer_gfx942 => "launch_buffer" on "gfx942";
    launch_buffer_gfx90a => "launch_buffer" on "gfx90a";
    module_files_gfx942 => "module_files" on "gfx942";
    module_files_gfx90a => "module_files" on "gfx90a";
    unload_while_launching_gfx942 => "unload_while_launching" on "gfx942";
    unload_while_launching_gfx90a => "unload_while_launching" on "gfx90a";
}
