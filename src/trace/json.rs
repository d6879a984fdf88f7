//! The timeline file: Chrome trace-event JSON (the format chrome://tracing and Perfetto UI
//! open), written and read back with `serde_json`.
//!
//! Layout:
//! - process 1 "host threads": one track per host thread; API calls are "X" slices (cat `api`),
//!   signal waits nested inside them (cat `wait`), queue creation and stream assignment are
//!   instant events (cat `policy`);
//! - process 2 "HSA queues": one track per queue; each packet is an "X" slice (cat `packet`)
//!   from the packet processor's start to its end timestamp, named after its kernel;
//! - process 3 "copy engines": one track per copy engine, copies as "X" slices (cat `copy`);
//! - flow arrows ("s" on the API slice at the moment of submission, "f" with `bp: "e"` on the
//!   packet or copy slice) from each API call to the packets and copies it submitted.
//!
//! Everything [`summarize`](super::summarize) needs is in the slices' `args` (exact integer
//! nanoseconds where the drawn slice may differ, e.g. for incomplete packets), plus a top-level
//! `hipshim` object with the HSA call counts and the clock alignment; viewers ignore it.
//! Slices that would overlap on one track (which viewers cannot draw) move to an extra lane
//! ("queue 3 (lane 1)").
//!
//! The writer streams: each record is serialized (`serde_json`) as it is made, from borrowed
//! fields, so writing at exit builds no second copy of the events. The reader takes any valid
//! JSON (a file re-saved by a viewer, pretty-printed, keys in any order).

use super::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

pub const HOST_PID: u64 = 1;
pub const QUEUE_PID: u64 = 2;
pub const COPY_PID: u64 = 3;
/// The hardware queue slots on the virtual time line ([`TraceEvent::HqdSlot`]).
pub const SLOTS_PID: u64 = 4;
/// Counters of the compute units in use on the virtual time line ([`TraceEvent::CusInUse`]).
pub const CU_PID: u64 = 5;

/// Facts about the run the writer adds to the file.
#[derive(Clone, Debug, Default)]
pub struct TraceInfo {
    /// The process id of the traced program (shown in the host process name).
    pub pid: u32,
    /// When the trace was written (ns, same clock): packets and copies still running are drawn
    /// up to here.
    pub end_ns: u64,
    /// How device timestamps were aligned with the host clock, for the reader of the file.
    pub clock: String,
    /// The `CLOCK_MONOTONIC` ns every time in the file counts from (recording's start): the
    /// clock is system-wide, so traces of several processes merge onto one timeline with it
    /// (`hipshim trace merge`). 0 in files written before it was recorded.
    pub origin_ns: u64,
}

#[derive(Debug)]
pub enum TraceError {
    Io(io::Error),
    Json(serde_json::Error),
    /// Valid JSON that is not a trace hipshim wrote (message says what is wrong).
    Format(String),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "cannot read the trace: {e}"),
            TraceError::Json(e) => write!(f, "the trace is not valid JSON: {e}"),
            TraceError::Format(why) => write!(f, "not a hipshim trace: {why}"),
        }
    }
}

impl std::error::Error for TraceError {}

/// Where one device-side slice is drawn.
struct Drawn {
    tid: u64,
    start: u64,
    end: u64,
}

/// The device tracks, numbered from 1 in the order they are drawn: one per queue or copy
/// engine, and one more for each extra lane its slices need.
#[derive(Default)]
struct Tracks {
    /// (pid, tid, name) of each, in tid order.
    names: Vec<(u64, u64, String)>,
}

impl Tracks {
    /// Draws the items of the track `track`, in the order they ran; `times` gives each one's
    /// (submit, start, end).
    fn draw<'e, T>(
        &mut self,
        pid: u64,
        track: &str,
        items: &[&'e T],
        times: impl Fn(&T) -> (u64, Option<u64>, Option<u64>),
        end_ns: u64,
    ) -> Vec<(&'e T, Drawn)> {
        let times: Vec<_> = items.iter().map(|&item| times(item)).collect();
        let spans = spans(&times, end_ns);
        // `lanes` opens lane n only after lane n - 1, so each new lane is the next tid.
        let first_tid = self.names.len() as u64 + 1;
        items
            .iter()
            .zip(&spans)
            .zip(lanes(&spans))
            .map(|((&item, &(start, end)), lane)| {
                let tid = first_tid + lane as u64;
                if tid > self.names.len() as u64 {
                    let name = match lane {
                        0 => track.to_string(),
                        _ => format!("{track} (lane {lane})"),
                    };
                    self.names.push((pid, tid, name));
                }
                (item, Drawn { tid, start, end })
            })
            .collect()
    }
}

/// Assigns slices of one track to lanes so that none overlap; returns each input's lane, in
/// order. Inputs must be sorted in the order they ran.
fn lanes(spans: &[(u64, u64)]) -> Vec<usize> {
    let mut ends: Vec<u64> = Vec::new();
    spans
        .iter()
        .map(|&(start, end)| {
            let lane = match ends.iter().position(|&e| e <= start) {
                Some(l) => l,
                None => {
                    ends.push(0);
                    ends.len() - 1
                }
            };
            ends[lane] = end;
            lane
        })
        .collect()
}

