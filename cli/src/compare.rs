//! `hipshim compare -- PROGRAM [ARGS]`: runs a HIP program built for gfx90a (by Debian's
//! `hipcc`, linked to `libamdhip64.so.5`) twice on hsasim, under AMD's own runtime and under
//! hipshim, each with `HSASIM_CAPTURE`, and prints where the kernel dispatches the two submit
//! differ: header bits (barrier, acquire and release fence scopes), setup dimensions, grid and
//! work-group sizes, segment sizes, the kernel, the completion signal's presence and every
//! 8-byte word of the kernarg segment, explicit and hidden arguments alike.
//!
//! Addresses are normalised: a kernarg word that looks like an address (at least 2^32, below
//! 2^48) matches any other such word, as buffers live at different addresses in the two runs.
//! Dispatches are paired in the order the device took them, which is the program's order for a
//! program that submits on one stream at a time; barrier packets are counted, not paired, as
//! the runtimes order streams with different packets.

use crate::run::Launch;
use crate::LoadArgs;
use clap::Args;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Args)]
#[command(trailing_var_arg = true)]
pub struct CompareArgs {
    #[command(flatten)]
    load: LoadArgs,
    /// The program and its arguments (after `--`).
    #[arg(required = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

/// One kernel dispatch as a capture line describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub kernel: Option<String>,
    pub header: u16,
    pub setup: u16,
    pub workgroup: [u16; 3],
    pub grid: [u32; 3],
    pub private_segment: u32,
    pub group_segment: u32,
    pub completion_signal: bool,
    pub kernarg: Vec<u8>,
}

/// What one run's capture holds.
#[derive(Debug, Default)]
pub struct Capture {
    pub dispatches: Vec<Dispatch>,
    pub barriers: usize,
    pub queues: std::collections::BTreeSet<u64>,
}

fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {text:?}"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| format!("hex {text:?}: {e}")))
        .collect()
}

