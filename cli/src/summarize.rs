//! `hipshim trace summarize` / `merge`: the stats tables of a trace file, computed by the runtime's
//! own trace code (`amdhip64::trace`): the same tables HIPSHIM_STATS prints at exit.

use crate::format::OutputFormat;
use amdhip64::trace;
use std::path::Path;

/// The tables in `format`; json is a `hipshim.trace-summary` document with the fields of
/// `hipshim.stats` (the same computation).
pub fn summarize(file: &Path, format: OutputFormat) -> Result<String, String> {
    let events = trace::read_trace(file).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(trace::summarize(&events).render(format, "trace-summary"))
}

/// `hipshim trace merge`: writes the merged trace to `output`; returns the per-process tables.
pub fn merge(
    files: &[std::path::PathBuf],
    output: &Path,
    sched: Option<&Path>,
) -> Result<String, String> {
    let merged = trace::merge::merge(files, sched).map_err(|e| e.to_string())?;
    let text = serde_json::to_string(&merged.document)
        .map_err(|e| format!("cannot write the merged trace: {e}"))?;
    std::fs::write(output, text).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    eprintln!(
        "hipshim: merged {} traces{} into {}",
        merged.processes.len(),
        if sched.is_some() {
            format!(" and {} slot intervals", merged.slot_intervals)
        } else {
            String::new()
        },
        output.display()
    );
    Ok(trace::merge::format_processes(&merged.processes))
}
