//! Streams, events, stream-ordered memory and queue policies: the HIP programs in
//! `c_tests/streams/`, built with clang-19 against `hip_headers/` and run on hsasim for each
//! target (see `tests/common/ctest.rs`), plus the policy experiment run under several
//! `HIPSHIM_QUEUE_POLICY` values.

mod common;

c_tests! {
    dir "streams";
    streams_gfx942 => "streams" on "gfx942";
    streams_gfx90a => "streams" on "gfx90a";
    events_gfx942 => "events" on "gfx942";
    events_gfx90a => "events" on "gfx90a";
    memory_async_gfx942 => "memory_async" on "gfx942";
    memory_async_gfx90a => "memory_async" on "gfx90a";
}