/// Reads an `HSASIM_CAPTURE` file.
pub fn parse_capture(text: &str) -> Result<Capture, String> {
    let mut capture = Capture::default();
    for (n, line) in text.lines().enumerate() {
        let bad = |why: String| format!("capture line {}: {why}", n + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if let Some(q) = v["queue"].as_u64() {
            capture.queues.insert(q);
        }
        match v["type"].as_str() {
            Some("kernel_dispatch") => {}
            Some("barrier_and" | "barrier_or") => {
                capture.barriers += 1;
                continue;
            }
            _ => continue,
        }
        let p = unhex(v["packet"].as_str().unwrap_or_default()).map_err(bad)?;
        if p.len() != 64 {
            return Err(bad(format!("a packet of {} bytes", p.len())));
        }
        let u16_at = |o: usize| u16::from_le_bytes([p[o], p[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(p[o..o + 8].try_into().unwrap());
        capture.dispatches.push(Dispatch {
            kernel: v["kernel"].as_str().map(str::to_owned),
            header: u16_at(0),
            setup: u16_at(2),
            workgroup: [u16_at(4), u16_at(6), u16_at(8)],
            grid: [u32_at(12), u32_at(16), u32_at(20)],
            private_segment: u32_at(24),
            group_segment: u32_at(28),
            completion_signal: u64_at(56) != 0,
            kernarg: unhex(v["kernarg"].as_str().unwrap_or_default()).map_err(bad)?,
        });
    }
    Ok(capture)
}

/// A field of one paired dispatch that differs.
#[derive(Debug, PartialEq, Eq)]
pub struct Difference {
    pub dispatch: usize,
    pub kernel: String,
    pub field: String,
    pub amd: String,
    pub hipshim: String,
}

fn looks_like_address(word: u64) -> bool {
    (1u64 << 32..1u64 << 48).contains(&word)
}

fn header_fields(h: u16) -> [(&'static str, String); 3] {
    [
        ("header barrier", ((h >> 8) & 1).to_string()),
        ("header acquire scope", scope((h >> 9) & 3)),
        ("header release scope", scope((h >> 11) & 3)),
    ]
}

fn scope(s: u16) -> String {
    match s {
        0 => "none".into(),
        1 => "agent".into(),
        2 => "system".into(),
        other => other.to_string(),
    }
}

/// The differences between paired dispatches (in order; extra ones on either side are one
/// difference each).
pub fn diff(amd: &[Dispatch], ours: &[Dispatch]) -> Vec<Difference> {
    let mut out = Vec::new();
    for (i, (a, b)) in amd.iter().zip(ours).enumerate() {
        let kernel = a.kernel.clone().unwrap_or_else(|| "?".into());
        let mut differ = |field: &str, x: String, y: String| {
            if x != y {
                out.push(Difference {
                    dispatch: i,
                    kernel: kernel.clone(),
                    field: field.to_owned(),
                    amd: x,
                    hipshim: y,
                });
            }
        };
        differ(
            "kernel",
            format!("{:?}", a.kernel),
            format!("{:?}", b.kernel),
        );
        for ((name, x), (_, y)) in header_fields(a.header)
            .into_iter()
            .zip(header_fields(b.header))
        {
            differ(name, x, y);
        }
        differ(
            "setup dimensions",
            (a.setup & 3).to_string(),
            (b.setup & 3).to_string(),
        );
        differ(
            "workgroup size",
            format!("{:?}", a.workgroup),
            format!("{:?}", b.workgroup),
        );
        differ(
            "grid size",
            format!("{:?}", a.grid),
            format!("{:?}", b.grid),
        );
        differ(
            "private segment",
            a.private_segment.to_string(),
            b.private_segment.to_string(),
        );
        differ(
            "group segment",
            a.group_segment.to_string(),
            b.group_segment.to_string(),
        );
        differ(
            "completion signal",
            a.completion_signal.to_string(),
            b.completion_signal.to_string(),
        );
        differ(
            "kernarg bytes",
            a.kernarg.len().to_string(),
            b.kernarg.len().to_string(),
        );
        let words = |k: &[u8]| -> Vec<u64> {
            k.chunks(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    u64::from_le_bytes(w)
                })
                .collect()
        };
        for (n, (x, y)) in words(&a.kernarg)
            .into_iter()
            .zip(words(&b.kernarg))
            .enumerate()
        {
            let same = x == y || (looks_like_address(x) && looks_like_address(y));
            if !same {
                differ(
                    &format!("kernarg +{}", 8 * n),
                    format!("{x:#x}"),
                    format!("{y:#x}"),
                );
            }
        }
    }
    if amd.len() != ours.len() {
        out.push(Difference {
            dispatch: amd.len().min(ours.len()),
            kernel: "-".into(),
            field: "dispatches".into(),
            amd: amd.len().to_string(),
            hipshim: ours.len().to_string(),
        });
    }
    out
}

/// The report: both runs' counts, then one line per difference.
pub fn report(amd: &Capture, ours: &Capture, differences: &[Difference]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:>10} {:>9} {:>7}",
        "runtime", "dispatches", "barriers", "queues"
    );
    for (name, c) in [("AMD CLR", amd), ("hipshim", ours)] {
        let _ = writeln!(
            out,
            "{name:<10} {:>10} {:>9} {:>7}",
            c.dispatches.len(),
            c.barriers,
            c.queues.len()
        );
    }
    if differences.is_empty() {
        let _ = writeln!(out, "the paired dispatches do not differ");
        return out;
    }
    let _ = writeln!(
        out,
        "\n{:>8}  {:<28} {:<22} {:<20} hipshim",
        "dispatch", "kernel", "field", "AMD CLR"
    );
    for d in differences {
        let _ = writeln!(
            out,
            "{:>8}  {:<28} {:<22} {:<20} {}",
            d.dispatch, d.kernel, d.field, d.amd, d.hipshim
        );
    }
    out
}

fn capture_run(mut cmd: std::process::Command, path: &Path, who: &str) -> Result<Capture, String> {
    // Threaded mode: AMD's runtime waits in ways hsasim's deterministic mode does not pump
    // (it spins on signal memory), so it would never finish there.
    cmd.env("HSASIM_CAPTURE", path)
        .env_remove("HSASIM_THREADS")
        .env("HIPSHIM_DEVICE", "sim");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run the program under {who}: {e}"))?;
    if !status.success() {
        eprintln!("hipshim compare: the program under {who} exited with {status}");
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "no capture from the run under {who} ({}): {e}",
            path.display()
        )
    })?;
    parse_capture(&text)
}

