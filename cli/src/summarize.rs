//! `hipshim trace summarize`: the stats tables of a trace file, computed by the runtime's
//! own trace code (`amdhip64::trace`): the same tables HIPSHIM_STATS prints at exit.

use amdhip64::trace;
use std::path::Path;

pub fn summarize(file: &Path) -> Result<String, String> {
    let events = trace::read_trace(file).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(trace::summarize(&events).to_string())
}