/// Drawn spans of a track's items: `(submit, start, end)` with `None` times for incomplete
/// items. The first incomplete item is drawn up to `end_ns`, later ones as zero-length slices
/// at `end_ns` (they had not started).
fn spans(items: &[(u64, Option<u64>, Option<u64>)], end_ns: u64) -> Vec<(u64, u64)> {
    let mut last_end = 0;
    let mut open = false;
    items
        .iter()
        .map(|&(submit, start, end)| match (start, end) {
            (Some(s), Some(e)) => {
                last_end = last_end.max(e);
                (s, e.max(s))
            }
            _ if !open => {
                open = true;
                let s = submit.max(last_end).min(end_ns);
                (s, end_ns)
            }
            _ => (end_ns, end_ns),
        })
        .collect()
}

/// A time in the file: microseconds, the format's unit, with the nanoseconds as decimals.
#[derive(Clone, Copy)]
struct Micros(u64);

impl Serialize for Micros {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The double nearest to the exact decimal (ns / 1000), printed in its shortest form:
        // it reads back as that decimal written out would.
        s.serialize_f64(self.0 as f64 / 1000.0)
    }
}

/// A signal handle, as a hex string (viewers would print a 64-bit number inexactly).
#[derive(Clone, Copy)]
struct Hex(u64);

impl Serialize for Hex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:#x}", self.0))
    }
}

/// Signal handles as an array of [`Hex`].
struct HexList<'a>(&'a [u64]);

impl Serialize for HexList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|&v| Hex(v)))
    }
}

/// One record of `traceEvents`. The fields are those of the trace-event format, in the order
/// the file has always had them; a record leaves out the ones its phase (`ph`) does not use.
#[derive(Serialize)]
struct Record<'a, A: Serialize> {
    ph: &'static str,
    /// Instants: their scope ("t": the thread's track).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    /// Flow ends: bind to the enclosing slice ("e").
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    name: &'a str,
    /// Flows: the arrow's start and end share it.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    pid: u64,
    tid: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<Micros>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<Micros>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<A>,
}

impl<'a, A: Serialize> Record<'a, A> {
    /// Names or orders a process (`tid` 0) or a track.
    fn metadata(name: &'a str, pid: u64, tid: u64, args: A) -> Self {
        Record {
            ph: "M",
            s: None,
            bp: None,
            cat: None,
            name,
            id: None,
            pid,
            tid,
            ts: None,
            dur: None,
            args: Some(args),
        }
    }

    /// A slice ("X") over `span`: (start, end) in ns.
    fn slice(
        cat: &'static str,
        name: &'a str,
        pid: u64,
        tid: u64,
        span: (u64, u64),
        args: A,
    ) -> Self {
        Record {
            ph: "X",
            cat: Some(cat),
            ts: Some(Micros(span.0)),
            dur: Some(Micros(span.1 - span.0)),
            ..Record::metadata(name, pid, tid, args)
        }
    }

    /// A counter track's value from `ts_ns` on ("C": the track is the process's `name`).
    fn counter(cat: &'static str, name: &'a str, pid: u64, ts_ns: u64, args: A) -> Self {
        Record {
            ph: "C",
            cat: Some(cat),
            ts: Some(Micros(ts_ns)),
            ..Record::metadata(name, pid, 0, args)
        }
    }

    /// A host thread's instant event.
    fn instant(cat: &'static str, name: &'a str, tid: u64, ts_ns: u64, args: A) -> Self {
        Record {
            ph: "i",
            s: Some("t"),
            cat: Some(cat),
            ts: Some(Micros(ts_ns)),
            ..Record::metadata(name, HOST_PID, tid, args)
        }
    }
}

impl Record<'static, ()> {
    /// One end of a flow arrow: "s" where it leaves, "f" where it arrives.
    fn flow(ph: &'static str, id: u64, pid: u64, tid: u64, ts_ns: u64) -> Self {
        Record {
            ph,
            bp: (ph == "f").then_some("e"),
            cat: Some("flow"),
            id: Some(id),
            ts: Some(Micros(ts_ns)),
            args: None,
            ..Record::metadata("submit", pid, tid, ())
        }
    }
}

#[derive(Serialize)]
struct Name<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct CuArgs {
    cus: u32,
    node: u32,
}

#[derive(Serialize)]
struct SortIndex {
    sort_index: u64,
}

#[derive(Serialize)]
struct SlotArgs {
    pid: u32,
    queue_id: u64,
    slot: u32,
    pipe: u32,
}

#[derive(Serialize)]
struct ApiArgs {
    result: u32,
    id: u64,
}

#[derive(Serialize)]
struct WaitArgs<'a> {
    signal: Hex,
    condition: &'a str,
    spin_ns: u64,
    blocked: bool,
}

