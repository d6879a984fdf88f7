//! The configuration reference (`docs/reference/configuration.md`) is what `hipshim config
//! reference` prints from the libraries' settings tables, and those tables hold every
//! variable the code reads, each once.

mod common;

use common::{hipshim_output, repo_root};
use std::collections::BTreeMap;
use std::path::Path;

const PAGE: &str = "docs/reference/configuration.md";
const REGENERATE: &str =
    "cargo run -q -p hipshim-cli -- config reference > docs/reference/configuration.md";

/// Names of the settings families that occur in the source but are no setting of either
/// library, each with why.
const NOT_SETTINGS: &[(&str, &str)] = &[(
    "HIPSHIM_PROFILE",
    "scripts/build-hip.sh's build profile, which `hipshim bench` sets for that script; no \
     library reads it",
)];

/// The directories whose Rust source is scanned: the libraries, the crates they are built
/// from, and the CLI (which sets settings for the programs it starts).
const SOURCES: &[&str] = &[
    "src",
    "sim/src",
    "sim/isa/src",
    "sim/sched/src",
    "host-pages/src",
    "hsa-abi/src",
    "config-doc/src",
    "cli/src",
];

fn generated() -> String {
    let out = hipshim_output(["config", "reference"]);
    assert!(out.status.success(), "{}", out.report());
    out.stdout
}

fn documented() -> Vec<&'static str> {
    amdhip64::config::SETTINGS
        .iter()
        .chain(hsasim::config::SETTINGS)
        .map(|doc| doc.name)
        .collect()
}

#[test]
fn the_committed_page_is_the_generated_one() {
    let committed = std::fs::read_to_string(repo_root().join(PAGE)).unwrap_or_default();
    let generated = generated();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "{PAGE} is not what the code says (first difference at line {}); regenerate it \
             with\n  {REGENERATE}\n--- committed ---\n{}\n--- generated ---\n{}",
            line + 1,
            committed.lines().nth(line).unwrap_or("(end of file)"),
            generated.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
    assert!(generated.lines().next().unwrap().contains(REGENERATE));
}

#[test]
fn every_variable_and_run_option_has_exactly_one_row() {
    let page = generated();
    let mut rows: BTreeMap<String, usize> = BTreeMap::new();
    for line in page.lines() {
        if let Some(first) = line.strip_prefix("| `") {
            let name = first.split('`').next().unwrap();
            let key = name.split(['[', ' ']).next().unwrap().to_string();
            *rows.entry(key).or_default() += 1;
        }
    }
    let twice: Vec<_> = rows.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "rows given twice: {twice:?}");
    let mut names = documented();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(
        before,
        names.len(),
        "a name is in both tables, or twice in one"
    );
    for name in &names {
        assert_eq!(rows.get(*name), Some(&1), "{name} has no row\n{page}");
    }
    for name in [
        "--policy",
        "--trace",
        "--stats",
        "--log",
        "--gfx",
        "--preload",
    ] {
        assert_eq!(rows.get(name), Some(&1), "{name} has no row\n{page}");
    }
}

#[test]
fn every_run_option_a_table_names_is_an_option_of_hipshim_run() {
    let page = generated();
    let options = page
        .split("## `hipshim run` options")
        .nth(1)
        .expect("the page lists the run options");
    let flags = amdhip64::config::SETTINGS
        .iter()
        .chain(hsasim::config::SETTINGS)
        .filter_map(|doc| Some((doc.run_flag?, doc.name)));
    for (flag, name) in flags {
        let row = options
            .lines()
            .find(|line| line.starts_with(&format!("| `{flag}")));
        let row = row.unwrap_or_else(|| {
            panic!("{name} says `hipshim run {flag}` sets it, but run has no {flag}")
        });
        assert!(row.contains(&format!("sets `{name}`")), "{row}");
    }
}

