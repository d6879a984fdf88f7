//! `hipshim trace merge`: the traces of several processes on one timeline.
//!
//! Every hipshim trace counts its times from the moment its recording started and records
//! that moment on `CLOCK_MONOTONIC` (`origin_ns`), a clock shared by every process on the
//! machine; merging shifts each file by its origin's distance from the earliest one. Each
//! input keeps its own tracks (host threads, queues, copy engines) under process names that
//! say whose they are, with viewer pids renumbered so they do not collide, and flow arrows
//! renumbered likewise. A device service's event log (`hipshim device start --log`) adds a
//! track per hardware queue slot showing which process's queue held it when.
//!
//! The stats: [`ProcessRow`] per input, from the same computation as `HIPSHIM_STATS`.

use super::json::{parse_trace, trace_info, TraceError};
use super::{summarize, Stats};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Viewer pids per input: input k's original pid p becomes `(k + 1) * PIDS_PER_INPUT + p`.
const PIDS_PER_INPUT: u64 = 10;
/// The slots' viewer pid (below every input's).
const SLOTS_PID: u64 = 5;
/// Flow ids per input, so arrows of different processes never join.
const FLOW_IDS_PER_INPUT: u64 = 1 << 40;

/// One merged input's figures.
#[derive(Clone, Debug)]
pub struct ProcessRow {
    pub file: PathBuf,
    pub pid: u32,
    /// Where its timeline starts on the merged one.
    pub offset_ns: u64,
    pub stats: Stats,
}

/// The result of a merge.
pub struct Merged {
    pub document: Value,
    pub processes: Vec<ProcessRow>,
    /// Slot occupancy intervals drawn from the scheduler's log.
    pub slot_intervals: usize,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> TraceError {
    TraceError::Format(format!("{}: {why}", path.display()))
}

/// Merges the traces `inputs` (and a device service's event log `sched`) onto one timeline.
pub fn merge(inputs: &[PathBuf], sched: Option<&Path>) -> Result<Merged, TraceError> {
    let mut docs = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path).map_err(TraceError::Io)?;
        let value: Value = serde_json::from_str(&text).map_err(TraceError::Json)?;
        let info = trace_info(&value).ok_or_else(|| bad(path, "no hipshim section"))?;
        if info.origin_ns == 0 {
            return Err(bad(
                path,
                "it does not record when it started (written by an older hipshim), so it cannot be placed on a common clock",
            ));
        }
        docs.push((path.clone(), value, info));
    }
    let Some(base) = docs.iter().map(|(_, _, i)| i.origin_ns).min() else {
        return Err(TraceError::Format("no traces to merge".into()));
    };
    let mut events: Vec<Value> = Vec::new();
    let mut processes = Vec::new();
    for (k, (path, value, info)) in docs.iter().enumerate() {
        let offset_ns = info.origin_ns - base;
        let offset_us = offset_ns as f64 / 1000.0;
        let pid_base = (k as u64 + 1) * PIDS_PER_INPUT;
        let list = value
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(path, "no traceEvents array"))?;
        for e in list {
            let mut e = e.clone();
            let Some(obj) = e.as_object_mut() else {
                continue;
            };
            if let Some(pid) = obj.get("pid").and_then(Value::as_u64) {
                obj.insert("pid".into(), json!(pid_base + pid));
            }
            if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
                obj.insert("ts".into(), json!(ts + offset_us));
            }
            if let Some(id) = obj.get("id").and_then(Value::as_u64) {
                obj.insert("id".into(), json!(id + k as u64 * FLOW_IDS_PER_INPUT));
            }
            let is_meta = obj.get("ph").and_then(Value::as_str) == Some("M");
            let name = obj.get("name").and_then(Value::as_str).unwrap_or("");
            if is_meta && name == "process_name" {
                let old = obj
                    .get("args")
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                obj.insert(
                    "args".into(),
                    json!({ "name": format!("pid {}: {old}", info.pid) }),
                );
            } else if is_meta && name == "process_sort_index" {
                let old = obj
                    .get("args")
                    .and_then(|a| a.get("sort_index"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                obj.insert("args".into(), json!({ "sort_index": pid_base + old }));
            }
            events.push(e);
        }
        processes.push(ProcessRow {
            file: path.clone(),
            pid: info.pid,
            offset_ns,
            stats: summarize(&parse_trace(value)?),
        });
    }
    let slot_intervals = match sched {
        Some(log) => slot_events(log, base, &mut events)?,
        None => 0,
    };
    let pids: Vec<Value> = processes
        .iter()
        .map(|p| json!({ "pid": p.pid, "file": p.file.display().to_string(), "offset_ns": p.offset_ns }))
        .collect();
    let document = json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": { "producer": format!("hipshim {} trace merge", env!("CARGO_PKG_VERSION")) },
        "hipshim_merged": { "origin_ns": base, "processes": pids },
    });
    Ok(Merged {
        document,
        processes,
        slot_intervals,
    })
}