#[derive(Serialize)]
struct QueueCreatedArgs<'a> {
    queue: u64,
    device: u32,
    size: u32,
    reason: &'a str,
}

#[derive(Serialize)]
struct StreamAssignedArgs<'a> {
    stream: &'a str,
    queue: u64,
    device: u32,
    reason: &'a str,
}

#[derive(Serialize)]
struct PoolAllocArgs {
    pool: u64,
    device: u32,
    bytes: u64,
    reused: bool,
    used: u64,
    reserved: u64,
}

#[derive(Serialize)]
struct GraphLaunchArgs<'a> {
    graph: u64,
    device: u32,
    kernels: u32,
    eager: u32,
    queues: &'a [u64],
}

/// Everything [`read_trace`] needs to rebuild the [`PacketEvent`] (the drawn slice may differ
/// from its times).
#[derive(Serialize)]
struct PacketArgs<'a> {
    queue: u64,
    device: u32,
    index: u64,
    #[serde(rename = "type")]
    kind: Cow<'static, str>,
    barrier: bool,
    kernel: Option<&'a str>,
    grid: [u32; 3],
    workgroup: [u16; 3],
    kernarg_bytes: u32,
    deps: HexList<'a>,
    completion_signal: Hex,
    depth: u64,
    doorbell: bool,
    submit_tid: u64,
    submit_ns: u64,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    api: Option<u64>,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
}

/// As [`PacketArgs`], for a [`CopyEvent`].
#[derive(Serialize)]
struct CopyArgs<'a> {
    engine: &'a str,
    device: u32,
    bytes: u64,
    pieces: u32,
    direction: &'static str,
    staged: bool,
    submit_tid: u64,
    submit_ns: u64,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    api: Option<u64>,
    complete: bool,
}

/// The file's `hipshim` section (viewers ignore it): [`trace_info`] reads it back.
#[derive(Serialize)]
struct Section<'a> {
    format: u32,
    pid: u32,
    end_ns: u64,
    origin_ns: u64,
    clock: &'a str,
    hsa_calls: HsaCalls<'a>,
}

/// The [`TraceEvent::HsaCall`] totals among the events, as `{name, calls, total_ns}` objects.
struct HsaCalls<'a>(&'a [TraceEvent]);

impl Serialize for HsaCalls<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct HsaCall<'a> {
            name: &'a str,
            calls: u64,
            total_ns: u64,
        }
        s.collect_seq(self.0.iter().filter_map(|e| match e {
            TraceEvent::HsaCall {
                name,
                calls,
                total_ns,
            } => Some(HsaCall {
                name,
                calls: *calls,
                total_ns: *total_ns,
            }),
            _ => None,
        }))
    }
}

