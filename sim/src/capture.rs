//! `HSASIM_CAPTURE=PATH`: what a runtime asks of the device, as the device saw it, one JSON
//! object a line, so two runtimes' submissions for one program can be compared (AMD's
//! `libamdhip64` runs on hsasim too). Every line has an `event`:
//!
//! - `packet`: a packet a packet processor takes. `queue` (the queue's id, in creation order),
//!   `index` (the packet's index in it), `type` (`kernel_dispatch`, `barrier_and`,
//!   `barrier_or`, or the number of another type) and `packet`: the 64 bytes, in hex. A kernel
//!   dispatch adds `kernel` (the descriptor's symbol, `NAME.kd`, if loaded), `kernarg` (the
//!   segment's bytes in hex, as long as the metadata's `.kernarg_segment_size`) and `hidden`:
//!   each hidden argument the metadata lists, with its `kind` (`hidden_block_count_x`, ...),
//!   `offset`, `size` and the `value` the runtime wrote (hex; code object v4 and v5 alike, as
//!   the metadata says where each one is).
//! - `copy`: a copy a copy engine takes: `engine` (`NODE.INDEX`), `dst`, `src` and `size` (a
//!   rectangular copy: `rect` with pitches and extent instead), the number of dependency
//!   signals `deps` and whether it has a `completion` signal.
//! - `queue_create` / `queue_destroy`: `queue`, and on creation its `size` in packets and
//!   `queue_type` (0 multi-producer, 1 single-producer, 2 cooperative).
//! - `doorbell`: a doorbell store: `queue` and the `value`.
//!
//! Packets and copies are written when the device takes them, before they run, so one that
//! fails is captured too. Writing is serialised and flushed line by line: capture is for
//! inspection, not for timing.

use crate::copy_shape::CopyShape;
use hsa_abi::*;
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The open capture file of the process, if any (the first runtime to start opens it).
static FILE: Mutex<Option<File>> = Mutex::new(None);
/// Whether `FILE` is open, readable without the lock (doorbell stores ask on every ring).
static ON: AtomicBool = AtomicBool::new(false);

/// Opens (truncating) the capture file; a failure is reported and capture stays off.
pub fn open(path: &Path) {
    match File::create(path) {
        Ok(file) => {
            *FILE.lock() = Some(file);
            ON.store(true, Ordering::Release);
        }
        Err(e) => eprintln!(
            "hsasim: HSASIM_CAPTURE={}: {e}; not capturing",
            path.display()
        ),
    }
}

pub fn is_on() -> bool {
    ON.load(Ordering::Relaxed)
}

fn write_line(line: &serde_json::Value) {
    let mut file = FILE.lock();
    if let Some(f) = file.as_mut() {
        if writeln!(f, "{line}").and_then(|()| f.flush()).is_err() {
            eprintln!("hsasim: HSASIM_CAPTURE: write failed; not capturing any more");
            *file = None;
            ON.store(false, Ordering::Release);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Where one hidden argument lies in the kernarg segment: what the loader reads from a
/// kernel's metadata and a dispatch's line decodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiddenArgSlot {
    /// The `.value_kind`, e.g. `hidden_block_count_x`.
    pub kind: String,
    pub offset: u32,
    pub size: u32,
}

/// What the kernel dispatch at hand adds to its line.
pub struct DispatchDetail<'a> {
    pub kernel: Option<String>,
    pub kernarg: &'a [u8],
    pub hidden: &'a [HiddenArgSlot],
}

/// The hidden arguments' values, read from the kernarg bytes (little-endian, up to 8 bytes;
/// one that lies outside the captured bytes is left out).
fn hidden_values(d: &DispatchDetail<'_>) -> serde_json::Value {
    let decoded: Vec<serde_json::Value> = d
        .hidden
        .iter()
        .filter_map(|slot| {
            let start = slot.offset as usize;
            let bytes = d
                .kernarg
                .get(start..start.checked_add(slot.size as usize)?)?;
            let mut word = [0u8; 8];
            let n = bytes.len().min(8);
            word[..n].copy_from_slice(&bytes[..n]);
            Some(serde_json::json!({
                "kind": slot.kind,
                "offset": slot.offset,
                "size": slot.size,
                "value": format!("{:#x}", u64::from_le_bytes(word)),
            }))
        })
        .collect();
    serde_json::Value::Array(decoded)
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
        "event": "packet",
        "queue": queue,
        "index": index,
        "type": kind,
        "packet": hex(bytes),
    });
    if let Some(d) = dispatch {
        line["hidden"] = hidden_values(&d);
        line["kernel"] = serde_json::json!(d.kernel);
        line["kernarg"] = serde_json::json!(hex(d.kernarg));
    }
    write_line(&line);
}

/// A copy engine takes a copy.
pub fn copy(engine: (u32, u32), shape: &CopyShape, deps: usize, completion: bool) {
    let mut line = serde_json::json!({
        "event": "copy",
        "engine": format!("{}.{}", engine.0, engine.1),
        "deps": deps,
        "completion": completion,
    });
    match *shape {
        CopyShape::Linear { dst, src, size } => {
            line["dst"] = serde_json::json!(format!("{dst:#x}"));
            line["src"] = serde_json::json!(format!("{src:#x}"));
            line["size"] = serde_json::json!(size);
        }
        CopyShape::Rect {
            dst,
            dst_pitch,
            dst_slice,
            src,
            src_pitch,
            src_slice,
            range,
        } => {
            line["dst"] = serde_json::json!(format!("{dst:#x}"));
            line["src"] = serde_json::json!(format!("{src:#x}"));
            line["rect"] = serde_json::json!({
                "dst_pitch": dst_pitch, "dst_slice": dst_slice,
                "src_pitch": src_pitch, "src_slice": src_slice,
                "range": range,
            });
        }
        CopyShape::Prefetch => line["shape"] = serde_json::json!("Prefetch"),
    }
    write_line(&line);
}

/// A queue is created.
pub fn queue_created(queue: u64, size: u32, queue_type: u32) {
    write_line(&serde_json::json!({
        "event": "queue_create", "queue": queue, "size": size, "queue_type": queue_type,
    }));
}

/// A queue is destroyed.
pub fn queue_destroyed(queue: u64) {
    write_line(&serde_json::json!({ "event": "queue_destroy", "queue": queue }));
}

/// A doorbell is rung.
pub fn doorbell(queue: u64, value: i64) {
    write_line(&serde_json::json!({ "event": "doorbell", "queue": queue, "value": value }));
}
