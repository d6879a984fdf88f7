//! hsasim's model of the GPU's hardware queue scheduler (see [`model`]) and the places its
//! state lives (see [`device`]): in one process, or in shared memory owned by a device service
//! that several processes attach to (`hipshim device start`, `HSASIM_DEVICE_SERVICE`), with
//! that device's memory, IPC signals (see [`memory`]) and its queues' doorbells, with each
//! queue's descriptor ([`Hqd`]: where its ring and indices are) in the runlist.
//!
//! Used by hsasim's packet processors (a packet starts only while its queue holds a slot) and
//! by `hipshim device` / `hipshim bench processes`. No HSA symbols, so the CLI links it
//! without becoming an HSA runtime.

pub mod clock;
pub mod device;
pub mod memory;
pub mod model;
pub mod timeline;

pub use clock::now_ns;
pub use device::{process_alive, CuGrant, CuStatus, Device};
pub use memory::{Allocation, MemCounters, MemError, MemTable, Use};
pub use model::{
    ring_has_work, Counters, Event, Hqd, Ledger, Params, QueueEntry, QueueState, Table,
    VirtualRunlist,
};
pub use timeline::{Mapped, Member, Start, Timeline, TimelineCounters};

/// One event as a JSON line (the device service's `--log` file, read by
/// `hipshim trace merge --sched`). Times are CLOCK_MONOTONIC ns, the clock of hipshim traces.
pub fn event_json(event: &Event, params: &Params) -> String {
    match *event {
        Event::Map {
            at_ns,
            pid,
            queue_id,
            slot,
        }
        | Event::Unmap {
            at_ns,
            pid,
            queue_id,
            slot,
        } => format!(
            "{{\"ev\":\"{}\",\"ts_ns\":{at_ns},\"pid\":{pid},\"queue_id\":{queue_id},\"slot\":{slot},\"pipe\":{}}}",
            if matches!(event, Event::Map { .. }) { "map" } else { "unmap" },
            params.pipe_of(slot)
        ),
        Event::RunlistUpdate {
            at_ns,
            oversubscribed,
            queues,
            processes,
        } => format!(
            "{{\"ev\":\"runlist\",\"ts_ns\":{at_ns},\"oversubscribed\":{oversubscribed},\"queues\":{queues},\"processes\":{processes}}}"
        ),
        Event::TimeSlice { at_ns } => format!("{{\"ev\":\"slice\",\"ts_ns\":{at_ns}}}"),
    }
}

#[cfg(test)]
mod tests;