/// Writes `events` as a Chrome trace-event JSON document.
pub fn write_trace(
    out: &mut impl Write,
    events: &[TraceEvent],
    info: &TraceInfo,
) -> io::Result<()> {
    out.write_all(b"{\"traceEvents\":[\n")?;
    let mut w = Records { out, first: true };
    let host = format!("host threads (pid {})", info.pid);
    for (pid, name, sort_index) in [
        (HOST_PID, host.as_str(), 0),
        (QUEUE_PID, "HSA queues", 1),
        (COPY_PID, "copy engines", 2),
    ] {
        w.write(&Record::metadata("process_name", pid, 0, Name { name }))?;
        w.write(&Record::metadata(
            "process_sort_index",
            pid,
            0,
            SortIndex { sort_index },
        ))?;
    }

    // Host threads: named ones first, then any tid seen without a name.
    let mut threads: BTreeMap<u64, String> = BTreeMap::new();
    for e in events {
        if let TraceEvent::Thread { tid, name } = e {
            threads.insert(*tid, name.clone());
        }
    }
    for e in events {
        let tid = match e {
            TraceEvent::Api(a) => a.tid,
            TraceEvent::Packet(p) => p.tid,
            TraceEvent::Copy(c) => c.tid,
            TraceEvent::Wait(wt) => wt.tid,
            TraceEvent::QueueCreated { tid, .. }
            | TraceEvent::StreamAssigned { tid, .. }
            | TraceEvent::PoolAlloc { tid, .. }
            | TraceEvent::GraphLaunch { tid, .. } => *tid,
            _ => continue,
        };
        threads
            .entry(tid)
            .or_insert_with(|| format!("thread {tid}"));
    }
    for (&tid, name) in &threads {
        w.write(&Record::metadata(
            "thread_name",
            HOST_PID,
            tid,
            Name { name },
        ))?;
    }

    // Device tracks: packets per queue in index order, copies per engine in start order.
    let mut packets: BTreeMap<u64, Vec<&PacketEvent>> = BTreeMap::new();
    let mut copies: BTreeMap<&str, Vec<&CopyEvent>> = BTreeMap::new();
    for e in events {
        match e {
            TraceEvent::Packet(p) => packets.entry(p.queue).or_default().push(p),
            TraceEvent::Copy(c) => copies.entry(&c.engine).or_default().push(c),
            _ => {}
        }
    }
    let mut tracks = Tracks::default();
    let mut drawn_packets: Vec<(&PacketEvent, Drawn)> = Vec::new();
    for (queue, list) in &mut packets {
        list.sort_by_key(|p| p.index);
        let track = format!("queue {queue} (device {})", list[0].device);
        let times = |p: &PacketEvent| (p.submit_ns, p.start_ns, p.end_ns);
        drawn_packets.extend(tracks.draw(QUEUE_PID, &track, list, times, info.end_ns));
    }
    let mut drawn_copies: Vec<(&CopyEvent, Drawn)> = Vec::new();
    for (engine, list) in &mut copies {
        list.sort_by_key(|c| (c.start_ns.is_none(), c.start_ns.unwrap_or(c.submit_ns)));
        let track = format!("copy engine {engine} (device {})", list[0].device);
        let times = |c: &CopyEvent| (c.submit_ns, c.start_ns, c.end_ns);
        drawn_copies.extend(tracks.draw(COPY_PID, &track, list, times, info.end_ns));
    }
    write_cus_in_use(&mut w, events)?;
    // Slots, one track each, when the runtime reported any (hsasim under virtual time).
    let mut slots: BTreeMap<u32, u32> = BTreeMap::new();
    for e in events {
        if let TraceEvent::HqdSlot { slot, pipe, .. } = e {
            slots.insert(*slot, *pipe);
        }
    }
    if !slots.is_empty() {
        let name = "hardware queue slots (virtual time)";
        w.write(&Record::metadata(
            "process_name",
            SLOTS_PID,
            0,
            Name { name },
        ))?;
        w.write(&Record::metadata(
            "process_sort_index",
            SLOTS_PID,
            0,
            SortIndex { sort_index: 3 },
        ))?;
        for (slot, pipe) in &slots {
            let name = format!("slot {slot} (pipe {pipe})");
            w.write(&Record::metadata(
                "thread_name",
                SLOTS_PID,
                u64::from(*slot),
                Name { name: &name },
            ))?;
            w.write(&Record::metadata(
                "thread_sort_index",
                SLOTS_PID,
                u64::from(*slot),
                SortIndex {
                    sort_index: u64::from(*slot),
                },
            ))?;
        }
    }
    for (pid, tid, name) in &tracks.names {
        w.write(&Record::metadata("thread_name", *pid, *tid, Name { name }))?;
        w.write(&Record::metadata(
            "thread_sort_index",
            *pid,
            *tid,
            SortIndex { sort_index: *tid },
        ))?;
    }

    for e in events {
        match e {
            TraceEvent::Api(a) => w.write(&Record::slice(
                "api",
                &a.name,
                HOST_PID,
                a.tid,
                (a.start_ns, a.start_ns + a.dur_ns),
                ApiArgs {
                    result: a.result,
                    id: a.id,
                },
            ))?,
            TraceEvent::Wait(wt) => w.write(&Record::slice(
                "wait",
                if wt.blocked {
                    "signal wait (blocked)"
                } else {
                    "signal wait (spin)"
                },
                HOST_PID,
                wt.tid,
                (wt.start_ns, wt.start_ns + wt.dur_ns),
                WaitArgs {
                    signal: Hex(wt.signal),
                    condition: &wt.condition,
                    spin_ns: wt.spin_ns,
                    blocked: wt.blocked,
                },
            ))?,
            TraceEvent::QueueCreated {
                tid,
                ts_ns,
                queue,
                device,
                size,
                reason,
            } => w.write(&Record::instant(
                "policy",
                "queue created",
                *tid,
                *ts_ns,
                QueueCreatedArgs {
                    queue: *queue,
                    device: *device,
                    size: *size,
                    reason,
                },
            ))?,
            TraceEvent::StreamAssigned {
                tid,
                ts_ns,
                stream,
                queue,
                device,
                reason,
            } => w.write(&Record::instant(
                "policy",
                "stream assigned",
                *tid,
                *ts_ns,
                StreamAssignedArgs {
                    stream,
                    queue: *queue,
                    device: *device,
                    reason,
                },
            ))?,
            TraceEvent::PoolAlloc {
                tid,
                ts_ns,
                pool,
                device,
                bytes,
                reused,
                used,
                reserved,
            } => w.write(&Record::instant(
                "mempool",
                if *reused {
                    "pool alloc (reused)"
                } else {
                    "pool alloc"
                },
                *tid,
                *ts_ns,
                PoolAllocArgs {
                    pool: *pool,
                    device: *device,
                    bytes: *bytes,
                    reused: *reused,
                    used: *used,
                    reserved: *reserved,
                },
            ))?,
            TraceEvent::GraphLaunch {
                tid,
                ts_ns,
                graph,
                device,
                kernels,
                eager,
                queues,
            } => w.write(&Record::instant(
                "graph",
                "graph launch",
                *tid,
                *ts_ns,
                GraphLaunchArgs {
                    graph: *graph,
                    device: *device,
                    kernels: *kernels,
                    eager: *eager,
                    queues,
                },
            ))?,
            _ => {}
        }
    }
    for e in events {
        if let TraceEvent::HqdSlot {
            pid,
            slot,
            pipe,
            queue_id,
            start_ns,
            end_ns,
        } = e
        {
            // Other processes' queues (a device service's slots are shared) say whose.
            let name = if *pid == info.pid {
                format!("queue {queue_id}")
            } else {
                format!("queue {queue_id} (pid {pid})")
            };
            w.write(&Record::slice(
                "slot",
                &name,
                SLOTS_PID,
                u64::from(*slot),
                (*start_ns, (*end_ns).max(*start_ns)),
                SlotArgs {
                    pid: *pid,
                    queue_id: *queue_id,
                    slot: *slot,
                    pipe: *pipe,
                },
            ))?;
        }
    }
    let mut flow = 0u64;
    for (p, d) in &drawn_packets {
        let complete = p.end_ns.is_some();
        let mut name = match (p.kind, &p.kernel) {
            (PacketKind::KernelDispatch, Some(k)) => k.to_string(),
            (PacketKind::KernelDispatch, None) => "kernel".to_string(),
            (PacketKind::BarrierAnd, _) if p.deps.is_empty() => "marker (barrier-AND)".into(),
            (PacketKind::BarrierAnd, _) => "wait (barrier-AND)".into(),
            (PacketKind::BarrierOr, _) => "barrier-OR".into(),
            (PacketKind::TraceBarrier, _) => "trace completion barrier".into(),
            (PacketKind::Other(t), _) => format!("packet type {t}"),
        };
        if !complete {
            name.push_str(" (incomplete)");
        }
        let note = (p.kind == PacketKind::TraceBarrier).then_some(
            "added by hipshim while tracing: completes the previous packet's original completion signal, so that packet can carry its own signal for timestamps",
        );
        w.write(&Record::slice(
            "packet",
            &name,
            QUEUE_PID,
            d.tid,
            (d.start, d.end),
            PacketArgs {
                queue: p.queue,
                device: p.device,
                index: p.index,
                kind: p.kind.label(),
                barrier: p.barrier,
                kernel: p.kernel.as_deref(),
                grid: p.grid,
                workgroup: p.workgroup,
                kernarg_bytes: p.kernarg_bytes,
                deps: HexList(&p.deps),
                completion_signal: Hex(p.completion_signal),
                depth: p.depth,
                doorbell: p.doorbell,
                submit_tid: p.tid,
                submit_ns: p.submit_ns,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                api: p.api,
                complete,
                note,
            },
        ))?;
        if p.api.is_some() {
            flow += 1;
            w.flow(flow, p.tid, p.submit_ns, QUEUE_PID, d)?;
        }
    }
    for (c, d) in &drawn_copies {
        let complete = c.end_ns.is_some();
        let name = format!(
            "{} {}{}",
            c.direction.label(),
            human_bytes(c.bytes),
            if complete { "" } else { " (incomplete)" }
        );
        w.write(&Record::slice(
            "copy",
            &name,
            COPY_PID,
            d.tid,
            (d.start, d.end),
            CopyArgs {
                engine: &c.engine,
                device: c.device,
                bytes: c.bytes,
                pieces: c.pieces,
                direction: c.direction.label(),
                staged: c.staged,
                submit_tid: c.tid,
                submit_ns: c.submit_ns,
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                api: c.api,
                complete,
            },
        ))?;
        if c.api.is_some() {
            flow += 1;
            w.flow(flow, c.tid, c.submit_ns, COPY_PID, d)?;
        }
    }
    let out = w.out;
    out.write_all(b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":")?;
    serde_json::to_writer(
        &mut *out,
        &serde_json::json!({ "producer": concat!("hipshim ", env!("CARGO_PKG_VERSION")) }),
    )?;
    out.write_all(b",\n\"hipshim\":")?;
    let section = Section {
        format: 1,
        pid: info.pid,
        end_ns: info.end_ns,
        origin_ns: info.origin_ns,
        clock: &info.clock,
        hsa_calls: HsaCalls(events),
    };
    serde_json::to_writer(&mut *out, &section)?;
    out.write_all(b"\n}\n")
}

