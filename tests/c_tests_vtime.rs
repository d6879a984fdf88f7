//! Virtual time (`HSASIM_TIME=virtual`): `c_tests/vtime/virtual_clock.hip` run threaded and
//! deterministic, with one interpreter worker and several, must print the same virtual
//! times every time (and pass its own checks: durations that follow the work, a query right
//! after a launch that finds the kernel running, two streams that overlap).

mod common;

fn runs_agree(target: &str) {
    let (program, spec) = common::ctest::build_area_program("vtime", "virtual_clock");
    let run = |deterministic: bool, workers: &str| {
        common::ctest::run_in_mode(&program, "virtual_clock", target, deterministic, |cmd| {
            cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
            cmd.env("HSASIM_TIME", "virtual")
                .env("HSASIM_WORKERS", workers);
        })
    };
    let first = run(false, "2");
    assert!(first.contains("virtual_clock: PASSED"), "{first}");
    for (deterministic, workers) in [(false, "1"), (true, "2"), (false, "2")] {
        let again = run(deterministic, workers);
        assert_eq!(
            again, first,
            "virtual times differ (deterministic {deterministic}, {workers} workers)"
        );
    }
}

#[test]
fn virtual_times_are_the_same_in_every_mode_gfx942() {
    runs_agree("gfx942");
}

#[test]
fn virtual_times_are_the_same_in_every_mode_gfx90a() {
    runs_agree("gfx90a");
}

/// The spans of a trace that say when things happened: API calls, packets and copies, as
/// (category, name, start, duration), in order. Waits are left out: whether a wait spun or
/// blocked is the host's doing.
fn timeline(trace: &std::path::Path) -> Vec<(String, String, String, String)> {
    let text = std::fs::read_to_string(trace).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let clock = doc["hipshim"]["clock"].as_str().unwrap_or_default();
    assert!(
        clock.contains("virtual"),
        "the trace is not on the virtual clock: {clock}"
    );
    let mut spans: Vec<_> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["ph"] == "X" && ["api", "packet", "copy"].contains(&e["cat"].as_str().unwrap_or(""))
        })
        .map(|e| {
            (
                e["cat"].to_string(),
                e["name"].to_string(),
                e["ts"].to_string(),
                e["dur"].to_string(),
            )
        })
        .collect();
    spans.sort();
    spans
}

/// Under virtual time a trace puts host calls and device work on the one virtual time line,
/// and it is the same on every run, threaded or deterministic.
#[test]
fn traces_are_on_the_virtual_clock_and_repeat_exactly() {
    let (program, spec) = common::ctest::build_area_program("vtime", "virtual_clock");
    let dir = common::target_dir().join("vtime-traces");
    std::fs::create_dir_all(&dir).unwrap();
    let traced = |deterministic: bool| {
        let path = dir.join(format!("trace-{deterministic}.json"));
        let _ = std::fs::remove_file(&path);
        common::ctest::run_in_mode(&program, "virtual_clock", "gfx942", deterministic, |cmd| {
            cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
            cmd.env("HSASIM_TIME", "virtual")
                .env("HIPSHIM_TRACE", &path);
        });
        timeline(&path)
    };
    let first = traced(false);
    assert!(
        first.iter().any(|s| s.0 == "\"packet\"") && first.iter().any(|s| s.0 == "\"api\""),
        "the trace has no packets or no API calls"
    );
    for deterministic in [false, true] {
        let again = traced(deterministic);
        let differing = first.iter().zip(&again).find(|(a, b)| a != b);
        assert!(
            again.len() == first.len() && differing.is_none(),
            "the trace differs (deterministic {deterministic}): {} vs {} spans, first difference {differing:?}",
            first.len(),
            again.len()
        );
    }
}

/// A kernel that spins until the host writes memory, while the host only queries its
/// stream: the queries answer at once (threaded mode: see `c_tests/vtime/host_handshake.hip`).
#[test]
fn queries_of_a_kernel_waiting_for_the_host_answer_at_once() {
    for target in ["gfx942", "gfx90a"] {
        let (program, spec) = common::ctest::build_area_program("vtime", "host_handshake");
        let out = common::ctest::run_in_mode(&program, "host_handshake", target, false, |cmd| {
            cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        });
        assert!(out.contains("host_handshake: PASSED"), "{out}");
    }
}
