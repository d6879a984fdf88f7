//! Device printf and assert through the hostcall protocol (`src/runtime/devices/hostcall.rs`): the
//! programs in `c_tests/hostcall/` on gfx942 and gfx90a (`unknown_service`: a service the host
//! does not offer is answered 0 and logged, never a hang), and the exact text and order of
//! `printf.hip`'s output, device lines between host lines, against `printf.expected`.

mod common;

use std::process::Command;

use common::ctest::{build, c_tests_dir, DEFAULT_TARGETS};

c_tests! {
    dir "hostcall";
    printf_gfx942 => "printf" on "gfx942";
    printf_gfx90a => "printf" on "gfx90a";
    assert_gfx942 => "assert" on "gfx942";
    assert_gfx90a => "assert" on "gfx90a";
    unknown_service_gfx942 => "unknown_service" on "gfx942";
    unknown_service_gfx90a => "unknown_service" on "gfx90a";
}

/// The lines of `text` with each block between two `unordered:` lines sorted (work-groups and
/// waves of one kernel print in whatever order they run; everything else must match exactly).
fn canonical(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut block: Option<Vec<String>> = None;
    for line in text.lines() {
        let marker = line == "unordered:";
        match (&mut block, marker) {
            (None, true) => block = Some(Vec::new()),
            (Some(b), true) => {
                b.sort();
                lines.extend(block.take().unwrap_or_default());
            }
            (Some(b), false) => b.push(line.to_owned()),
            (None, false) => lines.push(line.to_owned()),
        }
    }
    assert!(
        block.is_none(),
        "an `unordered:` block is not closed:\n{text}"
    );
    lines
}

/// Runs `printf.hip` on `target` with stdout a pipe (fully buffered, as when a program's
/// output is captured) and compares it with `printf.expected`.
fn printf_output_is_exact(target: &str) {
    let dir = c_tests_dir("hostcall");
    let targets: Vec<String> = DEFAULT_TARGETS.iter().map(|s| s.to_string()).collect();
    let program = build(&dir.join("printf.hip"), "printf", &targets);
    let mut cmd = Command::new(&program);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, target);
    let out = common::run(&mut cmd, common::program_timeout());
    let report = out.report(&cmd);
    assert!(out.status.success(), "printf ({target}) failed\n{report}");
    let expected = std::fs::read_to_string(dir.join("printf.expected")).unwrap();
    let (got, want) = (canonical(&out.stdout()), canonical(&expected));
    let first_difference = got
        .iter()
        .zip(&want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    assert!(
        got == want,
        "printf ({target}): stdout differs from printf.expected at line {}:\n  got:  {:?}\n  want: {:?}\n{report}",
        first_difference + 1,
        got.get(first_difference),
        want.get(first_difference)
    );
}

#[test]
fn printf_output_is_exact_gfx942() {
    printf_output_is_exact("gfx942");
}

#[test]
fn printf_output_is_exact_gfx90a() {
    printf_output_is_exact("gfx90a");
}
