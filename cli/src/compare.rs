//! `hipshim compare -- PROGRAM [ARGS]`: runs a HIP program built for gfx90a (by Debian's
//! `hipcc`, linked to `libamdhip64.so.5`) twice on hsasim, under AMD's own runtime and under
//! hipshim, each with `HSASIM_CAPTURE`, and prints where the kernel dispatches the two submit
//! differ: header bits (barrier, acquire and release fence scopes), setup dimensions, grid and
//! work-group sizes, segment sizes, the kernel, the completion signal's presence, every 8-byte
//! word of the explicit arguments, and every hidden argument by name (block counts, group
//! sizes, remainders, offsets, grid dims, heap, hostcall, multigrid sync, queue pointer, ...:
//! the capture decodes them from the kernel's metadata, for code object v4 and v5 alike).
//! The runs' copies, doorbells and queues are counted side by side.
//!
//! Addresses are normalised: a word that looks like an address (at least 2^32, below 2^48)
//! matches any other such word, as buffers live at different addresses in the two runs.
//! Dispatches are paired in the order the device took them, which is the program's order for a
//! program that submits on one stream at a time; barrier packets are counted, not paired, as
//! the runtimes order streams with different packets.

use crate::args::LoadArgs;
use crate::run::Launch;
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
    /// The hidden arguments as (kind, offset, value), in the metadata's order.
    pub hidden: Vec<(String, u32, u64)>,
}

impl Dispatch {
    /// Bytes of explicit arguments: up to the first hidden argument (all of the segment if
    /// the capture decoded none).
    fn explicit_len(&self) -> usize {
        self.hidden
            .iter()
            .map(|(_, offset, _)| *offset as usize)
            .min()
            .unwrap_or(self.kernarg.len())
            .min(self.kernarg.len())
    }
}