pub fn compare(args: &CompareArgs) -> Result<i32, String> {
    crate::bench::ops::amd_library()?;
    let mut base: Launch = args.load.launch()?;
    // Debian's hipcc builds for gfx90a: both runs simulate it unless told otherwise.
    base.gfx.get_or_insert_with(|| "gfx90a".into());
    let (program, program_args) = args
        .command
        .split_first()
        .ok_or("nothing to run: give the program after --")?;
    let dir = std::env::temp_dir().join(format!("hipshim-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let amd = capture_run(
        base.command_on_amd(program, program_args),
        &dir.join("amd.jsonl"),
        "AMD's runtime",
    );
    let ours = capture_run(
        base.command(program, program_args),
        &dir.join("hipshim.jsonl"),
        "hipshim",
    );
    let _ = std::fs::remove_dir_all(&dir);
    let (amd, ours) = (amd?, ours?);
    let differences = diff(&amd.dispatches, &ours.dispatches);
    print!("{}", report(&amd, &ours, &differences));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kernel: &str, header: u16, setup: u16, completion: u64, kernarg: &[u8]) -> String {
        let mut p = [0u8; 64];
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p[2..4].copy_from_slice(&setup.to_le_bytes());
        p[4..6].copy_from_slice(&64u16.to_le_bytes());
        p[6..8].copy_from_slice(&1u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&64u32.to_le_bytes());
        p[16..20].copy_from_slice(&1u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[56..64].copy_from_slice(&completion.to_le_bytes());
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        format!(
            r#"{{"queue":0,"index":0,"type":"kernel_dispatch","packet":"{}","kernel":"{kernel}","kernarg":"{}"}}"#,
            hex(&p),
            hex(kernarg)
        )
    }

    #[test]
    fn differences_are_found_field_by_field_with_addresses_normalised() {
        let args = |ptr: u64, n: u32| {
            let mut k = ptr.to_le_bytes().to_vec();
            k.extend(n.to_le_bytes());
            k.extend([0; 4]);
            k
        };
        let amd = format!(
            "{}\n{}\n",
            line("k.kd", 0x0b02, 3, 0, &args(0x7f00_1000_0000, 5)),
            r#"{"queue":0,"index":1,"type":"barrier_and","packet":"03"}"#
        );
        let ours = line("k.kd", 0x1502, 1, 0x5555_0000, &args(0x7e00_2000_0000, 6));
        let (a, b) = (parse_capture(&amd).unwrap(), parse_capture(&ours).unwrap());
        assert_eq!((a.dispatches.len(), a.barriers), (1, 1));
        let d = diff(&a.dispatches, &b.dispatches);
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "header acquire scope",
                "header release scope",
                "setup dimensions",
                "completion signal",
                "kernarg +8"
            ],
            "the pointer at +0 differs only in its address"
        );
        assert_eq!(
            (d[0].amd.as_str(), d[0].hipshim.as_str()),
            ("agent", "system")
        );
        assert!(report(&a, &b, &d).contains("header release scope"));
        assert!(diff(&a.dispatches, &a.dispatches).is_empty());
        assert_eq!(diff(&a.dispatches, &[]).last().unwrap().field, "dispatches");
    }
}
