//! Stream callbacks and host functions (`c_tests/callbacks/`): what a callback may call, and
//! the waits for itself it is refused (`hipErrorNotPermitted`), run on hipshim over hsasim for
//! gfx942 and gfx90a.

mod common;

c_tests! {
    dir "callbacks";
    wait_in_callback_gfx942 => "wait_in_callback" on "gfx942";
    wait_in_callback_gfx90a => "wait_in_callback" on "gfx90a";
}