/// Draws the scheduler log's map..unmap intervals as one track per slot. Returns how many.
fn slot_events(log: &Path, base: u64, events: &mut Vec<Value>) -> Result<usize, TraceError> {
    let text = std::fs::read_to_string(log).map_err(TraceError::Io)?;
    let us = |ns: u64| ns.saturating_sub(base) as f64 / 1000.0;
    // slot -> (pid, queue, since)
    let mut open: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
    let mut slots: BTreeMap<u64, u64> = BTreeMap::new();
    let mut drawn = 0;
    let mut last_ts = base;
    let push_slice = |events: &mut Vec<Value>,
                      slot: u64,
                      pipe: u64,
                      pid: u64,
                      queue: u64,
                      from: u64,
                      to: u64| {
        events.push(json!({
            "ph": "X", "cat": "slot", "name": format!("pid {pid} queue {queue}"),
            "pid": SLOTS_PID, "tid": slot, "ts": us(from), "dur": to.saturating_sub(from) as f64 / 1000.0,
            "args": { "pid": pid, "queue_id": queue, "slot": slot, "pipe": pipe },
        }));
    };
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e: Value =
            serde_json::from_str(line).map_err(|err| bad(log, format!("line {}: {err}", n + 1)))?;
        let get = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
        let ts = get("ts_ns");
        last_ts = last_ts.max(ts);
        match e.get("ev").and_then(Value::as_str).unwrap_or("") {
            "map" => {
                slots.insert(get("slot"), get("pipe"));
                open.insert(get("slot"), (get("pid"), get("queue_id"), ts));
            }
            "unmap" => {
                if let Some((pid, queue, since)) = open.remove(&get("slot")) {
                    push_slice(events, get("slot"), get("pipe"), pid, queue, since, ts);
                    drawn += 1;
                }
            }
            kind @ ("runlist" | "slice") => events.push(json!({
                "ph": "i", "s": "p", "cat": "sched",
                "name": if kind == "runlist" { format!("runlist update ({} processes, {} queues{})", get("processes"), get("queues"),
                    if e.get("oversubscribed").and_then(Value::as_bool) == Some(true) { ", oversubscribed" } else { "" }) } else { "time slice".to_string() },
                "pid": SLOTS_PID, "tid": 0, "ts": us(ts),
            })),
            _ => {}
        }
    }
    // Still mapped when the log ended.
    for (slot, (pid, queue, since)) in open {
        let pipe = slots.get(&slot).copied().unwrap_or(0);
        push_slice(events, slot, pipe, pid, queue, since, last_ts);
        drawn += 1;
    }
    events.push(json!({"ph": "M", "name": "process_name", "pid": SLOTS_PID, "tid": 0, "args": {"name": "hardware queue slots (device service)"}}));
    events.push(json!({"ph": "M", "name": "process_sort_index", "pid": SLOTS_PID, "tid": 0, "args": {"sort_index": 0}}));
    for (slot, pipe) in &slots {
        events.push(json!({"ph": "M", "name": "thread_name", "pid": SLOTS_PID, "tid": slot, "args": {"name": format!("slot {slot} (pipe {pipe})")}}));
    }
    Ok(drawn)
}

