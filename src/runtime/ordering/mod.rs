//! The ordering engine under streams: in-order sequences of work on the queue the policy
//! assigned, and the ordering between them. It builds on the HSA layer and the policy, not on
//! `Device` (which holds each device's `DeviceStreams`); `stream/` turns `hipStream_t`
//! handles into these streams above both.
//!
//! ## Completion tracking
//! Kernels and the barrier packets that make a stream wait are *counted*: their completion
//! signal is the stream's `pending` signal, incremented at submit and decremented by the packet
//! processor, so "everything done" is `pending == 0` and no signal is needed per launch. The
//! launch path takes only this stream's lock, allocates nothing and makes no system call.
//!
//! A batch of prebuilt packets (an executable graph's kernel nodes, `Stream::submit_batch`)
//! is one operation with one counted packet, its last on the stream's queue: every packet
//! carries the barrier bit, and that last packet also waits for the batch's packets on other
//! queues, so it completes after the whole batch. The memory the batch's packets read and the
//! signals they name are held like a marker's signal, until that packet has completed.
//!
//! Work that is not a packet on the stream's queue (an SDMA copy, a host callback or fill) ends
//! in a *gate*: a pooled signal the work decrements when done. The next packet of the stream
//! first publishes a barrier-AND on the gate, and the next copy or host task depends on a
//! marker that covers it, so the stream stays in order.
//!
//! Whenever something else must wait for "this stream so far" (another stream, a copy, an
//! event), the stream publishes a *marker*: a barrier-AND packet (the barrier bit makes it wait
//! for all earlier packets of its queue) whose completion signal is a pooled signal. Pooled
//! signals are recycled, never created per use; every packet or copy that names one is paired
//! with a clone kept in `held` until the stream knows the packet is complete (a later counted
//! packet completed), so a signal is never reused while the device may still touch it.
//!
//! ## Cross-stream ordering
//! Always on the device: a barrier-AND packet on the waiting stream's queue whose dependency
//! is the other stream's marker (or an event's). The host never waits for another stream.
//!
//! ## The null stream (legacy semantics)
//! An operation on the null stream first waits for every *blocking* stream of its device
//! (created without `hipStreamNonBlocking`, including per-thread streams) that has work since
//! the null stream last waited for it; an operation on a blocking stream first waits for the
//! null stream's work since it last did. Each stream counts its operations (`ops`), so the
//! common case costs one atomic load and no lock of the other stream.
//!
//! ## Faults
//! A failed packet stops its queue for good, and a queue whose barrier waits for a packet that
//! can never complete is stuck from that barrier on; `hsa/queue.rs` answers, through any chain
//! of waits, whether a given packet can still complete. A stream has *lost work* when one of
//! its counted packets, or the marker its out-of-queue work waits for, can never complete.
//! Every wait checks between its blocked slices whether what it waits for is lost; the first
//! that finds a fault calls [`contain`], which goes through every stream: each stream that lost
//! work gives up its queue (the policy retires it; its next operation gets a new one) and
//! *owes* the fault twice, to its own next synchronize, query or host-waiting copy and to the
//! next device-wide call; a stream idle on a failed queue just leaves it. So what each stream
//! reports does not depend on which call happened to look first. Markers are not work: an
//! event recorded behind a fault reports it itself, for as long as the record stands. A host
//! task that panics, or is dropped without running, opens its gate anyway and leaves its
//! stream `hipErrorUnknown` to report.
//!
//! ## Files
//! `engine.rs` is the ordering engine above (streams, dependencies, markers, gates, legacy
//! ordering, faults); `host_task.rs` runs host tasks on the callback thread; `stream_list.rs` is
//! the list of a device's streams that a stream leaves in O(1).

mod engine;
mod host_task;
mod stream_list;

pub use engine::{
    contain, every_device, watch_devices, Dep, DepList, DeviceStreams, Keepalive, Operation,
    OutOfQueue, Stream, StreamKind, StreamRef, SyncPolicy, NON_BLOCKING, PER_THREAD_HANDLE,
};
pub use host_task::{enqueue_host_task, refuse_wait_in_host_task, stream_identity, HostWork, Wait};
