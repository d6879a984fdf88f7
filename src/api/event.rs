//! Events.
#![allow(non_snake_case)]

include!(concat!(env!("OUT_DIR"), "/symver_event.rs"));
