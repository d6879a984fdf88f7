//! Stream-ordered (asynchronous) copies and fills.
#![allow(non_snake_case)]

include!(concat!(env!("OUT_DIR"), "/symver_memory_async.rs"));
