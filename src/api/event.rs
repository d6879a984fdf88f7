//! Events (`runtime/stream/event.rs`).

use super::convert::{Out, PerThread, Stream};
use super::declare::hip_api;
use super::types::{hipError_t, hipEvent_t, hipStream_t};
use crate::error::{HipError, HipResult};
use crate::runtime::graph::{EventRef, NodeParams};
use crate::runtime::stream::event::{self, Event};
use std::sync::Arc;

/// `hipEventRecord`: on a capturing stream, the event takes the capture's place instead.
fn record(event: &Event, stream: &Stream) -> HipResult {
    if crate::runtime::graph::capture::record(event, &stream.stream)? {
        return Ok(());
    }
    event::record(event, stream.device, &stream.stream)
}

/// `hipStreamWaitEvent`: an event recorded in a capture forks or joins it.
fn stream_wait(stream: &Stream, event: &Event, flags: u32) -> HipResult {
    if crate::runtime::graph::capture::wait(&stream.stream, event)? {
        return Ok(());
    }
    event::stream_wait(stream.device, &stream.stream, event, flags)
}

/// `hipEventRecordWithFlags` flags.
const RECORD_DEFAULT: u32 = 0;
const RECORD_EXTERNAL: u32 = 1;

hip_api! {
    fn hipEventCreate(event: *mut hipEvent_t => Out<hipEvent_t>) -> hipError_t {
        crate::runtime::runtime()?;
        event.write(event::create(event::DEFAULT)?)
    }

    fn hipEventCreateWithFlags(event: *mut hipEvent_t => Out<hipEvent_t>, flags: u32) -> hipError_t {
        crate::runtime::runtime()?;
        event.write(event::create(flags)?)
    }

    fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
        event::destroy(event)
    }

    fn hipEventRecord(event: hipEvent_t => Arc<Event>, stream: hipStream_t => Stream) -> hipError_t {
        record(&event, &stream)
    }
    alias hipEventRecord_spt = hipEventRecord with stream: PerThread;

    /// `hipEventRecordExternal` on a capturing stream records the event as a node of the
    /// graph (an event record node), as CUDA's external record does; otherwise, and with
    /// `hipEventRecordDefault`, it is `hipEventRecord`.
    fn hipEventRecordWithFlags(event: hipEvent_t, stream: hipStream_t => Stream, flags: u32) -> hipError_t {
        let recorded = event::lookup(event)?;
        match flags {
            RECORD_DEFAULT => record(&recorded, &stream),
            RECORD_EXTERNAL => {
                let node = || Ok(NodeParams::EventRecord(EventRef::new(event)?));
                if crate::runtime::graph::capture::add(&stream.stream, node)? {
                    return Ok(());
                }
                record(&recorded, &stream)
            }
            _ => {
                tracing::error!(flags, "hipEventRecordWithFlags: unknown flags (0: default, 1: external)");
                Err(HipError::INVALID_VALUE)
            }
        }
    }

    fn hipEventSynchronize(event: hipEvent_t => Arc<Event>) -> hipError_t {
        event::synchronize(&event)
    }

    fn hipEventQuery(event: hipEvent_t => Arc<Event>) -> hipError_t {
        crate::runtime::graph::capture::refuse_unsafe_call_from_rocm7("hipEventQuery")?;
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
        stream_wait(&stream, &event, flags)
    }
    alias hipStreamWaitEvent_spt = hipStreamWaitEvent with stream: PerThread;

}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_event.rs"));