/// Bytes for a slice name: `4 KiB`, `1.5 MiB`.
/// The counters of compute units in use, one per GPU, when the runtime reported them (hsasim
/// under virtual time).
fn write_cus_in_use(w: &mut Records<'_, impl Write>, events: &[TraceEvent]) -> io::Result<()> {
    let steps: Vec<(u32, u64, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::CusInUse { node, at_ns, cus } => Some((node, at_ns, cus)),
            _ => None,
        })
        .collect();
    if steps.is_empty() {
        return Ok(());
    }
    let name = "compute units (virtual time)";
    w.write(&Record::metadata("process_name", CU_PID, 0, Name { name }))?;
    w.write(&Record::metadata(
        "process_sort_index",
        CU_PID,
        0,
        SortIndex { sort_index: 4 },
    ))?;
    for (node, at_ns, cus) in steps {
        let name = cu_counter_name(node);
        w.write(&Record::counter(
            "cus",
            &name,
            CU_PID,
            at_ns,
            CuArgs { cus, node },
        ))?;
    }
    Ok(())
}

fn cu_counter_name(node: u32) -> String {
    format!("CUs in use (HSA node {node})")
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{} {}", value as u64, UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Writes the records of `traceEvents` as they are made, one a line.
struct Records<'a, W: Write> {
    out: &'a mut W,
    first: bool,
}

