//! The tables of `HIPSHIM_STATS` and `hipshim trace summarize`: computed in one place from
//! [`TraceEvent`]s, whether they were just recorded or read from a trace file.

use super::schema;
use super::*;
use crate::config::OutputFormat;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Calls and time of one function (a HIP API or an HSA call).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CallRow {
    pub name: String,
    pub calls: u64,
    pub total_ns: u64,
    /// Calls that returned an error (HIP API only).
    pub errors: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueRow {
    pub queue: u64,
    pub device: u32,
    /// Every packet, the trace barriers included.
    pub packets: u64,
    pub kernels: u64,
    /// Barrier-AND/OR packets hipshim publishes for markers and waits.
    pub barriers: u64,
    /// Packets added only because tracing was on (see `PacketKind::TraceBarrier`).
    pub trace_barriers: u64,
    pub doorbells: u64,
    /// Most packets in the ring at once (the packet itself included).
    pub max_depth: u64,
    /// Time with at least one packet executing (union of start..end).
    pub busy_ns: u64,
    pub incomplete: u64,
    /// Streams assigned to this queue, and why it was created.
    pub streams: u64,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EngineRow {
    pub engine: String,
    pub device: u32,
    pub direction: String,
    pub copies: u64,
    pub bytes: u64,
    pub staged: u64,
    /// Union of the copies' start..end on this engine.
    pub busy_ns: u64,
    pub incomplete: u64,
}

impl EngineRow {
    /// Bytes per second of busy time, in GB/s (10^9 bytes).
    pub fn gb_per_s(&self) -> f64 {
        if self.busy_ns == 0 {
            0.0
        } else {
            self.bytes as f64 / self.busy_ns as f64
        }
    }
}

/// One executable graph's launches.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GraphRow {
    pub graph: u64,
    pub launches: u64,
    /// Kernel nodes published as prebuilt packets, and steps submitted otherwise, in all.
    pub kernels: u64,
    pub eager: u64,
    /// The queues its packets went to.
    pub queues: Vec<u64>,
}

/// One memory pool's stream-ordered allocations.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PoolRow {
    pub pool: u64,
    pub device: u32,
    pub allocations: u64,
    /// Allocations a freed block served.
    pub reused: u64,
    pub bytes: u64,
    /// Most used and reserved at an allocation (the high-water marks: both grow only there).
    pub used_high: u64,
    pub reserved_high: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WaitRow {
    pub waits: u64,
    pub total_ns: u64,
    /// Waits that ended while spinning, and their time.
    pub spin_only: u64,
    pub spin_ns: u64,
    /// Waits that went to sleep, and the time after they did.
    pub blocked: u64,
    pub blocked_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// From the first to the last recorded moment.
    pub span_ns: u64,
    pub threads: u64,
    pub api: Vec<CallRow>,
    pub hsa: Vec<CallRow>,
    pub queues: Vec<QueueRow>,
    pub engines: Vec<EngineRow>,
    pub pools: Vec<PoolRow>,
    pub graphs: Vec<GraphRow>,
    pub waits: WaitRow,
}

impl Stats {
    /// The tables in `format`: text as [`fmt::Display`] prints them; json as one
    /// `hipshim.<kind>` document with these structs' fields (ns and bytes as integers); csv
    /// as one `table,row,field,value` record per figure, since the tables differ in shape.
    /// `kind` is `stats` at exit and `trace-summary` for `hipshim trace summarize`.
    pub fn render(&self, format: OutputFormat, kind: &str) -> String {
        match format {
            OutputFormat::Text => self.to_string(),
            OutputFormat::Json => schema::document(kind, self.to_json()),
            OutputFormat::Csv => self.to_csv(),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    fn to_csv(&self) -> String {
        let mut records: Vec<Vec<String>> = Vec::new();
        let serde_json::Value::Object(fields) = self.to_json() else {
            return String::new();
        };
        let mut put_row = |table: &str, row: usize, value: &serde_json::Value| {
            if let serde_json::Value::Object(cells) = value {
                for (field, cell) in cells {
                    records.push(vec![
                        table.to_string(),
                        row.to_string(),
                        field.clone(),
                        schema::csv_cell(cell),
                    ]);
                }
            }
        };
        // The scalars (span, threads) first, as one row of their own.
        let scalars: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .filter(|(_, v)| !v.is_array() && !v.is_object())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        put_row("recording", 0, &serde_json::Value::Object(scalars));
        for (table, value) in &fields {
            match value {
                serde_json::Value::Array(rows) => {
                    for (i, row) in rows.iter().enumerate() {
                        put_row(table, i, row);
                    }
                }
                serde_json::Value::Object(_) => put_row(table, 0, value),
                _ => {}
            }
        }
        schema::csv_table(&["table", "row", "field", "value"], &records)
    }
}

/// The union length of time spans, kept as disjoint spans merged as they come, so the tables
/// can be made from events one at a time (a live recording) or all at once (a trace file).
///
/// Unbounded, it is exact. Bounded (a live recording that keeps no events), it keeps at most
/// [`SPANS_KEPT`] spans: past that, the older half is added up and dropped, and a span that
/// arrives later reaching back before them counts only from where they end. A queue's or an
/// engine's work completes nearly in order, and the recorder hands spans over within a few
/// hundred of each other, so in practice the sum is still the union.
#[derive(Clone, Debug, Default)]
struct BusySpans {
    /// start -> end, disjoint.
    spans: BTreeMap<u64, u64>,
    /// Time of the spans added up and dropped, and where the last of them ends.
    settled_ns: u64,
    settled_until: u64,
}

/// Spans a bounded [`BusySpans`] keeps before settling the older half.
const SPANS_KEPT: usize = 1024;

impl BusySpans {
    fn add(&mut self, start: u64, end: u64, bounded: bool) {
        let start = start.max(self.settled_until);
        if end < start {
            return;
        }
        self.insert(start, end);
        if bounded {
            self.settle();
        }
    }

    /// Adds `start..end`, joining the spans it overlaps or touches.
    fn insert(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.spans.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.spans.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.spans.range(start..=end).next() {
            end = end.max(e);
            self.spans.remove(&s);
        }
        self.spans.insert(start, end);
    }

    fn settle(&mut self) {
        if self.spans.len() <= SPANS_KEPT {
            return;
        }
        for _ in 0..SPANS_KEPT / 2 {
            let Some((s, e)) = self.spans.pop_first() else {
                break;
            };
            self.settled_ns += e - s;
            self.settled_until = e;
        }
    }

    /// Takes in another thread's spans. Those it settled are added to these as they are: a
    /// queue's packets of two threads do not overlap while recording (each is followed by a
    /// trace barrier, which holds the queue until the packets before it are done), and an
    /// engine's copies run one after another.
    fn merge(&mut self, other: BusySpans, bounded: bool) {
        self.settled_ns += other.settled_ns;
        self.settled_until = self.settled_until.max(other.settled_until);
        for (s, e) in other.spans {
            self.insert(s, e);
        }
        if bounded {
            self.settle();
        }
    }

    fn total(&self) -> u64 {
        self.settled_ns + self.spans.iter().map(|(s, e)| e - s).sum::<u64>()
    }
}

/// The tables being made: [`TraceEvent`]s added one at a time, tallies of several threads
/// merged, then [`Tally::into_stats`]. What [`summarize`] runs over a whole trace, and what a
/// recording that keeps no events (`HIPSHIM_STATS` without `HIPSHIM_TRACE`) keeps instead of
/// them, so its memory grows with the queues, engines and functions it saw, not with the calls.
#[derive(Debug, Default)]
pub struct Tally {
    /// Busy times kept in bounded memory (see [`BusySpans`]).
    bounded: bool,
    /// The first and last recorded moments.
    window: Option<(u64, u64)>,
    threads: BTreeSet<u64>,
    api: BTreeMap<String, CallRow>,
    hsa: BTreeMap<String, CallRow>,
    queues: BTreeMap<u64, (QueueRow, BusySpans)>,
    engines: BTreeMap<(String, u32, Direction), (EngineRow, BusySpans)>,
    pools: BTreeMap<u64, PoolRow>,
    graphs: BTreeMap<u64, GraphRow>,
    waits: WaitRow,
}

/// Adds a call to its function's row, making the row on the function's first call.
fn call_row<'a>(rows: &'a mut BTreeMap<String, CallRow>, name: &str) -> &'a mut CallRow {
    if !rows.contains_key(name) {
        let row = CallRow {
            name: name.to_owned(),
            ..Default::default()
        };
        rows.insert(name.to_owned(), row);
    }
    rows.get_mut(name).expect("inserted above")
}

fn queue_row(
    queues: &mut BTreeMap<u64, (QueueRow, BusySpans)>,
    queue: u64,
    device: u32,
) -> &mut (QueueRow, BusySpans) {
    queues.entry(queue).or_insert_with(|| {
        (
            QueueRow {
                queue,
                device,
                ..Default::default()
            },
            BusySpans::default(),
        )
    })
}

impl Tally {
    /// A tally that keeps its busy times in bounded memory (see [`BusySpans`]).
    pub fn bounded() -> Tally {
        Tally {
            bounded: true,
            ..Tally::default()
        }
    }

    fn seen(&mut self, t: u64) {
        self.window = Some(match self.window {
            Some((first, last)) => (first.min(t), last.max(t)),
            None => (t, t),
        });
    }

    /// Queues, engines, functions, pools and graphs with a row.
    pub fn rows(&self) -> usize {
        self.api.len()
            + self.hsa.len()
            + self.queues.len()
            + self.engines.len()
            + self.pools.len()
            + self.graphs.len()
    }

    pub fn add(&mut self, event: &TraceEvent) {
        let bounded = self.bounded;
        match event {
            TraceEvent::Thread { tid, .. } => {
                self.threads.insert(*tid);
            }
            TraceEvent::Api(a) => {
                self.threads.insert(a.tid);
                self.seen(a.start_ns);
                self.seen(a.start_ns + a.dur_ns);
                let row = call_row(&mut self.api, &a.name);
                row.calls += 1;
                row.total_ns += a.dur_ns;
                row.errors += u64::from(a.result != 0);
            }
            TraceEvent::HsaCall {
                name,
                calls,
                total_ns,
            } => {
                let row = call_row(&mut self.hsa, name);
                row.calls += calls;
                row.total_ns += total_ns;
            }
            // A device-wide counter for the trace's tracks; the stats' queue and engine rows
            // already say how busy the device was.
            TraceEvent::CusInUse { .. } => {}
            TraceEvent::Packet(p) => {
                self.seen(p.submit_ns);
                if let (Some(_), Some(e)) = (p.start_ns, p.end_ns) {
                    self.seen(e);
                }
                let (row, spans) = queue_row(&mut self.queues, p.queue, p.device);
                row.packets += 1;
                match p.kind {
                    PacketKind::KernelDispatch => row.kernels += 1,
                    PacketKind::BarrierAnd | PacketKind::BarrierOr => row.barriers += 1,
                    PacketKind::TraceBarrier => row.trace_barriers += 1,
                    PacketKind::Other(_) => {}
                }
                row.doorbells += u64::from(p.doorbell);
                row.max_depth = row.max_depth.max(p.depth + 1);
                match (p.start_ns, p.end_ns) {
                    (Some(s), Some(e)) => spans.add(s, e.max(s), bounded),
                    _ => row.incomplete += 1,
                }
            }
            TraceEvent::Copy(c) => {
                self.seen(c.submit_ns);
                if let (Some(_), Some(e)) = (c.start_ns, c.end_ns) {
                    self.seen(e);
                }
                let key = (c.engine.clone(), c.device, c.direction);
                let (row, spans) = self.engines.entry(key).or_insert_with(|| {
                    (
                        EngineRow {
                            engine: c.engine.clone(),
                            device: c.device,
                            direction: c.direction.label().to_string(),
                            ..Default::default()
                        },
                        BusySpans::default(),
                    )
                });
                row.copies += 1;
                row.bytes += c.bytes;
                row.staged += u64::from(c.staged);
                match (c.start_ns, c.end_ns) {
                    (Some(s), Some(e)) => spans.add(s, e.max(s), bounded),
                    _ => row.incomplete += 1,
                }
            }
            TraceEvent::Wait(w) => {
                self.threads.insert(w.tid);
                let r = &mut self.waits;
                r.waits += 1;
                r.total_ns += w.dur_ns;
                r.spin_ns += w.spin_ns;
                if w.blocked {
                    r.blocked += 1;
                    r.blocked_ns += w.dur_ns.saturating_sub(w.spin_ns);
                } else {
                    r.spin_only += 1;
                }
            }
            TraceEvent::QueueCreated {
                queue,
                device,
                reason,
                ts_ns,
                ..
            } => {
                self.seen(*ts_ns);
                queue_row(&mut self.queues, *queue, *device).0.reason = reason.clone();
            }
            TraceEvent::PoolAlloc {
                tid,
                ts_ns,
                pool,
                device,
                bytes,
                reused,
                used,
                reserved,
            } => {
                self.threads.insert(*tid);
                self.seen(*ts_ns);
                let row = self.pools.entry(*pool).or_insert_with(|| PoolRow {
                    pool: *pool,
                    device: *device,
                    ..Default::default()
                });
                row.allocations += 1;
                row.reused += u64::from(*reused);
                row.bytes += bytes;
                row.used_high = row.used_high.max(*used);
                row.reserved_high = row.reserved_high.max(*reserved);
            }
            TraceEvent::GraphLaunch {
                tid,
                ts_ns,
                graph,
                kernels,
                eager,
                queues,
                ..
            } => {
                self.threads.insert(*tid);
                self.seen(*ts_ns);
                let row = self.graphs.entry(*graph).or_insert_with(|| GraphRow {
                    graph: *graph,
                    ..Default::default()
                });
                row.launches += 1;
                row.kernels += u64::from(*kernels);
                row.eager += u64::from(*eager);
                for q in queues {
                    if !row.queues.contains(q) {
                        row.queues.push(*q);
                    }
                }
            }
            TraceEvent::StreamAssigned { queue, device, .. } => {
                queue_row(&mut self.queues, *queue, *device).0.streams += 1;
            }
            // A track of the timeline only.
            TraceEvent::HqdSlot { .. } => {}
        }
    }

    /// Takes in `other`'s events, as if they had been added here after these.
    pub fn merge(&mut self, other: Tally) {
        let bounded = self.bounded;
        if let Some((first, last)) = other.window {
            self.seen(first);
            self.seen(last);
        }
        self.threads.extend(other.threads);
        for (into, from) in [(&mut self.api, other.api), (&mut self.hsa, other.hsa)] {
            for (name, row) in from {
                let into = call_row(into, &name);
                into.calls += row.calls;
                into.total_ns += row.total_ns;
                into.errors += row.errors;
            }
        }
        for (queue, (row, spans)) in other.queues {
            let (into, into_spans) = queue_row(&mut self.queues, queue, row.device);
            into.packets += row.packets;
            into.kernels += row.kernels;
            into.barriers += row.barriers;
            into.trace_barriers += row.trace_barriers;
            into.doorbells += row.doorbells;
            into.max_depth = into.max_depth.max(row.max_depth);
            into.incomplete += row.incomplete;
            into.streams += row.streams;
            if !row.reason.is_empty() {
                into.reason = row.reason;
            }
            into_spans.merge(spans, bounded);
        }
        for (key, (row, spans)) in other.engines {
            match self.engines.get_mut(&key) {
                Some((into, into_spans)) => {
                    into.copies += row.copies;
                    into.bytes += row.bytes;
                    into.staged += row.staged;
                    into.incomplete += row.incomplete;
                    into_spans.merge(spans, bounded);
                }
                None => {
                    self.engines.insert(key, (row, spans));
                }
            }
        }
        for (pool, row) in other.pools {
            match self.pools.get_mut(&pool) {
                Some(into) => {
                    into.allocations += row.allocations;
                    into.reused += row.reused;
                    into.bytes += row.bytes;
                    into.used_high = into.used_high.max(row.used_high);
                    into.reserved_high = into.reserved_high.max(row.reserved_high);
                }
                None => {
                    self.pools.insert(pool, row);
                }
            }
        }
        for (graph, row) in other.graphs {
            match self.graphs.get_mut(&graph) {
                Some(into) => {
                    into.launches += row.launches;
                    into.kernels += row.kernels;
                    into.eager += row.eager;
                    for q in row.queues {
                        if !into.queues.contains(&q) {
                            into.queues.push(q);
                        }
                    }
                }
                None => {
                    self.graphs.insert(graph, row);
                }
            }
        }
        let (w, o) = (&mut self.waits, other.waits);
        w.waits += o.waits;
        w.total_ns += o.total_ns;
        w.spin_only += o.spin_only;
        w.spin_ns += o.spin_ns;
        w.blocked += o.blocked;
        w.blocked_ns += o.blocked_ns;
    }

    pub fn into_stats(self) -> Stats {
        let by_time = |rows: &mut Vec<CallRow>| {
            rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)))
        };
        let mut api: Vec<CallRow> = self.api.into_values().collect();
        by_time(&mut api);
        let mut hsa: Vec<CallRow> = self.hsa.into_values().collect();
        by_time(&mut hsa);
        Stats {
            span_ns: self.window.map_or(0, |(first, last)| last - first),
            threads: self.threads.len() as u64,
            api,
            hsa,
            queues: self
                .queues
                .into_values()
                .map(|(mut row, spans)| {
                    row.busy_ns = spans.total();
                    row
                })
                .collect(),
            engines: self
                .engines
                .into_values()
                .map(|(mut row, spans)| {
                    row.busy_ns = spans.total();
                    row
                })
                .collect(),
            pools: self.pools.into_values().collect(),
            graphs: self.graphs.into_values().collect(),
            waits: self.waits,
        }
    }
}

