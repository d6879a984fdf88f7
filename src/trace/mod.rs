//! What hipshim records about the work it does, for the timeline file (`HIPSHIM_TRACE`) and
//! the tables printed at exit (`HIPSHIM_STATS`).
//!
//! - [`TraceEvent`] is the one data model: the live recorder ([`record`]) produces it, the
//!   trace writer ([`json`]) turns it into Chrome/Perfetto JSON, [`read_trace`] turns such a
//!   file back into it, and [`summarize`] computes the stats tables from it — so
//!   `hipshim trace summarize F` and `HIPSHIM_STATS` print the same numbers.
//! - All times are nanoseconds on one host clock (`CLOCK_MONOTONIC`) relative to the moment
//!   recording started. Device timestamps (packet and copy start/end) are converted to it; see
//!   [`record`] for the alignment.
//! - [`merge`] puts several processes' traces on one timeline (`hipshim trace merge`): each
//!   file records its origin on `CLOCK_MONOTONIC`, which all processes share.
//! - When neither variable is set, every hook costs one relaxed atomic load ([`recording`]).
//! - The HSA layer (`hsa/`) sits below this module and reports through the trace probe
//!   (`crate::probe`: the recording flag, the clock, HSA call counts and an event sink taking
//!   plain data), which [`record`] installs itself into; so `trace` uses `hsa` and never the
//!   other way round.

pub mod json;
pub mod merge;
pub mod names;
pub mod record;
pub mod schema;
pub mod stats;

pub use crate::probe::recording;
pub use json::{read_trace, write_trace, TraceError};
pub use stats::{summarize, Stats};

use std::borrow::Cow;
use std::sync::Arc;