/// The per-process table, then each process's queue rows with its pid.
pub fn format_processes(rows: &[ProcessRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Processes");
    let _ = writeln!(
        out,
        "  {:>8} {:>10} {:>10} {:>9} {:>7} {:>8} {:>13} {:>10} {:>13}  File",
        "Pid",
        "Start (us)",
        "Span (us)",
        "API calls",
        "Queues",
        "Kernels",
        "Busy (us)",
        "Waits",
        "Wait (us)"
    );
    for r in rows {
        let s = &r.stats;
        let _ = writeln!(
            out,
            "  {:>8} {:>10.1} {:>10.1} {:>9} {:>7} {:>8} {:>13.1} {:>10} {:>13.1}  {}",
            r.pid,
            r.offset_ns as f64 / 1e3,
            s.span_ns as f64 / 1e3,
            s.api.iter().map(|c| c.calls).sum::<u64>(),
            s.queues.len(),
            s.queues.iter().map(|q| q.kernels).sum::<u64>(),
            s.queues.iter().map(|q| q.busy_ns).sum::<u64>() as f64 / 1e3,
            s.waits.waits,
            s.waits.total_ns as f64 / 1e3,
            r.file.display()
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Queues per process");
    let _ = writeln!(
        out,
        "  {:>8} {:>6} {:>6} {:>8} {:>8} {:>9} {:>13}",
        "Pid", "Queue", "Device", "Packets", "Kernels", "MaxDepth", "Busy (us)"
    );
    for r in rows {
        for q in &r.stats.queues {
            let _ = writeln!(
                out,
                "  {:>8} {:>6} {:>6} {:>8} {:>8} {:>9} {:>13.1}",
                r.pid,
                q.queue,
                q.device,
                q.packets,
                q.kernels,
                q.max_depth,
                q.busy_ns as f64 / 1e3
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::json::{write_trace, TraceInfo};
    use crate::trace::{PacketEvent, PacketKind, TraceEvent};

    fn kernel(queue: u64, start: u64, end: u64) -> TraceEvent {
        TraceEvent::Packet(PacketEvent {
            queue,
            device: 0,
            index: 0,
            kind: PacketKind::KernelDispatch,
            barrier: false,
            kernel: Some("k".into()),
            grid: [1, 1, 1],
            workgroup: [1, 1, 1],
            kernarg_bytes: 0,
            deps: vec![],
            completion_signal: 1,
            depth: 0,
            doorbell: true,
            tid: 7,
            submit_ns: start,
            start_ns: Some(start),
            end_ns: Some(end),
            api: None,
        })
    }

    fn write(dir: &Path, name: &str, pid: u32, origin_ns: u64, events: &[TraceEvent]) -> PathBuf {
        let path = dir.join(name);
        let mut out = Vec::new();
        let info = TraceInfo {
            pid,
            end_ns: 10_000,
            clock: "test".into(),
            origin_ns,
        };
        write_trace(&mut out, events, &info).unwrap();
        std::fs::write(&path, out).unwrap();
        path
    }

    #[test]
    fn traces_land_on_one_clock_with_their_own_tracks_and_rows() {
        let dir = std::env::temp_dir().join(format!("hipshim-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = write(&dir, "a.json", 100, 1_000_000, &[kernel(0, 1000, 3000)]);
        let b = write(
            &dir,
            "b.json",
            200,
            1_005_000,
            &[kernel(1000, 0, 2000), kernel(1001, 0, 4000)],
        );
        let log = dir.join("sched.jsonl");
        std::fs::write(
            &log,
            "{\"ev\":\"runlist\",\"ts_ns\":1000000,\"oversubscribed\":true,\"queues\":3,\"processes\":2}\n\
             {\"ev\":\"map\",\"ts_ns\":1000500,\"pid\":100,\"queue_id\":0,\"slot\":2,\"pipe\":0}\n\
             {\"ev\":\"unmap\",\"ts_ns\":1004000,\"pid\":100,\"queue_id\":0,\"slot\":2,\"pipe\":0}\n\
             {\"ev\":\"map\",\"ts_ns\":1005000,\"pid\":200,\"queue_id\":1000,\"slot\":2,\"pipe\":0}\n",
        )
        .unwrap();
        let m = merge(&[a.clone(), b.clone()], Some(&log)).unwrap();
        assert_eq!(m.slot_intervals, 2, "one closed, one still open at the end");
        assert_eq!(
            m.processes
                .iter()
                .map(|p| (p.pid, p.offset_ns))
                .collect::<Vec<_>>(),
            [(100, 0), (200, 5000)]
        );
        let events = m.document["traceEvents"].as_array().unwrap();
        let packets: Vec<(u64, f64)> = events
            .iter()
            .filter(|e| e["cat"] == "packet")
            .map(|e| (e["pid"].as_u64().unwrap(), e["ts"].as_f64().unwrap()))
            .collect();
        // Process a's packet at 1 us on its own clock; b's at 0 us on its own, 5 us later.
        assert!(packets.contains(&(12, 1.0)), "{packets:?}");
        assert!(packets.contains(&(22, 5.0)), "{packets:?}");
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "process_name")
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("pid 100: ")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("pid 200: ")),
            "{names:?}"
        );
        assert!(names.contains(&"hardware queue slots (device service)"));
        let slot: Vec<&Value> = events.iter().filter(|e| e["cat"] == "slot").collect();
        assert_eq!(slot[0]["name"], "pid 100 queue 0");
        assert_eq!(slot[0]["ts"].as_f64(), Some(0.5));
        let table = format_processes(&m.processes);
        let kernels: Vec<&str> = table
            .lines()
            .filter(|l| l.contains(".json"))
            .map(|l| l.split_whitespace().nth(5).unwrap())
            .collect();
        assert_eq!(kernels, ["1", "2"], "{table}");
        assert!(merge(&[], None).is_err());
        // A merged file is not read back as one process's trace.
        assert!(parse_trace(&m.document)
            .unwrap_err()
            .to_string()
            .contains("merged trace"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
