//! Streams as the program names them: `hipStream_t` values turned into the streams of the
//! ordering engine (`ordering/`, which explains how streams order their work), for created,
//! null and per-thread streams, with their CU masks. Everything a caller needs of streams is
//! re-exported here, so `runtime::stream` is the one place a stream call leads to. Events
//! (`event`, and `ipc_event` for those shared between processes) are markers recorded into
//! streams.

pub mod attributes;
pub mod event;
mod handles;
pub mod ipc_event;
pub mod value;

pub use crate::runtime::ordering::{
    contain, enqueue_host_task, refuse_wait_in_host_task, stream_identity, Dep, DepList,
    DeviceStreams, HostWork, Operation, OutOfQueue, Stream, StreamKind, StreamRef, SyncPolicy,
    Wait, NON_BLOCKING, PER_THREAD_HANDLE,
};
pub use handles::{
    check_null_stream_use, create, cu_mask_of, destroy, destroy_created_streams, is_live_stream,
    lookup, query, removals, resolve, spt_stream, synchronize, ACTIVE_CAPTURES, LEGACY_HANDLE,
    NULL_STREAM_DURING_CAPTURE, ON_CAPTURING_STREAM_DESTROYED,
};
