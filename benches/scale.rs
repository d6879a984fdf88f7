//! Scale benchmark: creating and destroying many streams and events on hsasim, in time and in
//! the memory the process keeps afterwards. Prints the figures; asserts nothing about time.
//!
//! `cargo bench --bench scale [-- STREAMS... [events N]]`. It builds the release libraries
//! (`cargo build --release -p hipshim -p hsasim`) and `c_tests/bench/scale.hip` with
//! `scripts/build-hip.sh`, then runs one process per round: 10,000 and 100,000 streams created
//! then destroyed (ms each way, destroy/create ratio), and 1,000,000 events created, recorded
//! and destroyed. Each round prints the resident set size after start-up, at its peak and
//! after everything was destroyed, and that last one against the start.

use std::path::Path;
use std::process::{Command, Stdio};

#[path = "shared/program.rs"]
mod program;
use program::{build_release_program, target_dir};

/// One round's line: `<what> N create_ms C destroy_ms D rss_start_kb S rss_peak_kb P
/// rss_after_kb A`, as fields by name.
struct Round {
    create_ms: f64,
    destroy_ms: f64,
    start_kb: f64,
    peak_kb: f64,
    after_kb: f64,
}

fn parse(line: &str) -> Option<Round> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let value = |key: &str| -> Option<f64> {
        let at = fields.iter().position(|f| *f == key)?;
        fields.get(at + 1)?.parse().ok()
    };
    Some(Round {
        create_ms: value("create_ms")?,
        destroy_ms: value("destroy_ms")?,
        start_kb: value("rss_start_kb")?,
        peak_kb: value("rss_peak_kb")?,
        after_kb: value("rss_after_kb")?,
    })
}

fn run(program: &Path, what: &str, n: u64) -> Round {
    let out = Command::new(program)
        .arg(what)
        .arg(n.to_string())
        .env("HIPSHIM_DEVICE", "sim")
        .env("HSASIM_GFX", "gfx942")
        .env_remove("HIPSHIM_TRACE")
        .env_remove("HIPSHIM_STATS")
        .env_remove("HIPSHIM_LOG")
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .stderr(Stdio::inherit())
        .output()
        .expect("the benchmark program runs");
    assert!(
        out.status.success(),
        "benchmark program failed: {:?}",
        out.status
    );
    let text = String::from_utf8_lossy(&out.stdout);
    parse(&text).unwrap_or_else(|| panic!("no round line in {text:?}"))
}

fn main() {
    // `cargo bench` passes `--bench`; anything else names rounds.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mut rounds: Vec<(String, u64)> = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        match word.as_str() {
            "events" | "streams" => {
                let n = words
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1_000_000);
                rounds.push((word.clone(), n));
            }
            n => rounds.push(("streams".into(), n.parse().expect("a count of streams"))),
        }
    }
    if rounds.is_empty() {
        rounds = vec![
            ("streams".into(), 10_000),
            ("streams".into(), 100_000),
            ("events".into(), 1_000_000),
        ];
    }
    let program = target_dir().join("bench").join("scale");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    build_release_program("c_tests/bench/scale.hip", &program);
    println!("create then destroy, one process per round (hsasim gfx942, release build)");
    println!(
        "{:<18} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>8}",
        "round", "create ms", "destroy ms", "ratio", "RSS start", "peak", "after", "after/start"
    );
    for (what, n) in rounds {
        let r = run(&program, &what, n);
        let label = format!("{n} {what}");
        println!(
            "{:<18} {:>10.1} {:>10.1} {:>8.2} {:>8.1}M {:>8.1}M {:>8.1}M {:>8.2}",
            label,
            r.create_ms,
            r.destroy_ms,
            r.destroy_ms / r.create_ms,
            r.start_kb / 1024.0,
            r.peak_kb / 1024.0,
            r.after_kb / 1024.0,
            r.after_kb / r.start_kb
        );
    }
}
