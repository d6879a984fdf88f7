//! The decoder against llvm-objdump-19 on AMD-built code: every gfx90a:xnack- code object
//! in the `.hip_fatbin` bundles of Debian's `librocrand1` and `librocsparse0` (ROCm 5.3,
//! code object v4). Skipped, with a message, when a library is not installed
//! (`apt-get install librocrand1 librocsparse0`).
//!
//! Figures (Debian 12, ROCm 5.3 packages): rocRAND 1 code object, 54,967 instructions;
//! rocSPARSE 111 code objects, 6,603,848 instructions (about 30 s, mostly objdump).

mod common;

use hsasim_isa::{decode, GfxModel};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const ROCRAND: &str = "/usr/lib/x86_64-linux-gnu/librocrand.so.1";
const ROCSPARSE: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0";
const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The code objects of every offload bundle in `.hip_fatbin` whose target id is `target`.
fn code_objects(lib: &[u8], target: &str) -> Vec<Vec<u8>> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(lib).expect("ELF");
    let sec = file
        .section_by_name(".hip_fatbin")
        .expect("no .hip_fatbin section");
    let data = sec.data().expect("section data");
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(found) = data[pos..].windows(MAGIC.len()).position(|w| w == MAGIC) {
        let start = pos + found;
        let count = u64_at(data, start + 24).unwrap_or(0) as usize;
        let mut at = start + 32;
        let mut end = start + 32;
        for _ in 0..count.min(64) {
            let (Some(off), Some(size), Some(id_len)) = (
                u64_at(data, at),
                u64_at(data, at + 8),
                u64_at(data, at + 16),
            ) else {
                break;
            };
            let id = &data[at + 24..at + 24 + id_len as usize];
            at += 24 + id_len as usize;
            let (off, size) = (start + off as usize, size as usize);
            end = end.max(off + size);
            if std::str::from_utf8(id).is_ok_and(|s| s.ends_with(target)) && size > 0 {
                out.push(data[off..off + size].to_vec());
            }
        }
        pos = end.max(start + 1);
    }
    out
}

/// Decodes every instruction objdump prints and compares; returns (total, mismatches).
fn check(co: &[u8], model: GfxModel, report: &mut Vec<String>) -> (u64, u64) {
    let path = std::env::temp_dir().join(format!("hsasim-real-world-{}.co", std::process::id()));
    std::fs::write(&path, co).unwrap();
    let mut child = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={}", model.processor())])
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("llvm-objdump-19 must be installed");
    let (mut total, mut bad) = (0, 0);
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(line) = line else { break };
        if !line.starts_with('\t') {
            continue;
        }
        let Some((asm, comment)) = line.split_once("//") else {
            continue;
        };
        let Some((_, hex)) = comment.split_once(':') else {
            continue;
        };
        let words: Vec<u32> = hex
            .split_whitespace()
            .take_while(|w| !w.starts_with('<'))
            .filter_map(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        if words.is_empty() {
            continue;
        }
        total += 1;
        let expected = asm.split_whitespace().collect::<Vec<_>>().join(" ");
        let got = match decode(model, &words) {
            Ok(i) => i
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            Err(e) => format!("<decode error: {}>", e.detail),
        };
        if got != expected {
            bad += 1;
            // One example per mnemonic llvm printed, so every kind of mismatch shows.
            let m = expected.split(' ').next().unwrap_or("").to_string();
            let seen = report.iter().any(|r: &String| {
                r.contains(&format!("llvm: {m} ")) || r.ends_with(&format!("llvm: {m}"))
            });
            if !seen && report.len() < 60 {
                report.push(format!("{words:08x?}\n   llvm: {expected}\n   ours: {got}"));
            }
        }
    }
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);
    (total, bad)
}

fn check_library(path: &str, package: &str) {
    let Ok(lib) = std::fs::read(path) else {
        println!("SKIPPED: {path} is not installed (apt-get install {package})");
        return;
    };
    let cos = code_objects(&lib, "gfx90a:xnack-");
    assert!(
        !cos.is_empty(),
        "{path}: no gfx90a:xnack- code objects found"
    );
    let mut report = Vec::new();
    let (mut total, mut bad) = (0, 0);
    for co in &cos {
        let (t, b) = check(co, GfxModel::Gfx90a, &mut report);
        total += t;
        bad += b;
    }
    println!(
        "{package}: {} gfx90a:xnack- code objects, {total} instructions, {bad} mismatches",
        cos.len()
    );
    for r in &report {
        println!("{r}");
    }
    assert!(total > 0);
    assert_eq!(bad, 0, "see the mismatches above");
}

#[test]
fn decoder_matches_llvm_objdump_on_rocrand() {
    check_library(ROCRAND, "librocrand1");
}

#[test]
fn decoder_matches_llvm_objdump_on_rocsparse() {
    if std::env::var_os("HSASIM_REAL_WORLD_ALL").is_none() {
        println!(
            "SKIPPED: rocSPARSE's ~180 MB of gfx90a code is checked with HSASIM_REAL_WORLD_ALL=1"
        );
        return;
    }
    check_library(ROCSPARSE, "librocsparse0");
}