#[test]
fn every_variable_the_source_names_is_documented() {
    let documented = documented();
    let mut undocumented: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut seen_exceptions = Vec::new();
    for dir in SOURCES {
        for file in rust_files(&repo_root().join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for literal in string_literals(&text) {
                for name in variable_names(&literal) {
                    if documented.contains(&name.as_str()) {
                        continue;
                    }
                    if NOT_SETTINGS.iter().any(|(n, _)| *n == name) {
                        seen_exceptions.push(name);
                        continue;
                    }
                    let place = file
                        .strip_prefix(repo_root())
                        .unwrap()
                        .display()
                        .to_string();
                    undocumented.entry(name).or_default().push(place);
                }
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "variables in string literals of the source that neither settings table \
         (src/config.rs, sim/src/config.rs) documents: {undocumented:?}\n(add a SettingDoc, \
         or, for a name that is no setting, an entry with a reason to NOT_SETTINGS)"
    );
    for (name, _) in NOT_SETTINGS {
        assert!(
            seen_exceptions.iter().any(|n| n == name),
            "{name} is in NOT_SETTINGS but no longer in the source: remove it"
        );
    }
    // The scan finds what it must (a scanner that found nothing would pass the above).
    assert!(seen_exceptions.len() >= NOT_SETTINGS.len());
}

#[test]
fn the_scanner_reads_string_literals_only() {
    let source = r####"
        // "HIPSHIM_IN_A_COMMENT"
        /* "HIPSHIM_IN_A_BLOCK" */
        let q = '"'; let e = '\''; fn f<'a>(x: &'a str) {}
        let a = "x HIPSHIM_ONE y \" HSASIM_TWO_";
        let b = r#"raw "GPU_MAX_HW_QUEUES" here"#;
        let c = b"HSASIM_THREE";
        /// HIPSHIM_IN_A_DOC
        let d = "HIPSHIM_PROFILE=1 HIPSHIM_";
    "####;
    let names: Vec<String> = string_literals(source)
        .iter()
        .flat_map(|l| variable_names(l))
        .collect();
    assert_eq!(
        names,
        [
            "HIPSHIM_ONE",
            "HSASIM_TWO",
            "GPU_MAX_HW_QUEUES",
            "HSASIM_THREE",
            "HIPSHIM_PROFILE"
        ]
    );
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "no Rust files in {}", dir.display());
    files.sort();
    files
}

/// The contents of every string literal in `source` (plain, raw and byte strings), skipping
/// comments and char literals.
fn string_literals(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut literals = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            '\'' => {
                // A char literal ('x', '\n', '"') or a lifetime ('a).
                if chars.get(i + 1) == Some(&'\\') {
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !is_ident(chars[i - 1]) || chars[i - 1] == 'b') =>
            {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                let start = i + 1 + hashes;
                if chars.get(start) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let closing: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let mut end = start + 1;
                while end < chars.len() && !chars[end..].starts_with(&closing) {
                    end += 1;
                }
                literals.push(chars[start + 1..end.min(chars.len())].iter().collect());
                i = end + closing.len();
            }
            '"' => {
                let mut end = i + 1;
                let mut text = String::new();
                while end < chars.len() && chars[end] != '"' {
                    if chars[end] == '\\' {
                        end += 1;
                    }
                    if let Some(c) = chars.get(end) {
                        text.push(*c);
                    }
                    end += 1;
                }
                literals.push(text);
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    literals
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The variable names in `text`: `HIPSHIM_*`, `HSASIM_*` and `GPU_MAX_HW_QUEUES`, without a
/// trailing `_` (`HSASIM_SCHED_*` names the family of `HSASIM_SCHED`).
fn variable_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let at_start = i == 0 || !is_ident(bytes[i - 1] as char);
        let prefix = ["HIPSHIM_", "HSASIM_", "GPU_MAX_HW_QUEUES"]
            .into_iter()
            .find(|p| rest.starts_with(p));
        match prefix {
            Some(prefix) if at_start => {
                let len = rest
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(rest.len());
                let name = rest[..len].trim_end_matches('_');
                if name.len() > prefix.trim_end_matches('_').len() || prefix == "GPU_MAX_HW_QUEUES"
                {
                    names.push(name.to_string());
                }
                i += len.max(1);
            }
            _ => i += 1,
        }
    }
    names
}
