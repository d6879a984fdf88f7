//! Bad ranges: the HIP programs in `c_tests/bounds/`, run on hipshim over hsasim. Copies and
//! fills that start inside an allocation and leave it are refused without touching a byte,
//! huge lengths fail cleanly, and hipHostRegister of unmapped memory fails.

mod common;

c_tests! {
    dir "bounds";
    copies_gfx942 => "copies" on "gfx942";
    register_gfx942 => "register" on "gfx942";
}