/// One recorded fact. Times are ns since recording started (see the module comment).
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// A host thread that recorded something: its track in the timeline.
    Thread { tid: u64, name: String },
    /// One HIP API call.
    Api(ApiEvent),
    /// One AQL packet published through a `Reservation` (`hsa/queue.rs`).
    Packet(PacketEvent),
    /// One copy (or batch of copy pieces sharing a completion signal) on a copy engine.
    Copy(CopyEvent),
    /// One host wait on an HSA signal.
    Wait(WaitEvent),
    /// The policy created an HSA queue.
    QueueCreated {
        tid: u64,
        ts_ns: u64,
        queue: u64,
        device: u32,
        size: u32,
        reason: String,
    },
    /// The policy assigned a stream to a queue.
    StreamAssigned {
        tid: u64,
        ts_ns: u64,
        stream: String,
        queue: u64,
        device: u32,
        reason: String,
    },
    /// A stream-ordered allocation (`hipMallocAsync`, `hipMallocFromPoolAsync`) from a memory
    /// pool: whether a freed block served it, and the pool's amounts after it.
    PoolAlloc {
        tid: u64,
        ts_ns: u64,
        /// The pool's `hipMemPool_t`.
        pool: u64,
        device: u32,
        bytes: u64,
        reused: bool,
        used: u64,
        reserved: u64,
    },
    /// One `hipGraphLaunch`: the executable graph (a serial number of the process), the kernel
    /// nodes it published as prebuilt packets, the steps it submitted through the runtime's
    /// operations (copies, host calls, ...) and the queues the packets went to.
    GraphLaunch {
        tid: u64,
        ts_ns: u64,
        graph: u64,
        device: u32,
        kernels: u32,
        eager: u32,
        queues: Vec<u64>,
    },
    /// From `at_ns` until the node's next such event, `cus` compute units of the GPU with HSA
    /// node id `node` had work, on hsasim's virtual time line (`HSASIM_TIME=virtual`; read at
    /// exit through its `HSASIM_CU_USE` attribute, which ROCr lacks).
    CusInUse { node: u32, at_ns: u64, cus: u32 },
    /// A queue's time in a hardware queue slot, on hsasim's virtual time line
    /// (`HSASIM_TIME=virtual`; read at exit through its `HSASIM_HQD_SLOTS` attribute, which
    /// ROCr lacks). `pid` is the queue's process: under a device service the slots are shared.
    HqdSlot {
        pid: u32,
        slot: u32,
        pipe: u32,
        /// The queue's `hsa_queue_t::id`.
        queue_id: u64,
        start_ns: u64,
        end_ns: u64,
    },
    /// Calls made through hipshim's HSA function table (totals for the whole run).
    HsaCall {
        name: String,
        calls: u64,
        total_ns: u64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ApiEvent {
    pub tid: u64,
    pub name: Cow<'static, str>,
    pub start_ns: u64,
    pub dur_ns: u64,
    /// The `hipError_t` returned (0 = success).
    pub result: u32,
    /// Identifies the call for the packets and copies it submitted.
    pub id: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketKind {
    KernelDispatch,
    BarrierAnd,
    BarrierOr,
    /// The barrier-AND hipshim adds after each packet while tracing: the traced packet gets a
    /// signal of its own (for its timestamps) and this barrier completes the packet's original
    /// completion signal once the packet is done (see `record`).
    TraceBarrier,
    /// Any other AQL type (the header's type field).
    Other(u8),
}

impl PacketKind {
    pub fn label(self) -> Cow<'static, str> {
        match self {
            PacketKind::KernelDispatch => "kernel_dispatch".into(),
            PacketKind::BarrierAnd => "barrier_and".into(),
            PacketKind::BarrierOr => "barrier_or".into(),
            PacketKind::TraceBarrier => "trace_barrier".into(),
            PacketKind::Other(t) => format!("type_{t}").into(),
        }
    }

    pub fn parse(text: &str) -> Option<PacketKind> {
        Some(match text {
            "kernel_dispatch" => PacketKind::KernelDispatch,
            "barrier_and" => PacketKind::BarrierAnd,
            "barrier_or" => PacketKind::BarrierOr,
            "trace_barrier" => PacketKind::TraceBarrier,
            other => PacketKind::Other(other.strip_prefix("type_")?.parse().ok()?),
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PacketEvent {
    pub queue: u64,
    pub device: u32,
    /// The packet's write index in its queue.
    pub index: u64,
    pub kind: PacketKind,
    pub barrier: bool,
    /// Kernel dispatches: the kernel's name (when the launch path named it).
    pub kernel: Option<Arc<str>>,
    pub grid: [u32; 3],
    pub workgroup: [u16; 3],
    pub kernarg_bytes: u32,
    /// Barrier packets: their non-null dependency signals.
    pub deps: Vec<u64>,
    /// The completion signal the packet was built with (the stream's counter, a marker...).
    pub completion_signal: u64,
    /// Packets in the ring ahead of this one when it was reserved (write index - read index).
    pub depth: u64,
    /// A doorbell was rung right after this packet was written.
    pub doorbell: bool,
    pub tid: u64,
    pub submit_ns: u64,
    /// From the packet processor's timestamps; `None` if the packet had not completed when
    /// the trace was written.
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// The API call that published it.
    pub api: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

impl Direction {
    pub fn label(self) -> &'static str {
        match self {
            Direction::HostToDevice => "H2D",
            Direction::DeviceToHost => "D2H",
            Direction::DeviceToDevice => "D2D",
            Direction::HostToHost => "H2H",
        }
    }

    pub fn parse(text: &str) -> Option<Direction> {
        Some(match text {
            "H2D" => Direction::HostToDevice,
            "D2H" => Direction::DeviceToHost,
            "D2D" => Direction::DeviceToDevice,
            "H2H" => Direction::HostToHost,
            _ => return None,
        })
    }

    pub fn of(src_is_host: bool, dst_is_host: bool) -> Direction {
        match (src_is_host, dst_is_host) {
            (true, false) => Direction::HostToDevice,
            (false, true) => Direction::DeviceToHost,
            (false, false) => Direction::DeviceToDevice,
            (true, true) => Direction::HostToHost,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CopyEvent {
    /// `sdma0`, `sdma1`, ... when hipshim chose the engine, `runtime` when the HSA runtime did.
    pub engine: String,
    pub device: u32,
    pub bytes: u64,
    /// Copy-engine submissions covered (rows of a 2D copy share one signal).
    pub pieces: u32,
    pub direction: Direction,
    /// Pageable host memory went through the pinned staging buffer.
    pub staged: bool,
    pub tid: u64,
    pub submit_ns: u64,
    /// From the copy's completion signal (the last piece to complete); `None` if not complete
    /// when the trace was written.
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    pub api: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WaitEvent {
    pub tid: u64,
    pub signal: u64,
    /// The condition waited for, e.g. `== 0`.
    pub condition: String,
    pub start_ns: u64,
    pub dur_ns: u64,
    /// Time spent spinning (active wait) before blocking, or all of it if it never blocked.
    pub spin_ns: u64,
    /// The wait went to sleep in the runtime (blocked wait) at least once.
    pub blocked: bool,
}
