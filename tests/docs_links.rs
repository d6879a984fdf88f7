//! The documentation holds together: every relative Markdown link in the README, the
//! top-level guides, hsasim's README and `docs/**` points to a file or directory that exists
//! (anchors are not checked), and the README stays a front page of at most 200 lines.
//!
//! Plain std: the Markdown is read with a small scanner that knows fenced code blocks and
//! inline code spans (where `[x](y)` is not a link), inline links and images, and reference
//! definitions (`[name]: target`).

use std::fs;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 200;

/// The documents whose links are checked, besides everything under `docs/`.
const TOP_LEVEL: &[&str] = &[
    "README.md",
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "sim/README.md",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn markdown_under(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_under(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut docs: Vec<PathBuf> = TOP_LEVEL.iter().map(|name| root.join(name)).collect();
    markdown_under(&root.join("docs"), &mut docs);
    docs.sort();
    docs
}

/// A link target as written, with the line it is on (1-based).
#[derive(Debug, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// Removes inline code spans (`` `...` ``, any number of backticks) from one line, so that
/// link syntax quoted in code is not read as a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = &rest[start..start + ticks];
        let after = &rest[start + ticks..];
        match after.find(fence) {
            Some(end) => rest = &after[end + ticks..],
            // An unmatched run of backticks is literal text.
            None => {
                out.push_str(fence);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The destination of an inline link, given the text after its `(`: up to the matching `)`,
/// without an optional title or angle brackets.
fn destination(after_paren: &str) -> Option<String> {
    let mut depth = 0usize;
    for (i, c) in after_paren.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => {
                let inside = after_paren[..i].trim();
                let target = inside.split_whitespace().next().unwrap_or("");
                let target = target.trim_start_matches('<').trim_end_matches('>');
                return Some(target.to_string());
            }
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

fn links_in(text: &str) -> Vec<Link> {
    let mut links = Vec::new();
    let mut fence: Option<String> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = raw.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str()) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker: String = trimmed
                .chars()
                .take_while(|&c| c == '`' || c == '~')
                .collect();
            fence = Some(marker);
            continue;
        }
        let line = without_code_spans(raw);
        // Reference definitions: `[name]: target`.
        let stripped = line.trim_start();
        if stripped.starts_with('[') {
            if let Some(close) = stripped.find("]:") {
                let target = stripped[close + 2..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("");
                links.push(Link {
                    line: line_no,
                    target: target
                        .trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_string(),
                });
                continue;
            }
        }
        // Inline links and images: `](target)`.
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            if let Some(target) = destination(after) {
                links.push(Link {
                    line: line_no,
                    target,
                });
            }
            rest = after;
        }
    }
    links
}

/// Whether a target names a place in this repository rather than a web page or an anchor
/// of the same document.
fn is_relative(target: &str) -> bool {
    !(target.is_empty()
        || target.starts_with('#')
        || target.contains("://")
        || target.starts_with("mailto:"))
}

#[test]
fn every_relative_link_in_the_documentation_points_to_an_existing_file() {
    let root = repo_root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = fs::read_to_string(&doc)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", doc.display()));
        let dir = doc.parent().expect("a document lives in a directory");
        for link in links_in(&text) {
            if !is_relative(&link.target) {
                continue;
            }
            checked += 1;
            let path = link.target.split('#').next().unwrap_or("");
            let resolved = if let Some(from_root) = path.strip_prefix('/') {
                root.join(from_root)
            } else {
                dir.join(path)
            };
            if !resolved.exists() {
                let shown = doc.strip_prefix(&root).unwrap_or(&doc);
                broken.push(format!(
                    "{}:{}: {} (no {})",
                    shown.display(),
                    link.line,
                    link.target,
                    resolved.display()
                ));
            }
        }
    }
    assert!(
        checked > 0,
        "no relative links found: is the scanner reading the docs?"
    );
    assert!(
        broken.is_empty(),
        "{} broken relative link(s):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_readme_is_a_front_page_of_at_most_200_lines() {
    let readme = fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; the front page keeps at most {README_MAX_LINES} \
         (move detail into docs/)"
    );
}

#[test]
fn the_scanner_finds_links_and_skips_code() {
    let text = "\
See [a](a.md) and ![img](pics/b.png \"title\") and [web](https://example.com).
`[not](code.md)` but [yes](c.md#part) and [nested](d_(e).md).
```sh
[not](fenced.md)
```
[ref]: ref.md
";
    let targets: Vec<String> = links_in(text).into_iter().map(|l| l.target).collect();
    assert_eq!(
        targets,
        [
            "a.md",
            "pics/b.png",
            "https://example.com",
            "c.md#part",
            "d_(e).md",
            "ref.md"
        ]
    );
    assert!(is_relative("c.md#part"));
    assert!(!is_relative("#section"));
    assert!(!is_relative("https://example.com"));
}
