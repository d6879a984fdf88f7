//! What one run of the policy experiment program printed ([`RunOutput`]) and the figures
//! measured from it ([`Metrics`]); shared by `bench policies`, its plot, and `bench processes`.

/// One kernel's device interval, in ticks of the measured clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelTime {
    pub stream: u32,
    pub start: u64,
    pub end: u64,
}

/// What one run of the program printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutput {
    pub streams: u32,
    pub kernels: u32,
    pub work_us: u64,
    pub churn: bool,
    pub clock_hz: f64,
    pub clock_attr_khz: i64,
    pub host_total_ns: u64,
    pub times: Vec<KernelTime>,
}

/// The measured figures of one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    pub kernels: usize,
    pub makespan_s: f64,
    pub throughput: f64,
    pub overlap: f64,
    pub peak: usize,
    pub vs_serial: f64,
    pub host_s: f64,
    /// Distinct HSA queues that ran kernels, when a trace was written.
    pub queues: Option<usize>,
}

pub fn parse_output(text: &str) -> Result<RunOutput, String> {
    let mut out = RunOutput::default();
    let mut saw_config = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(kind) = words.next() else { continue };
        let fields: Vec<(&str, &str)> = words.filter_map(|w| w.split_once('=')).collect();
        let get = |key: &str| -> Result<&str, String> {
            fields
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("line {line:?} has no {key}="))
        };
        let num = |key: &str| -> Result<u64, String> {
            get(key)?
                .parse()
                .map_err(|_| format!("line {line:?}: {key} is not a number"))
        };
        match kind {
            "config" => {
                saw_config = true;
                out.streams = num("streams")? as u32;
                out.kernels = num("kernels")? as u32;
                out.work_us = num("work_us")?;
                out.churn = get("churn").is_ok_and(|v| v == "1");
                out.clock_hz = get("clock_hz")?
                    .parse()
                    .map_err(|_| format!("line {line:?}: bad clock_hz"))?;
                out.clock_attr_khz = get("clock_attr_khz")?.parse().unwrap_or(0);
            }
            "host" => out.host_total_ns = num("total_ns")?,
            "kernel" => out.times.push(KernelTime {
                stream: num("stream")? as u32,
                start: num("start")?,
                end: num("end")?,
            }),
            _ => {}
        }
    }
    if !saw_config || out.clock_hz <= 0.0 {
        return Err("no `config` line with a clock rate".into());
    }
    let expected = out.streams as usize * out.kernels as usize;
    if out.times.len() != expected {
        return Err(format!(
            "{} kernel records, expected {expected}",
            out.times.len()
        ));
    }
    Ok(out)
}

/// Merges intervals into disjoint ones, sorted.
fn union(mut intervals: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    intervals.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

pub fn metrics(run: &RunOutput) -> Metrics {
    let times = &run.times;
    let first = times.iter().map(|t| t.start).min().unwrap_or(0);
    let last = times.iter().map(|t| t.end).max().unwrap_or(0);
    let ticks_to_s = |ticks: u64| ticks as f64 / run.clock_hz;
    let makespan_ticks = last.saturating_sub(first);

    // Per stream: when it had a kernel running.
    let mut streams: Vec<u32> = times.iter().map(|t| t.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let busy: Vec<Vec<(u64, u64)>> = streams
        .iter()
        .map(|&s| {
            union(
                times
                    .iter()
                    .filter(|t| t.stream == s)
                    .map(|t| (t.start, t.end))
                    .collect(),
            )
        })
        .collect();
    let busy_ticks: u64 = busy.iter().flatten().map(|(s, e)| e - s).sum();

    // Peak: sweep over the streams' busy intervals (an end before a start at the same
    // instant: touching intervals do not overlap).
    let mut edges: Vec<(u64, i32)> = busy
        .iter()
        .flatten()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    edges.sort_unstable();
    let (mut running, mut peak) = (0i32, 0i32);
    for (_, delta) in edges {
        running += delta;
        peak = peak.max(running);
    }

    let makespan_s = ticks_to_s(makespan_ticks);
    let serial_s = times.len() as f64 * run.work_us as f64 * 1e-6;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    Metrics {
        kernels: times.len(),
        makespan_s,
        throughput: ratio(times.len() as f64, makespan_s),
        overlap: ratio(busy_ticks as f64, makespan_ticks as f64),
        peak: peak.max(0) as usize,
        vs_serial: ratio(makespan_s, serial_s),
        host_s: run.host_total_ns as f64 * 1e-9,
        queues: None,
    }
}

/// A run of two streams with the given kernel times (stream, start, end), one tick per
/// microsecond: the figures stay readable in tests.
#[cfg(test)]
pub(super) fn two_stream_run(work_us: u64, times: &[(u32, u64, u64)]) -> RunOutput {
    RunOutput {
        streams: 2,
        kernels: (times.len() / 2) as u32,
        work_us,
        clock_hz: 1e6,
        clock_attr_khz: 1000,
        churn: false,
        host_total_ns: 0,
        times: times
            .iter()
            .map(|&(stream, start, end)| KernelTime { stream, start, end })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialized_streams_have_overlap_one() {
        // Two streams, two kernels each, one after another: 0-10, 10-20, 20-30, 30-40.
        let m = metrics(&two_stream_run(
            10,
            &[(0, 0, 10), (1, 10, 20), (0, 20, 30), (1, 30, 40)],
        ));
        assert!((m.makespan_s - 40e-6).abs() < 1e-12);
        assert!((m.overlap - 1.0).abs() < 1e-9);
        assert_eq!(m.peak, 1);
        assert!((m.vs_serial - 1.0).abs() < 1e-9);
        assert!((m.throughput - 4.0 / 40e-6).abs() < 1.0);
    }

    #[test]
    fn parallel_streams_have_overlap_equal_to_their_number() {
        let m = metrics(&two_stream_run(
            10,
            &[(0, 0, 10), (0, 10, 20), (1, 0, 10), (1, 10, 20)],
        ));
        assert!((m.overlap - 2.0).abs() < 1e-9);
        assert_eq!(m.peak, 2);
        assert!((m.vs_serial - 0.5).abs() < 1e-9);
    }

    #[test]
    fn partial_overlap_counts_only_the_shared_time() {
        // Stream 0 busy 0-20, stream 1 busy 10-30: 40 busy units over a makespan of 30.
        let m = metrics(&two_stream_run(
            10,
            &[(0, 0, 10), (0, 10, 20), (1, 10, 20), (1, 20, 30)],
        ));
        assert!((m.overlap - 40.0 / 30.0).abs() < 1e-9);
        assert_eq!(m.peak, 2);
    }

    #[test]
    fn the_programs_output_parses() {
        let text =
            "config streams=2 kernels=1 work_us=5 clock_hz=100000000 clock_attr_khz=100000\n\
                    host launch_ns=10 total_ns=2000\n\
                    kernel stream=0 index=0 start=100 end=600\n\
                    kernel stream=1 index=0 start=100 end=700\n";
        let out = parse_output(text).unwrap();
        assert_eq!(out.streams, 2);
        assert_eq!(out.clock_hz, 1e8);
        assert_eq!(out.host_total_ns, 2000);
        assert_eq!(
            out.times[1],
            KernelTime {
                stream: 1,
                start: 100,
                end: 700
            }
        );
    }

    #[test]
    fn missing_kernel_records_are_an_error() {
        let text = "config streams=2 kernels=1 work_us=5 clock_hz=1e8 clock_attr_khz=0\n\
                    kernel stream=0 index=0 start=100 end=600\n";
        assert!(parse_output(text).unwrap_err().contains("expected 2"));
    }
}
