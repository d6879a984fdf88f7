//! Events (`runtime/event.rs`).

use super::convert::{Out, PerThread, Stream};
use super::declare::hip_api;
use super::types::{hipError_t, hipEvent_t, hipStream_t};
use crate::runtime::event::{self, Event};
use std::sync::Arc;

hip_api! {
    fn hipEventCreate(event: *mut hipEvent_t => Out<hipEvent_t>) -> hipError_t {
        event.write(event::create(event::DEFAULT)?)
    }

    fn hipEventCreateWithFlags(event: *mut hipEvent_t => Out<hipEvent_t>, flags: u32) -> hipError_t {
        event.write(event::create(flags)?)
    }

    fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
        event::destroy(event)
    }

    fn hipEventRecord(event: hipEvent_t => Arc<Event>, stream: hipStream_t => Stream) -> hipError_t {
        event::record(&event, stream.device, &stream.stream)
    }

    fn hipEventRecord_spt(
        event: hipEvent_t => Arc<Event>,
        stream: hipStream_t => PerThread<Stream>,
    ) -> hipError_t {
        event::record(&event, stream.0.device, &stream.0.stream)
    }

    fn hipEventSynchronize(event: hipEvent_t => Arc<Event>) -> hipError_t {
        event::synchronize(&event)
    }

    fn hipEventQuery(event: hipEvent_t => Arc<Event>) -> hipError_t {
        event::query(&event)
    }

    fn hipEventElapsedTime(
        ms: *mut f32 => Out<f32>,
        start: hipEvent_t => Arc<Event>,
        stop: hipEvent_t => Arc<Event>,
    ) -> hipError_t {
        ms.write(event::elapsed_ms(&start, &stop)?)
    }

    fn hipStreamWaitEvent(
        stream: hipStream_t => Stream,
        event: hipEvent_t => Arc<Event>,
        flags: u32,
    ) -> hipError_t {
        event::stream_wait(stream.device, &stream.stream, &event, flags)
    }

    fn hipStreamWaitEvent_spt(
        stream: hipStream_t => PerThread<Stream>,
        event: hipEvent_t => Arc<Event>,
        flags: u32,
    ) -> hipError_t {
        event::stream_wait(stream.0.device, &stream.0.stream, &event, flags)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_event.rs"));