/// What one run's capture holds.
#[derive(Debug, Default)]
pub struct Capture {
    pub dispatches: Vec<Dispatch>,
    pub barriers: usize,
    pub queues: std::collections::BTreeSet<u64>,
    pub copies: usize,
    pub doorbells: usize,
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
        match v["event"].as_str() {
            // Lines from before events were named are packets.
            Some("packet") | None => {}
            Some("copy") => {
                capture.copies += 1;
                continue;
            }
            Some("doorbell") => {
                capture.doorbells += 1;
                continue;
            }
            Some(_) => continue,
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
            hidden: v["hidden"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|h| {
                            let value = h["value"].as_str()?.trim_start_matches("0x");
                            Some((
                                h["kind"].as_str()?.to_owned(),
                                u32::try_from(h["offset"].as_u64()?).ok()?,
                                u64::from_str_radix(value, 16).ok()?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
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

/// Pairs the n-th dispatch of each kernel under AMD's runtime with the n-th of the same
/// kernel under hipshim (a runtime's own kernels, such as AMD's blit kernels for memset, have
/// no partner and are counted instead). Returns (index in AMD's order, AMD's, hipshim's).
fn pair<'a>(amd: &'a [Dispatch], ours: &'a [Dispatch]) -> Vec<(usize, &'a Dispatch, &'a Dispatch)> {
    let mut taken = vec![false; ours.len()];
    let mut pairs = Vec::new();
    for (i, a) in amd.iter().enumerate() {
        let partner = ours
            .iter()
            .enumerate()
            .position(|(j, b)| !taken[j] && b.kernel == a.kernel);
        if let Some(j) = partner {
            taken[j] = true;
            pairs.push((i, a, &ours[j]));
        }
    }
    pairs
}

/// A value as one token (the summary script splits report lines on blanks).
fn token(value: impl std::fmt::Debug) -> String {
    format!("{value:?}").replace(' ', "")
}

/// The differences between paired dispatches (in AMD's order), then one `dispatches` line
/// for each kernel the two runs dispatched a different number of times.
pub fn diff(amd: &[Dispatch], ours: &[Dispatch]) -> Vec<Difference> {
    let mut out = Vec::new();
    for (i, a, b) in pair(amd, ours) {
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
        differ("workgroup size", token(a.workgroup), token(b.workgroup));
        differ("grid size", token(a.grid), token(b.grid));
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
        let same = |x: u64, y: u64| x == y || (looks_like_address(x) && looks_like_address(y));
        for (n, (x, y)) in words(&a.kernarg[..a.explicit_len()])
            .into_iter()
            .zip(words(&b.kernarg[..b.explicit_len()]))
            .enumerate()
        {
            if !same(x, y) {
                differ(
                    &format!("kernarg +{}", 8 * n),
                    format!("{x:#x}"),
                    format!("{y:#x}"),
                );
            }
        }
        // Hidden arguments by kind (a kernel lists each once, but for `hidden_none`).
        for (kind, _, x) in a.hidden.iter().filter(|h| h.0 != "hidden_none") {
            match b.hidden.iter().find(|h| &h.0 == kind) {
                Some((_, _, y)) if same(*x, *y) => {}
                Some((_, _, y)) => differ(kind, format!("{x:#x}"), format!("{y:#x}")),
                None => differ(kind, format!("{x:#x}"), "(not decoded)".into()),
            }
        }
    }
    let mut kernels: Vec<&Option<String>> = amd.iter().chain(ours).map(|d| &d.kernel).collect();
    kernels.sort();
    kernels.dedup();
    for kernel in kernels {
        let count = |run: &[Dispatch]| run.iter().filter(|d| &d.kernel == kernel).count();
        let (x, y) = (count(amd), count(ours));
        if x != y {
            out.push(Difference {
                dispatch: amd.len(),
                kernel: kernel.clone().unwrap_or_else(|| "?".into()),
                field: "dispatches".into(),
                amd: x.to_string(),
                hipshim: y.to_string(),
            });
        }
    }
    out
}

/// The report: both runs' counts, then one line per difference.
pub fn report(amd: &Capture, ours: &Capture, differences: &[Difference]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:>10} {:>9} {:>7} {:>7} {:>10}",
        "runtime", "dispatches", "barriers", "copies", "queues", "doorbells"
    );
    for (name, c) in [("AMD CLR", amd), ("hipshim", ours)] {
        let _ = writeln!(
            out,
            "{name:<10} {:>10} {:>9} {:>7} {:>7} {:>10}",
            c.dispatches.len(),
            c.barriers,
            c.copies,
            c.queues.len(),
            c.doorbells
        );
    }
    if differences.is_empty() {
        let _ = writeln!(out, "the paired dispatches do not differ");
        return out;
    }
    let _ = writeln!(
        out,
        "\n{:>8}  {:<36} {:<24} {:<20} hipshim",
        "dispatch", "kernel", "field", "AMD CLR"
    );
    for d in differences {
        let _ = writeln!(
            out,
            "{:>8}  {:<36} {:<24} {:<20} {}",
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

    #[test]
    fn dispatches_pair_by_kernel_so_a_runtime_s_own_kernels_are_counted_not_paired() {
        let amd = format!(
            "{}\n{}\n",
            line("__amd_rocclr_fillBufferAligned.kd", 0x1502, 1, 0, &[]),
            line("user.kd", 0x1502, 1, 0, &[1])
        );
        let ours = line("user.kd", 0x1502, 1, 0, &[2]);
        let (a, b) = (parse_capture(&amd).unwrap(), parse_capture(&ours).unwrap());
        let d = diff(&a.dispatches, &b.dispatches);
        let fields: Vec<(usize, &str, &str)> = d
            .iter()
            .map(|d| (d.dispatch, d.kernel.as_str(), d.field.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                (1, "user.kd", "kernarg +0"),
                (2, "__amd_rocclr_fillBufferAligned.kd", "dispatches")
            ]
        );
    }

    #[test]
    fn hidden_arguments_are_compared_by_kind_and_counted_events_reported() {
        // Explicit: one pointer; hidden from byte 8: block count, queue pointer, hostcall.
        let with_hidden = |block_count: u64, queue: u64, hostcall: u64| {
            let mut kernarg = 0x7f00_0000_1000u64.to_le_bytes().to_vec();
            for v in [block_count, queue, hostcall] {
                kernarg.extend(v.to_le_bytes());
            }
            let hidden = format!(
                r#"[{{"kind":"hidden_block_count_x","offset":8,"size":4,"value":"{block_count:#x}"}},
                   {{"kind":"hidden_queue_ptr","offset":16,"size":8,"value":"{queue:#x}"}},
                   {{"kind":"hidden_hostcall_buffer","offset":24,"size":8,"value":"{hostcall:#x}"}}]"#
            )
            .replace('\n', "");
            let l = line("k.kd", 0x1502, 1, 0, &kernarg);
            format!(
                "{},\"event\":\"packet\",\"hidden\":{hidden}}}",
                &l[..l.len() - 1]
            )
        };
        let amd = format!(
            "{}\n{}\n",
            with_hidden(4, 0x7f12_0000_0000, 0x7f55_0000_0000),
            r#"{"event":"doorbell","queue":0,"value":0}"#
        );
        let ours = format!(
            "{}\n{}\n{}\n",
            with_hidden(4, 0x7e34_0000_0000, 0),
            r#"{"event":"copy","engine":"1.0","dst":"0x1","src":"0x2","size":8,"deps":0,"completion":true}"#,
            r#"{"event":"queue_create","queue":3,"size":64,"queue_type":0}"#
        );
        let (a, b) = (parse_capture(&amd).unwrap(), parse_capture(&ours).unwrap());
        assert_eq!((a.doorbells, a.copies, b.copies), (1, 1 - 1, 1));
        assert_eq!(a.dispatches[0].hidden.len(), 3);
        let d = diff(&a.dispatches, &b.dispatches);
        let fields: Vec<(&str, &str, &str)> = d
            .iter()
            .map(|d| (d.field.as_str(), d.amd.as_str(), d.hipshim.as_str()))
            .collect();
        // The queue pointers are both addresses; the hostcall buffer is missing in ours; the
        // hidden bytes are not compared a second time as kernarg words.
        assert_eq!(
            fields,
            [("hidden_hostcall_buffer", "0x7f5500000000", "0x0")]
        );
        assert!(report(&a, &b, &d).contains("doorbells"));
    }
}
