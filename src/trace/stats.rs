//! The tables of `HIPSHIM_STATS` and `hipshim trace summarize`: computed in one place from
//! [`TraceEvent`]s, whether they were just recorded or read from a trace file.

use super::schema;
use super::*;
use crate::config::OutputFormat;
use serde::Serialize;
use std::collections::BTreeMap;
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

/// Union length of intervals.
fn busy(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let (mut total, mut cur): (u64, Option<(u64, u64)>) = (0, None);
    for (s, e) in spans {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// Computes the stats tables from `events`.
pub fn summarize(events: &[TraceEvent]) -> Stats {
    let mut stats = Stats::default();
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut seen = |t: u64| {
        first = first.min(t);
        last = last.max(t);
    };
    let mut api: BTreeMap<&str, CallRow> = BTreeMap::new();
    let mut hsa: BTreeMap<&str, CallRow> = BTreeMap::new();
    let mut queues: BTreeMap<u64, (QueueRow, Vec<(u64, u64)>)> = BTreeMap::new();
    let mut pools: BTreeMap<u64, PoolRow> = BTreeMap::new();
    let mut graphs: BTreeMap<u64, GraphRow> = BTreeMap::new();
    type EngineKey = (String, u32, Direction);
    let mut engines: BTreeMap<EngineKey, (EngineRow, Vec<(u64, u64)>)> = BTreeMap::new();
    let mut threads = std::collections::BTreeSet::new();
    for e in events {
        match e {
            TraceEvent::Thread { tid, .. } => {
                threads.insert(*tid);
            }
            TraceEvent::Api(a) => {
                threads.insert(a.tid);
                seen(a.start_ns);
                seen(a.start_ns + a.dur_ns);
                let row = api.entry(&a.name).or_insert_with(|| CallRow {
                    name: a.name.to_string(),
                    ..Default::default()
                });
                row.calls += 1;
                row.total_ns += a.dur_ns;
                row.errors += u64::from(a.result != 0);
            }
            TraceEvent::HsaCall {
                name,
                calls,
                total_ns,
            } => {
                let row = hsa.entry(name).or_insert_with(|| CallRow {
                    name: name.clone(),
                    ..Default::default()
                });
                row.calls += calls;
                row.total_ns += total_ns;
            }
            TraceEvent::Packet(p) => {
                seen(p.submit_ns);
                let (row, spans) = queues.entry(p.queue).or_insert_with(|| {
                    (
                        QueueRow {
                            queue: p.queue,
                            device: p.device,
                            ..Default::default()
                        },
                        Vec::new(),
                    )
                });
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
                    (Some(s), Some(e)) => {
                        seen(e);
                        spans.push((s, e.max(s)));
                    }
                    _ => row.incomplete += 1,
                }
            }
            TraceEvent::Copy(c) => {
                seen(c.submit_ns);
                let (row, spans) = engines
                    .entry((c.engine.clone(), c.device, c.direction))
                    .or_insert_with(|| {
                        (
                            EngineRow {
                                engine: c.engine.clone(),
                                device: c.device,
                                direction: c.direction.label().to_string(),
                                ..Default::default()
                            },
                            Vec::new(),
                        )
                    });
                row.copies += 1;
                row.bytes += c.bytes;
                row.staged += u64::from(c.staged);
                match (c.start_ns, c.end_ns) {
                    (Some(s), Some(e)) => {
                        seen(e);
                        spans.push((s, e.max(s)));
                    }
                    _ => row.incomplete += 1,
                }
            }
            TraceEvent::Wait(w) => {
                threads.insert(w.tid);
                let r = &mut stats.waits;
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
                seen(*ts_ns);
                let (row, _) = queues.entry(*queue).or_insert_with(|| {
                    (
                        QueueRow {
                            queue: *queue,
                            device: *device,
                            ..Default::default()
                        },
                        Vec::new(),
                    )
                });
                row.reason = reason.clone();
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
                threads.insert(*tid);
                seen(*ts_ns);
                let row = pools.entry(*pool).or_insert_with(|| PoolRow {
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
                threads.insert(*tid);
                seen(*ts_ns);
                let row = graphs.entry(*graph).or_insert_with(|| GraphRow {
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
                let (row, _) = queues.entry(*queue).or_insert_with(|| {
                    (
                        QueueRow {
                            queue: *queue,
                            device: *device,
                            ..Default::default()
                        },
                        Vec::new(),
                    )
                });
                row.streams += 1;
            }
        }
    }
    stats.span_ns = last.saturating_sub(first.min(last));
    stats.threads = threads.len() as u64;
    let by_time = |rows: &mut Vec<CallRow>| {
        rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)))
    };
    stats.api = api.into_values().collect();
    by_time(&mut stats.api);
    stats.hsa = hsa.into_values().collect();
    by_time(&mut stats.hsa);
    stats.queues = queues
        .into_values()
        .map(|(mut row, spans)| {
            row.busy_ns = busy(spans);
            row
        })
        .collect();
    stats.engines = engines
        .into_values()
        .map(|(mut row, spans)| {
            row.busy_ns = busy(spans);
            row
        })
        .collect();
    stats.pools = pools.into_values().collect();
    stats.graphs = graphs.into_values().collect();
    stats
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
}