impl<W: Write> Records<'_, W> {
    fn write(&mut self, record: &impl Serialize) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        Ok(serde_json::to_writer(&mut *self.out, record)?)
    }

    /// A flow arrow from the host thread `tid` at `at` (inside the API slice that submitted)
    /// to the start of the drawn device slice.
    fn flow(&mut self, id: u64, tid: u64, at: u64, pid: u64, to: &Drawn) -> io::Result<()> {
        self.write(&Record::flow("s", id, HOST_PID, tid, at))?;
        self.write(&Record::flow("f", id, pid, to.tid, to.start))
    }
}

// ---- reading ----

use serde_json::Value;

/// Reads a trace file written by hipshim back into events.
pub fn read_trace(path: impl AsRef<Path>) -> Result<Vec<TraceEvent>, TraceError> {
    let file = std::fs::File::open(path.as_ref()).map_err(TraceError::Io)?;
    let value: Value =
        serde_json::from_reader(io::BufReader::new(file)).map_err(TraceError::Json)?;
    parse_trace(&value)
}

/// The facts the writer put in the file's `hipshim` section (`None` if it has none).
pub fn trace_info(value: &Value) -> Option<TraceInfo> {
    let h = value.get("hipshim")?;
    Some(TraceInfo {
        pid: h.get("pid").and_then(Value::as_u64).unwrap_or(0) as u32,
        end_ns: h.get("end_ns").and_then(Value::as_u64).unwrap_or(0),
        clock: h
            .get("clock")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        origin_ns: h.get("origin_ns").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// [`read_trace`] for a document already in memory.
pub fn parse_trace(value: &Value) -> Result<Vec<TraceEvent>, TraceError> {
    let bad = |why: &str| TraceError::Format(why.to_string());
    if value.get("hipshim_merged").is_some() {
        // Its tracks belong to several processes; read as one they would mix.
        return Err(bad(
            "a merged trace (`hipshim trace merge`); read the per-process traces it was made from",
        ));
    }
    let list = match value {
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no traceEvents array"))?,
        Value::Array(a) => a,
        _ => return Err(bad("neither an object nor an array")),
    };
    let mut events = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let at = |what: &str| TraceError::Format(format!("event {i}: {what}"));
        let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        let args = e.get("args").cloned().unwrap_or(Value::Null);
        let u = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
        let need = |v: &Value, key: &str| u(v, key).ok_or_else(|| at(&format!("no {key}")));
        let s = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let ns = |v: &Value, key: &str| -> Result<u64, TraceError> {
            let us = v
                .get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| at(&format!("no {key}")))?;
            Ok((us * 1000.0).round().max(0.0) as u64)
        };
        let b = |v: &Value, key: &str| v.get(key).and_then(Value::as_bool).unwrap_or(false);
        let signal = |v: &Value| -> u64 {
            v.as_str()
                .and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok())
                .or_else(|| v.as_u64())
                .unwrap_or(0)
        };
        let tid = u(e, "tid").unwrap_or(0);
        match (ph, cat) {
            ("M", _)
                if s(e, "name").as_deref() == Some("thread_name")
                    && u(e, "pid") == Some(HOST_PID) =>
            {
                events.push(TraceEvent::Thread {
                    tid,
                    name: s(&args, "name").unwrap_or_default(),
                });
            }
            ("C", "cus") if u(e, "pid") == Some(CU_PID) => events.push(TraceEvent::CusInUse {
                node: need(&args, "node")? as u32,
                at_ns: ns(e, "ts")?,
                cus: need(&args, "cus")? as u32,
            }),
            ("X", "slot") if u(e, "pid") == Some(SLOTS_PID) => {
                let start_ns = ns(e, "ts")?;
                events.push(TraceEvent::HqdSlot {
                    pid: u(&args, "pid").unwrap_or(0) as u32,
                    slot: u(&args, "slot").unwrap_or(tid) as u32,
                    pipe: u(&args, "pipe").unwrap_or(0) as u32,
                    queue_id: need(&args, "queue_id")?,
                    start_ns,
                    end_ns: start_ns + ns(e, "dur")?,
                });
            }
            ("X", "api") => events.push(TraceEvent::Api(ApiEvent {
                tid,
                name: s(e, "name").unwrap_or_default().into(),
                start_ns: ns(e, "ts")?,
                dur_ns: ns(e, "dur")?,
                result: u(&args, "result").unwrap_or(0) as u32,
                id: u(&args, "id").unwrap_or(0),
            })),
            ("X", "wait") => events.push(TraceEvent::Wait(WaitEvent {
                tid,
                signal: args.get("signal").map_or(0, signal),
                condition: s(&args, "condition").unwrap_or_default(),
                start_ns: ns(e, "ts")?,
                dur_ns: ns(e, "dur")?,
                spin_ns: u(&args, "spin_ns").unwrap_or(0),
                blocked: b(&args, "blocked"),
            })),
            ("X", "packet") => {
                let triple = |key: &str| -> [u64; 3] {
                    let mut out = [0; 3];
                    if let Some(a) = args.get(key).and_then(Value::as_array) {
                        for (o, v) in out.iter_mut().zip(a) {
                            *o = v.as_u64().unwrap_or(0);
                        }
                    }
                    out
                };
                let grid = triple("grid");
                let wg = triple("workgroup");
                let kind = s(&args, "type")
                    .and_then(|t| PacketKind::parse(&t))
                    .ok_or_else(|| at("unknown packet type"))?;
                events.push(TraceEvent::Packet(PacketEvent {
                    queue: need(&args, "queue")?,
                    device: u(&args, "device").unwrap_or(0) as u32,
                    index: need(&args, "index")?,
                    kind,
                    barrier: b(&args, "barrier"),
                    kernel: s(&args, "kernel").map(Arc::from),
                    grid: grid.map(|g| g as u32),
                    workgroup: wg.map(|g| g as u16),
                    kernarg_bytes: u(&args, "kernarg_bytes").unwrap_or(0) as u32,
                    deps: args
                        .get("deps")
                        .and_then(Value::as_array)
                        .map(|d| d.iter().map(signal).collect())
                        .unwrap_or_default(),
                    completion_signal: args.get("completion_signal").map_or(0, signal),
                    depth: u(&args, "depth").unwrap_or(0),
                    doorbell: b(&args, "doorbell"),
                    tid: u(&args, "submit_tid").unwrap_or(0),
                    submit_ns: need(&args, "submit_ns")?,
                    start_ns: u(&args, "start_ns"),
                    end_ns: u(&args, "end_ns"),
                    api: u(&args, "api"),
                }));
            }
            ("X", "copy") => events.push(TraceEvent::Copy(CopyEvent {
                engine: s(&args, "engine").unwrap_or_default(),
                device: u(&args, "device").unwrap_or(0) as u32,
                bytes: need(&args, "bytes")?,
                pieces: u(&args, "pieces").unwrap_or(1) as u32,
                direction: s(&args, "direction")
                    .and_then(|d| Direction::parse(&d))
                    .ok_or_else(|| at("unknown copy direction"))?,
                staged: b(&args, "staged"),
                tid: u(&args, "submit_tid").unwrap_or(0),
                submit_ns: need(&args, "submit_ns")?,
                start_ns: u(&args, "start_ns"),
                end_ns: u(&args, "end_ns"),
                api: u(&args, "api"),
            })),
            ("i", "mempool") => events.push(TraceEvent::PoolAlloc {
                tid,
                ts_ns: ns(e, "ts")?,
                pool: need(&args, "pool")?,
                device: u(&args, "device").unwrap_or(0) as u32,
                bytes: u(&args, "bytes").unwrap_or(0),
                reused: args.get("reused").and_then(Value::as_bool).unwrap_or(false),
                used: u(&args, "used").unwrap_or(0),
                reserved: u(&args, "reserved").unwrap_or(0),
            }),
            ("i", "graph") => events.push(TraceEvent::GraphLaunch {
                tid,
                ts_ns: ns(e, "ts")?,
                graph: need(&args, "graph")?,
                device: u(&args, "device").unwrap_or(0) as u32,
                kernels: u(&args, "kernels").unwrap_or(0) as u32,
                eager: u(&args, "eager").unwrap_or(0) as u32,
                queues: args
                    .get("queues")
                    .and_then(Value::as_array)
                    .map(|q| q.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default(),
            }),
            ("i", "policy") => {
                let name = s(e, "name").unwrap_or_default();
                let ts_ns = ns(e, "ts")?;
                let queue = need(&args, "queue")?;
                let device = u(&args, "device").unwrap_or(0) as u32;
                let reason = s(&args, "reason").unwrap_or_default();
                if name == "queue created" {
                    events.push(TraceEvent::QueueCreated {
                        tid,
                        ts_ns,
                        queue,
                        device,
                        size: u(&args, "size").unwrap_or(0) as u32,
                        reason,
                    });
                } else {
                    events.push(TraceEvent::StreamAssigned {
                        tid,
                        ts_ns,
                        stream: s(&args, "stream").unwrap_or_default(),
                        queue,
                        device,
                        reason,
                    });
                }
            }
            _ => {}
        }
    }
    if let Some(calls) = value
        .get("hipshim")
        .and_then(|h| h.get("hsa_calls"))
        .and_then(Value::as_array)
    {
        for c in calls {
            events.push(TraceEvent::HsaCall {
                name: c.get("name").and_then(Value::as_str).unwrap_or("").into(),
                calls: c.get("calls").and_then(Value::as_u64).unwrap_or(0),
                total_ns: c.get("total_ns").and_then(Value::as_u64).unwrap_or(0),
            });
        }
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<TraceEvent> {
        vec![
            TraceEvent::Thread {
                tid: 7,
                name: "main \"thread\"".into(),
            },
            TraceEvent::Api(ApiEvent {
                tid: 7,
                name: "hipLaunchKernel".into(),
                start_ns: 1_000,
                dur_ns: 2_345,
                result: 0,
                id: 1,
            }),
            TraceEvent::Packet(PacketEvent {
                queue: 3,
                device: 0,
                index: 0,
                kind: PacketKind::KernelDispatch,
                barrier: true,
                kernel: Some("k".into()),
                grid: [64, 1, 1],
                workgroup: [64, 1, 1],
                kernarg_bytes: 24,
                deps: vec![],
                completion_signal: 0xdead_beef_0000_0001,
                depth: 0,
                doorbell: false,
                tid: 7,
                submit_ns: 2_000,
                start_ns: Some(4_000),
                end_ns: Some(9_001),
                api: Some(1),
            }),
            TraceEvent::Packet(PacketEvent {
                queue: 3,
                device: 0,
                index: 1,
                kind: PacketKind::TraceBarrier,
                barrier: true,
                kernel: None,
                grid: [0; 3],
                workgroup: [0; 3],
                kernarg_bytes: 0,
                deps: vec![5, 6],
                completion_signal: 9,
                depth: 1,
                doorbell: true,
                tid: 7,
                submit_ns: 2_000,
                start_ns: None,
                end_ns: None,
                api: None,
            }),
            TraceEvent::Copy(CopyEvent {
                engine: "sdma0".into(),
                device: 0,
                bytes: 4096,
                pieces: 1,
                direction: Direction::HostToDevice,
                staged: true,
                tid: 7,
                submit_ns: 3_000,
                start_ns: Some(3_500),
                end_ns: Some(5_000),
                api: Some(1),
            }),
            TraceEvent::Wait(WaitEvent {
                tid: 7,
                signal: 42,
                condition: "== 0".into(),
                start_ns: 1_500,
                dur_ns: 10,
                spin_ns: 10,
                blocked: false,
            }),
            TraceEvent::QueueCreated {
                tid: 7,
                ts_ns: 1_100,
                queue: 3,
                device: 0,
                size: 1024,
                reason: "new pool queue".into(),
            },
            TraceEvent::StreamAssigned {
                tid: 7,
                ts_ns: 1_200,
                stream: "null".into(),
                queue: 3,
                device: 0,
                reason: "new pool queue".into(),
            },
            TraceEvent::PoolAlloc {
                tid: 7,
                ts_ns: 1_300,
                pool: 0x260,
                device: 0,
                bytes: 4096,
                reused: true,
                used: 8192,
                reserved: 12288,
            },
            TraceEvent::GraphLaunch {
                tid: 7,
                ts_ns: 1_400,
                graph: 2,
                device: 0,
                kernels: 100,
                eager: 1,
                queues: vec![3, 9],
            },
            TraceEvent::HqdSlot {
                pid: 1,
                slot: 2,
                pipe: 1,
                queue_id: 3,
                start_ns: 1_000,
                end_ns: 9_000,
            },
            TraceEvent::HqdSlot {
                pid: 77,
                slot: 2,
                pipe: 1,
                queue_id: 0,
                start_ns: 9_000,
                end_ns: 12_000,
            },
            TraceEvent::HsaCall {
                name: "hsa_signal_create".into(),
                calls: 3,
                total_ns: 999,
            },
            TraceEvent::CusInUse {
                node: 1,
                at_ns: 1_500,
                cus: 304,
            },
            TraceEvent::CusInUse {
                node: 1,
                at_ns: 9_500,
                cus: 0,
            },
        ]
    }

    #[test]
    fn a_written_trace_reads_back_to_the_same_events() {
        let events = sample();
        let mut out = Vec::new();
        let info = TraceInfo {
            pid: 1,
            end_ns: 20_000,
            clock: "test".into(),
            origin_ns: 123_456,
        };
        write_trace(&mut out, &events, &info).unwrap();
        let value: Value = serde_json::from_slice(&out).expect("valid JSON");
        assert_eq!(trace_info(&value).unwrap().origin_ns, 123_456);
        let back = parse_trace(&value).unwrap();
        for e in &events {
            assert!(back.contains(e), "{e:?} missing from {back:?}");
        }
        assert_eq!(back.len(), events.len());
    }

    #[test]
    fn overlapping_slices_get_extra_lanes_and_incomplete_ones_end_at_exit() {
        assert_eq!(
            lanes(&[(0, 10), (10, 20), (15, 30), (31, 40)]),
            [0, 0, 1, 0]
        );
        let s = spans(
            &[(0, Some(1), Some(5)), (2, None, None), (3, None, None)],
            100,
        );
        assert_eq!(s, [(1, 5), (5, 100), (100, 100)]);
    }
}
