//! Instruction counts from callgrind: runs a command under `valgrind --tool=callgrind
//! --separate-threads=yes` and reads each thread's profile into self cost per object (the
//! executable or shared library the instructions belong to).
//!
//! Only the parts of the callgrind profile format that carry self cost matter here:
//! `ob=` names the object of the functions that follow (with name compression: `ob=(3) path`
//! defines id 3, a later `ob=(3)` refers to it); a cost line is position columns followed by
//! event counts; a `calls=` line makes the next cost line the inclusive cost of a call, which
//! is skipped (the callee's own lines already count it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One thread's instructions (the `Ir` event), by object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadProfile {
    /// Self instructions per object path.
    pub by_object: HashMap<String, u64>,
}

impl ThreadProfile {
    pub fn total(&self) -> u64 {
        self.by_object.values().sum()
    }

    /// Instructions in objects whose path satisfies `pick`.
    pub fn sum(&self, pick: impl Fn(&str) -> bool) -> u64 {
        self.by_object
            .iter()
            .filter(|(object, _)| pick(object))
            .map(|(_, n)| n)
            .sum()
    }
}

/// Every thread of one run: the first is the thread that started the program.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub threads: Vec<ThreadProfile>,
}

/// Parses one callgrind profile file.
pub fn parse(text: &str) -> Result<ThreadProfile, String> {
    let mut positions = 1usize;
    let mut ir_column: Option<usize> = None;
    let mut objects: HashMap<String, String> = HashMap::new();
    let mut current = String::from("???");
    let mut skip_next_cost = false;
    let mut profile = ThreadProfile::default();
    for (number, line) in text.lines().enumerate() {
        if let Some(spec) = line.strip_prefix("positions:") {
            positions = spec.split_whitespace().count().max(1);
        } else if let Some(spec) = line.strip_prefix("events:") {
            ir_column = spec.split_whitespace().position(|e| e == "Ir");
        } else if let Some(name) = line.strip_prefix("ob=") {
            current = resolve_name(&mut objects, name);
        } else if let Some(name) = line.strip_prefix("cob=") {
            // Defines a compressed name without changing the current object.
            resolve_name(&mut objects, name);
        } else if line.starts_with("calls=") {
            skip_next_cost = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            if std::mem::take(&mut skip_next_cost) {
                continue;
            }
            let Some(column) = ir_column else {
                return Err(format!(
                    "line {}: cost before an `events:` line with Ir",
                    number + 1
                ));
            };
            let mut fields = line.split_whitespace().skip(positions);
            let cost = match fields.nth(column) {
                None => 0,
                Some(text) => text
                    .parse::<u64>()
                    .map_err(|_| format!("line {}: bad cost {text:?}", number + 1))?,
            };
            *profile.by_object.entry(current.clone()).or_default() += cost;
        }
    }
    if ir_column.is_none() {
        return Err("no `events:` line naming Ir".into());
    }
    Ok(profile)
}

/// `(id) name` defines id, `(id)` refers to it, a bare name is itself.
fn resolve_name(names: &mut HashMap<String, String>, spec: &str) -> String {
    let spec = spec.trim();
    let Some(rest) = spec.strip_prefix('(') else {
        return spec.to_string();
    };
    let Some((id, name)) = rest.split_once(')') else {
        return spec.to_string();
    };
    let name = name.trim();
    if name.is_empty() {
        names.get(id).cloned().unwrap_or_else(|| format!("({id})"))
    } else {
        names.insert(id.to_string(), name.to_string());
        name.to_string()
    }
}

/// Whether valgrind can be run.
pub fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Runs `cmd` under callgrind with one profile per thread in `dir`, and reads them. With
/// `only_inside` non-empty, instructions count only while one of those functions runs (they
/// and everything they call), on any thread.
pub fn profile(cmd: Command, dir: &Path, only_inside: &[&str]) -> Result<Profile, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let base = dir.join("callgrind.out");
    for stale in thread_files(&base)? {
        let _ = std::fs::remove_file(stale);
    }
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut valgrind = Command::new("valgrind");
    valgrind
        .arg("--tool=callgrind")
        .arg("--separate-threads=yes")
        .arg(format!("--callgrind-out-file={}", base.display()));
    if !only_inside.is_empty() {
        valgrind.arg("--collect-atstart=no");
        for function in only_inside {
            valgrind.arg(format!("--toggle-collect={function}"));
        }
    }
    valgrind.arg(program).args(args);
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => valgrind.env(name, v),
            None => valgrind.env_remove(name),
        };
    }
    let output = valgrind
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the program failed under callgrind ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    let mut threads = Vec::new();
    for file in thread_files(&base)? {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        threads.push(parse(&text).map_err(|e| format!("{}: {e}", file.display()))?);
    }
    if threads.is_empty() {
        return Err(format!(
            "callgrind wrote no profile under {}",
            dir.display()
        ));
    }
    Ok(Profile { threads })
}

/// `BASE-01`, `BASE-02`, …: one file per thread, in thread order.
fn thread_files(base: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = base.parent().unwrap_or(Path::new("."));
    let prefix = format!(
        "{}-",
        base.file_name().and_then(|n| n.to_str()).unwrap_or("")
    );
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let thread = name.strip_prefix(&prefix)?.parse::<u32>().ok()?;
            Some((thread, e.path()))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, path)| path).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# callgrind format
version: 1
positions: line
events: Ir

ob=(1) /bin/prog
fl=(1) prog.c
fn=(1) main
10 5
+2 3
cob=(2) /lib/libhsasim.so
cfi=(2) sim.rs
cfn=(2) hsa_signal_load
calls=2 20
12 40
* 1

ob=(2)
fl=(2)
fn=(2)
20 40

ob=(3) /lib/libamdhip64.so
fl=(3) hip.rs
fn=(3) hipLaunchKernel
5 7

totals: 56
";

    #[test]
    fn self_cost_is_summed_per_object_and_call_costs_are_not_counted_twice() {
        let p = parse(SAMPLE).unwrap();
        assert_eq!(p.by_object["/bin/prog"], 9);
        assert_eq!(p.by_object["/lib/libhsasim.so"], 40);
        assert_eq!(p.by_object["/lib/libamdhip64.so"], 7);
        assert_eq!(p.total(), 56);
        assert_eq!(p.sum(|o| o.ends_with("libhsasim.so")), 40);
    }

    #[test]
    fn the_ir_column_is_found_among_several_events_and_positions() {
        let text = "positions: instr line\nevents: Dr Ir\nob=x\n0x10 3 100 7\n+4 * 1\n";
        let p = parse(text).unwrap();
        // Ir is the second event; a missing trailing cost is zero.
        assert_eq!(p.by_object["x"], 7);
    }

    #[test]
    fn a_profile_without_ir_is_an_error() {
        assert!(parse("events: Dr\nob=x\n1 2\n").is_err());
    }
}