/// Computes the stats tables from `events`.
pub fn summarize(events: &[TraceEvent]) -> Stats {
    let mut tally = Tally::default();
    for event in events {
        tally.add(event);
    }
    tally.into_stats()
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn usf(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e3)
}

fn call_table(f: &mut fmt::Formatter<'_>, title: &str, rows: &[CallRow]) -> fmt::Result {
    let total: u64 = rows.iter().map(|r| r.total_ns).sum();
    writeln!(f, "{title}")?;
    writeln!(
        f,
        "  {:<40} {:>9} {:>14} {:>13} {:>8}",
        "Name", "Calls", "Total (us)", "Average (us)", "Percent"
    )?;
    for r in rows {
        let pct = if total == 0 {
            0.0
        } else {
            r.total_ns as f64 * 100.0 / total as f64
        };
        let errors = if r.errors > 0 {
            format!("  ({} failed)", r.errors)
        } else {
            String::new()
        };
        writeln!(
            f,
            "  {:<40} {:>9} {:>14} {:>13} {:>8.2}{errors}",
            r.name,
            r.calls,
            usf(r.total_ns),
            usf(r.total_ns / r.calls.max(1)),
            pct
        )?;
    }
    if rows.is_empty() {
        writeln!(f, "  (none recorded)")?;
    }
    writeln!(f)
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "hipshim stats: {} ms recorded, {} host threads",
            ms(self.span_ns),
            self.threads
        )?;
        writeln!(f)?;
        call_table(f, "HIP API calls", &self.api)?;
        call_table(
            f,
            "HSA calls (every call hipshim made through its HSA function table while recording)",
            &self.hsa,
        )?;
        writeln!(f, "Queues")?;
        writeln!(
            f,
            "  {:>6} {:>6} {:>8} {:>8} {:>8} {:>10} {:>9} {:>9} {:>13} {:>10} {:>7}  Created as",
            "Queue",
            "Device",
            "Packets",
            "Kernels",
            "Barriers",
            "TraceBarr",
            "Doorbells",
            "MaxDepth",
            "Busy (us)",
            "Incomplete",
            "Streams",
        )?;
        for q in &self.queues {
            writeln!(
                f,
                "  {:>6} {:>6} {:>8} {:>8} {:>8} {:>10} {:>9} {:>9} {:>13} {:>10} {:>7}  {}",
                q.queue,
                q.device,
                q.packets,
                q.kernels,
                q.barriers,
                q.trace_barriers,
                q.doorbells,
                q.max_depth,
                usf(q.busy_ns),
                q.incomplete,
                q.streams,
                q.reason
            )?;
        }
        if self.queues.is_empty() {
            writeln!(f, "  (none)")?;
        }
        writeln!(f)?;
        writeln!(f, "Copy engines")?;
        writeln!(
            f,
            "  {:<10} {:>6} {:>9} {:>7} {:>14} {:>7} {:>13} {:>9} {:>10}",
            "Engine",
            "Device",
            "Direction",
            "Copies",
            "Bytes",
            "Staged",
            "Busy (us)",
            "GB/s",
            "Incomplete"
        )?;
        for e in &self.engines {
            writeln!(
                f,
                "  {:<10} {:>6} {:>9} {:>7} {:>14} {:>7} {:>13} {:>9.3} {:>10}",
                e.engine,
                e.device,
                e.direction,
                e.copies,
                e.bytes,
                e.staged,
                usf(e.busy_ns),
                e.gb_per_s(),
                e.incomplete
            )?;
        }
        if self.engines.is_empty() {
            writeln!(f, "  (none)")?;
        }
        writeln!(f)?;
        // Only for programs that used the stream-ordered allocator.
        if !self.pools.is_empty() {
            writeln!(f, "Memory pools (stream-ordered allocations)")?;
            writeln!(
                f,
                "  {:>8} {:>6} {:>7} {:>7} {:>14} {:>14} {:>14}",
                "Pool", "Device", "Allocs", "Reused", "Bytes", "Used high", "Reserved high"
            )?;
            for p in &self.pools {
                writeln!(
                    f,
                    "  {:>#8x} {:>6} {:>7} {:>7} {:>14} {:>14} {:>14}",
                    p.pool,
                    p.device,
                    p.allocations,
                    p.reused,
                    p.bytes,
                    p.used_high,
                    p.reserved_high
                )?;
            }
            writeln!(f)?;
        }
        // Only for programs that launched graphs.
        if !self.graphs.is_empty() {
            writeln!(f, "Graph launches")?;
            writeln!(
                f,
                "  {:>6} {:>8} {:>10} {:>8}  Queues",
                "Graph", "Launches", "Kernels", "Eager"
            )?;
            for g in &self.graphs {
                let queues: Vec<String> = g.queues.iter().map(u64::to_string).collect();
                writeln!(
                    f,
                    "  {:>6} {:>8} {:>10} {:>8}  {}",
                    g.graph,
                    g.launches,
                    g.kernels,
                    g.eager,
                    queues.join(",")
                )?;
            }
            writeln!(f)?;
        }
        let w = &self.waits;
        writeln!(f, "Signal waits")?;
        writeln!(
            f,
            "  {:>7} {:>14} {:>13} {:>10} {:>13} {:>8} {:>13}",
            "Waits",
            "Total (us)",
            "Average (us)",
            "Spin only",
            "Spin (us)",
            "Blocked",
            "Blocked (us)"
        )?;
        writeln!(
            f,
            "  {:>7} {:>14} {:>13} {:>10} {:>13} {:>8} {:>13}",
            w.waits,
            usf(w.total_ns),
            usf(w.total_ns / w.waits.max(1)),
            w.spin_only,
            usf(w.spin_ns),
            w.blocked,
            usf(w.blocked_ns)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(queue: u64, index: u64, kind: PacketKind, times: Option<(u64, u64)>) -> TraceEvent {
        TraceEvent::Packet(PacketEvent {
            queue,
            device: 0,
            index,
            kind,
            barrier: true,
            kernel: None,
            grid: [1; 3],
            workgroup: [1; 3],
            kernarg_bytes: 0,
            deps: vec![],
            completion_signal: 1,
            depth: index,
            doorbell: true,
            tid: 1,
            submit_ns: 0,
            start_ns: times.map(|t| t.0),
            end_ns: times.map(|t| t.1),
            api: None,
        })
    }

    fn api(name: &'static str, dur: u64, result: u32) -> TraceEvent {
        TraceEvent::Api(ApiEvent {
            tid: 1,
            name: name.into(),
            start_ns: 0,
            dur_ns: dur,
            result,
            id: 0,
        })
    }

    #[test]
    fn counts_and_times_per_api_queue_and_engine() {
        let events = vec![
            api("hipMalloc", 100, 0),
            api("hipMalloc", 300, 2),
            api("hipLaunchKernel", 50, 0),
            packet(0, 0, PacketKind::KernelDispatch, Some((10, 20))),
            packet(0, 1, PacketKind::BarrierAnd, Some((15, 30))),
            packet(0, 2, PacketKind::KernelDispatch, None),
            packet(1, 0, PacketKind::TraceBarrier, Some((40, 40))),
            TraceEvent::Copy(CopyEvent {
                engine: "sdma0".into(),
                device: 0,
                bytes: 2000,
                pieces: 1,
                direction: Direction::HostToDevice,
                staged: false,
                tid: 1,
                submit_ns: 0,
                start_ns: Some(0),
                end_ns: Some(1000),
                api: None,
            }),
            TraceEvent::Wait(WaitEvent {
                tid: 1,
                signal: 1,
                condition: "== 0".into(),
                start_ns: 0,
                dur_ns: 500,
                spin_ns: 100,
                blocked: true,
            }),
        ];
        let s = summarize(&events);
        assert_eq!(s.api[0].name, "hipMalloc");
        assert_eq!(
            (s.api[0].calls, s.api[0].total_ns, s.api[0].errors),
            (2, 400, 1)
        );
        let q0 = &s.queues[0];
        assert_eq!(
            (
                q0.packets,
                q0.kernels,
                q0.barriers,
                q0.incomplete,
                q0.max_depth,
                q0.busy_ns
            ),
            (3, 2, 1, 1, 3, 20)
        );
        assert_eq!(s.queues[1].trace_barriers, 1);
        assert_eq!(s.engines[0].gb_per_s(), 2.0);
        assert_eq!(
            (s.waits.blocked, s.waits.blocked_ns, s.waits.spin_ns),
            (1, 400, 100)
        );
        let text = s.to_string();
        assert!(text.contains("hipMalloc"), "{text}");
        assert_eq!(s.render(OutputFormat::Text, "stats"), text);

        let json: serde_json::Value =
            serde_json::from_str(&s.render(OutputFormat::Json, "stats")).unwrap();
        assert_eq!(json["schema"], "hipshim.stats");
        assert_eq!(json["schema_version"], schema::SCHEMA_VERSION);
        assert_eq!(json["api"][0]["name"], "hipMalloc");
        assert_eq!(json["api"][0]["total_ns"], 400);
        assert_eq!(json["queues"][0]["busy_ns"], 20);
        assert_eq!(json["engines"][0]["bytes"], 2000);
        assert_eq!(json["waits"]["blocked_ns"], 400);

        let csv = s.render(OutputFormat::Csv, "stats");
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "table,row,field,value");
        assert!(lines.contains(&"api,0,name,hipMalloc"), "{csv}");
        assert!(lines.contains(&"api,0,errors,1"), "{csv}");
        assert!(lines.contains(&"queues,1,trace_barriers,1"), "{csv}");
        assert!(lines.contains(&"waits,0,spin_ns,100"), "{csv}");
        assert!(
            lines.iter().any(|l| l.starts_with("recording,0,span_ns,")),
            "{csv}"
        );
    }

    /// A long run's events, made the same way each time they are asked for: per round an API
    /// call, a kernel and its trace barrier on one of two queues, a copy and a wait, with
    /// idle gaps between them (so every packet is a busy span of its own), from `offset` on.
    fn long_run(rounds: u64, tid: u64, offset: u64) -> impl Iterator<Item = TraceEvent> {
        (0..rounds).flat_map(move |r| {
            let t = offset + r * 1_000;
            let queue = r % 2;
            let mut kernel = packet(
                queue,
                2 * r,
                PacketKind::KernelDispatch,
                Some((t + 10, t + 60)),
            );
            let mut barrier = packet(
                queue,
                2 * r + 1,
                PacketKind::TraceBarrier,
                Some((t + 60, t + 60)),
            );
            for p in [&mut kernel, &mut barrier] {
                if let TraceEvent::Packet(p) = p {
                    p.tid = tid;
                    p.submit_ns = t;
                    p.depth = r % 7;
                }
            }
            [
                TraceEvent::Api(ApiEvent {
                    tid,
                    name: if r % 3 == 0 {
                        "hipMemcpy"
                    } else {
                        "hipLaunchKernel"
                    }
                    .into(),
                    start_ns: t,
                    dur_ns: 5 + r % 4,
                    result: u32::from(r % 100 == 0),
                    id: r,
                }),
                kernel,
                barrier,
                TraceEvent::Copy(CopyEvent {
                    engine: "sdma0".into(),
                    device: 0,
                    bytes: 4096,
                    pieces: 1,
                    direction: Direction::HostToDevice,
                    staged: r % 2 == 0,
                    tid,
                    submit_ns: t + 100,
                    start_ns: Some(t + 110),
                    end_ns: Some(t + 150 + r % 5),
                    api: None,
                }),
                TraceEvent::Wait(WaitEvent {
                    tid,
                    signal: 7,
                    condition: "== 0".into(),
                    start_ns: t + 100,
                    dur_ns: 60,
                    spin_ns: 20,
                    blocked: r % 2 == 1,
                }),
            ]
        })
    }

    /// A recording that keeps no events adds them to a bounded tally: its rows and spans
    /// stay as few as the queues, engines and functions, and its tables are those
    /// `summarize` makes from every event.
    #[test]
    fn a_bounded_tally_stays_small_and_makes_the_tables_summarize_makes() {
        const ROUNDS: u64 = 100_000;
        let mut tally = Tally::bounded();
        let mut rows_after_a_round = 0;
        for (i, event) in long_run(ROUNDS, 1, 0).enumerate() {
            tally.add(&event);
            if i == 4 * 5 {
                rows_after_a_round = tally.rows();
            }
        }
        assert_eq!(tally.rows(), rows_after_a_round);
        assert_eq!(tally.rows(), 2 + 2 + 1, "2 functions, 2 queues, 1 engine");
        let kept = |spans: &BusySpans| spans.spans.len();
        for (_, spans) in tally.queues.values() {
            assert!(kept(spans) <= SPANS_KEPT, "{} spans kept", kept(spans));
        }
        assert!(kept(&tally.engines.values().next().unwrap().1) <= SPANS_KEPT);

        let every_event: Vec<TraceEvent> = long_run(ROUNDS, 1, 0).collect();
        let want = summarize(&every_event);
        assert_eq!(tally.into_stats(), want);
        assert_eq!(want.queues[0].busy_ns, ROUNDS / 2 * 50);
        assert_eq!(want.api.iter().map(|r| r.calls).sum::<u64>(), ROUNDS);
        assert_eq!(want.waits.waits, ROUNDS);
    }

    /// Threads' tallies merged make the tables of all their events, also where one thread's
    /// spans settled and the other's (on the same queues, between them) came in any order.
    #[test]
    fn merged_tallies_make_the_tables_of_all_their_events() {
        let a: Vec<_> = long_run(3_000, 1, 0).collect();
        let b: Vec<_> = long_run(50, 2, 500).collect();
        let mut left = Tally::bounded();
        a.iter().for_each(|e| left.add(e));
        let mut right = Tally::bounded();
        b.iter().rev().for_each(|e| right.add(e));
        left.merge(right);
        let all: Vec<TraceEvent> = a.into_iter().chain(b).collect();
        let merged = left.into_stats();
        let want = summarize(&all);
        assert_eq!(merged.api, want.api);
        assert_eq!(merged.queues, want.queues.clone());
        assert_eq!((merged.threads, merged.span_ns), (2, want.span_ns));
        assert_eq!(merged, want);
    }

    #[test]
    fn busy_spans_join_what_overlaps_or_touches_in_any_order() {
        let mut spans = BusySpans::default();
        for (s, e) in [
            (50, 60),
            (0, 10),
            (10, 20),
            (5, 7),
            (30, 40),
            (35, 55),
            (70, 70),
        ] {
            spans.add(s, e, true);
        }
        let kept: Vec<(u64, u64)> = spans.spans.iter().map(|(&s, &e)| (s, e)).collect();
        assert_eq!(kept, [(0, 20), (30, 60), (70, 70)]);
        assert_eq!(spans.total(), 20 + 30);
    }
}
