//! Streams, stream callbacks and per-thread-stream entry points.
#![allow(non_snake_case)]

include!(concat!(env!("OUT_DIR"), "/symver_stream.rs"));
