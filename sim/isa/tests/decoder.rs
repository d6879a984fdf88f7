//! The decoder against llvm-objdump-19: every instruction word of every test kernel must
//! decode to the mnemonic and operands llvm prints, for each target.

mod common;

use common::*;
use hsasim_isa::{decode, GfxModel};
use std::process::Command;

/// (text, words) for every instruction objdump prints.
fn objdump(co: &[u8], model: GfxModel) -> Vec<(String, Vec<u32>)> {
    let path = std::env::temp_dir().join(format!(
        "hsasim-isa-decoder-{}-{}.co",
        std::process::id(),
        model.processor()
    ));
    std::fs::write(&path, co).unwrap();
    let out = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={}", model.processor())])
        .arg(&path)
        .output()
        .expect("llvm-objdump-19 must be installed");
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut v = Vec::new();
    for line in text.lines() {
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
        v.push((normalize(asm), words));
    }
    v
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn decoder_matches_llvm_objdump_on_every_test_kernel() {
    let sources = [
        "vector_add.hip",
        "vector_add_implicit.hip",
        "vector_add_2d.hip",
        "corpus.hip",
    ];
    let (mut total, mut mnemonic_bad, mut operand_bad) = (0, 0, 0);
    let mut report = Vec::new();
    for model in MODELS {
        for src in sources {
            for cov in [4, 5] {
                let co = compile(&kernel_source(src), model, cov);
                for (expected, words) in objdump(&co, model) {
                    total += 1;
                    let got = match decode(model, &words) {
                        Ok(i) => normalize(&i.to_string()),
                        Err(e) => format!("<decode error: {}>", e.detail),
                    };
                    if got == expected {
                        continue;
                    }
                    let m_exp = expected.split(' ').next().unwrap_or("");
                    let m_got = got.split(' ').next().unwrap_or("");
                    if m_exp != m_got {
                        mnemonic_bad += 1;
                    } else {
                        operand_bad += 1;
                    }
                    if report.len() < 40 {
                        report.push(format!(
                            "{} {src}: {:08x?}\n   llvm: {expected}\n   ours: {got}",
                            model.processor(),
                            words
                        ));
                    }
                }
            }
        }
    }
    println!(
        "decoder check: {total} instructions, {mnemonic_bad} mnemonic and {operand_bad} operand mismatches"
    );
    for r in &report {
        println!("{r}");
    }
    assert!(
        total > 1000,
        "objdump produced too few instructions ({total})"
    );
    assert_eq!(mnemonic_bad + operand_bad, 0, "see the mismatches above");
}
