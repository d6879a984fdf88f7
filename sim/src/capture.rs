//! `HSASIM_CAPTURE=PATH`: every packet a packet processor takes, as the device saw it, one
//! JSON object a line, so two runtimes' packet streams for one program can be compared
//! (AMD's `libamdhip64` runs on hsasim too). A line holds:
//!
//! - `queue` (the queue's id, in creation order), `index` (the packet's index in it);
//! - `type` (`kernel_dispatch`, `barrier_and`, `barrier_or`, or the number of another type)
//!   and `packet`: the 64 bytes, in hex;
//! - for a kernel dispatch: `kernel` (the descriptor's symbol, `NAME.kd`, if loaded) and
//!   `kernarg`: the segment's bytes in hex, as long as the descriptor's `kernarg_size`.
//!
//! Packets are written when the processor takes them, before they run, so a packet that fails
//! is captured too. Writing is serialised and flushed line by line: capture is for
//! inspection, not for timing.

use hsa_abi::*;
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::Path;

/// The open capture file of the process, if any (the first runtime to start opens it).
static FILE: Mutex<Option<File>> = Mutex::new(None);

/// Opens (truncating) the capture file; a failure is reported and capture stays off.
pub fn open(path: &Path) {
    match File::create(path) {
        Ok(file) => *FILE.lock() = Some(file),
        Err(e) => eprintln!(
            "hsasim: HSASIM_CAPTURE={}: {e}; not capturing",
            path.display()
        ),
    }
}

pub fn is_on() -> bool {
    FILE.lock().is_some()
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// What the kernel dispatch at hand adds to its line.
pub struct DispatchDetail<'a> {
    pub kernel: Option<String>,
    pub kernarg: &'a [u8],
}

/// Writes one packet's line.
pub fn packet(queue: u64, index: u64, bytes: &[u8; 64], dispatch: Option<DispatchDetail<'_>>) {
    let packet_type = u16::from_le_bytes([bytes[0], bytes[1]]) & 0xff;
    let kind = match packet_type {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => serde_json::json!("kernel_dispatch"),
        HSA_PACKET_TYPE_BARRIER_AND => serde_json::json!("barrier_and"),
        HSA_PACKET_TYPE_BARRIER_OR => serde_json::json!("barrier_or"),
        other => serde_json::json!(other),
    };
    let mut line = serde_json::json!({
        "queue": queue,
        "index": index,
        "type": kind,
        "packet": hex(bytes),
    });
    if let Some(d) = dispatch {
        line["kernel"] = serde_json::json!(d.kernel);
        line["kernarg"] = serde_json::json!(hex(d.kernarg));
    }
    let mut file = FILE.lock();
    if let Some(f) = file.as_mut() {
        if writeln!(f, "{line}").and_then(|()| f.flush()).is_err() {
            eprintln!("hsasim: HSASIM_CAPTURE: write failed; not capturing any more");
            *file = None;
        }
    }
}
