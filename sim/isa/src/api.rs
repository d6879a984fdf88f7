//! What the interpreter is given and what it returns: the target model, the guest-memory
//! check, one dispatch and how to run it, and why a dispatch stopped. Every other module
//! builds on these; this one uses none of them.

use hsa_abi::{hsa_kernel_dispatch_packet_t, hsa_status_t};
use std::fmt;
use std::sync::atomic::AtomicU64;

/// The GPU model whose encodings and semantics apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GfxModel {
    Gfx90a,
    Gfx942,
}

impl GfxModel {
    /// The `gfxNNN` processor name, as in ISA names (`amdgcn-amd-amdhsa--gfx942`).
    pub fn processor(self) -> &'static str {
        match self {
            GfxModel::Gfx90a => "gfx90a",
            GfxModel::Gfx942 => "gfx942",
        }
    }

    /// Peak shader clock in MHz (MI210's 1,700, MI300X's 2,100): what the agent reports as
    /// its maximum clock, HIP as `clockRate`, and the rate `s_memtime` (HIP's `clock64()`)
    /// counts at, since programs turn `clock64()` deltas into time with `clockRate`.
    pub fn shader_clock_mhz(self) -> u32 {
        match self {
            GfxModel::Gfx90a => 1700,
            GfxModel::Gfx942 => 2100,
        }
    }
}

/// What the device may touch: hsasim's registry of device allocations, registered/pinned
/// host memory, loaded code objects and kernarg memory.
pub trait GuestMemory: Send + Sync {
    /// Where the bytes of `[address, address + len)` live in this process, when the range
    /// lies inside memory the device may access: the device address itself for most
    /// memory, another one where the device reaches host memory through its own address
    /// (locked memory under `HSASIM_STRICT`, as a discrete GPU maps it).
    fn translate(&self, address: u64, len: u64) -> Option<u64>;

    /// True when `[address, address + len)` lies inside memory the device may access.
    fn is_accessible(&self, address: u64, len: u64) -> bool {
        self.translate(address, len).is_some()
    }

    /// A counter that moves (after the change is made) whenever any answer of
    /// [`translate_span`](GuestMemory::translate_span) may change: memory mapped or
    /// unmapped, access granted. While it holds a value, the interpreter reuses the spans
    /// it was given at that value instead of asking again (see `Ctx::translate`). `None`
    /// (the default): every access asks [`translate`](GuestMemory::translate).
    fn generation(&self) -> Option<&AtomicU64> {
        None
    }

    /// [`translate`](GuestMemory::translate), with the range around the access over which
    /// the answer is the same offset: every `[a, a + l)` inside the span translates to
    /// `a + offset`, as `translate` would say for as long as [`generation`]
    /// (GuestMemory::generation) does not move. The default span is the access itself.
    fn translate_span(&self, address: u64, len: u64) -> Option<Span> {
        let host = self.translate(address, len)?;
        Some(Span {
            start: address,
            end: address.checked_add(len)?,
            offset: host.wrapping_sub(address),
        })
    }

    /// A wave raised an interrupt (`s_sendmsg sendmsg(MSG_INTERRUPT)`; `data` is the low
    /// byte of M0, by convention the signal event it announces): the device library does
    /// this after changing a signal's value in memory directly (`__ockl_hsa_signal_add`),
    /// so that host threads waiting on the signal wake. Nothing by default.
    fn interrupt(&self, _data: u32) {}
}

/// Guest addresses `[start, end)` that all reach host memory at `address + offset`
/// (wrapping), from [`GuestMemory::translate_span`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
}

/// One kernel dispatch, as the packet processor read it from the queue.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    pub model: GfxModel,
    /// A copy of the packet (the slot may be recycled once the dispatch starts).
    pub packet: hsa_kernel_dispatch_packet_t,
    /// Address of the packet in the queue ring (the dispatch-ptr user SGPR points here).
    pub packet_address: u64,
    /// Address of the queue's `amd_queue_t` (the queue-ptr user SGPR).
    pub queue_address: u64,
    /// The packet's index in its queue (the dispatch-id user SGPR).
    pub dispatch_id: u64,
    /// The kernel's code, `[start, end)` (its code object's executable segment), when the
    /// runtime knows it: a wave whose program counter leaves it (a jump into a data array)
    /// faults there, before it decodes data as instructions. `None` checks only that the
    /// program counter is in readable memory.
    pub code: Option<(u64, u64)>,
}

/// The scheduling priority of the queue a dispatch came from (`HSA_AMD_QUEUE_PRIORITY_*`).
/// Among dispatches of one device, the workgroup dispatcher starts workgroups of the
/// highest-priority one that has any left to start (see `arbiter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueuePriority {
    Low,
    Normal,
    High,
}

impl QueuePriority {
    /// The level `hsa_amd_queue_set_priority` takes (`HSA_AMD_QUEUE_PRIORITY_LOW` = 0,
    /// `_NORMAL` = 1, `_HIGH` = 2); `None` for anything else.
    pub fn from_hsa(level: u32) -> Option<QueuePriority> {
        use hsa_abi::{
            HSA_AMD_QUEUE_PRIORITY_HIGH, HSA_AMD_QUEUE_PRIORITY_LOW, HSA_AMD_QUEUE_PRIORITY_NORMAL,
        };
        match level {
            HSA_AMD_QUEUE_PRIORITY_LOW => Some(QueuePriority::Low),
            HSA_AMD_QUEUE_PRIORITY_NORMAL => Some(QueuePriority::Normal),
            HSA_AMD_QUEUE_PRIORITY_HIGH => Some(QueuePriority::High),
            _ => None,
        }
    }
}

/// How to run a dispatch.
#[derive(Clone, Debug)]
pub struct ExecConfig {
    /// Host threads that run workgroups in parallel; 1 runs them in order on the caller.
    pub worker_threads: usize,
    /// Compute units reported by the agent (used for hardware-id registers).
    pub compute_units: u32,
    /// Watchdog: instructions one wave may execute (hsasim: `HSASIM_MAX_WAVE_INSTRUCTIONS`).
    /// The count is exact, so this limit stops a runaway wave at the same instruction on
    /// every run.
    pub max_wave_instructions: u64,
    /// Wall-clock limit for the whole dispatch (hsasim: `HSASIM_DISPATCH_TIMEOUT`); `None`
    /// for none. Waves look at the clock every 4096 instructions and between workgroups.
    pub timeout: Option<std::time::Duration>,
    /// The priority of the dispatch's queue: while a dispatch of higher priority on the same
    /// `device` has workgroups not yet started, this one starts no new workgroups (those
    /// running finish). Cooperative dispatches, all of whose workgroups start at once, take
    /// no part.
    pub priority: QueuePriority,
    /// The device whose workgroup dispatcher runs the dispatch (hsasim: the agent's node):
    /// dispatches compete by priority only with those of the same device.
    pub device: u32,
    /// Translate hot code into host code (hsasim: `HSASIM_JIT`): straight-line runs of
    /// instructions that ran before become host functions, with the instructions the
    /// translator has no native code for called out to the interpreter. Results, faults,
    /// the watchdog and the counts are the interpreter's. The environment variable
    /// `HSASIM_JIT=1` turns it on for every dispatch of the process whatever this says
    /// (how this crate's own tests run with the translator).
    pub jit: bool,
    /// Virtual time (issue 42): each wave's [`Mix`](hsasim_vtime::Mix) is priced when it
    /// ends and summed per workgroup into [`DispatchStats::costs`](crate::DispatchStats),
    /// and the clocks kernels read (`s_memtime`, `s_memrealtime`) follow the wave's own
    /// virtual cycles instead of the host clock. `None`: host clocks, no costs.
    pub timing: Option<Timing>,
    /// Under virtual time: the most instructions any one wave of the dispatch has executed
    /// so far, kept up to date while it runs (every 4096 instructions of a wave). Each
    /// instruction costs a wave at least [`WaveCostTable::min_cycles`] of its own time, so
    /// this says how late the dispatch ends at the earliest while it still runs (a host
    /// asking for its signal need not wait for a kernel that spins on host memory).
    ///
    /// [`WaveCostTable::min_cycles`]: hsasim_vtime::WaveCostTable::min_cycles
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// What virtual time needs of a dispatch ([`ExecConfig::timing`]).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Cycles and global-memory bytes per executed instruction of each class.
    pub costs: &'static hsasim_vtime::WaveCostTable,
    /// The dispatch's start in virtual nanoseconds since the device was created: every wave
    /// starts its clocks here.
    pub start_ns: u64,
    /// The shader clock `s_memtime` counts at (and cycles are converted to time at).
    pub clock_mhz: u32,
}

impl Timing {
    /// The wave-local shader clock (`s_memtime`) after `cycles` of the wave's own cycles:
    /// the start converted to cycles, plus them. Wraps as the 64-bit counter does.
    pub fn shader_clock(&self, cycles: u64) -> u64 {
        let start = u128::from(self.start_ns) * u128::from(self.clock_mhz) / 1000;
        (start as u64).wrapping_add(cycles)
    }

    /// The wave-local 100 MHz clock (`s_memrealtime`) after `cycles` of the wave's own
    /// cycles: the start plus those cycles in nanoseconds, in 10 ns ticks. A clock of 0 MHz
    /// (no time passes per cycle to speak of) counts as 1 MHz rather than dividing by zero.
    pub fn real_time(&self, cycles: u64) -> u64 {
        let ns = u128::from(cycles) * 1000 / u128::from(self.clock_mhz.max(1));
        ((u128::from(self.start_ns) + ns) / 10) as u64
    }
}

impl ExecConfig {
    /// One worker, 80 compute units, no limits, normal priority on device 0: a base for
    /// `..ExecConfig::BASE`.
    pub const BASE: ExecConfig = ExecConfig {
        worker_threads: 1,
        compute_units: 80,
        max_wave_instructions: u64::MAX,
        timeout: None,
        priority: QueuePriority::Normal,
        device: 0,
        jit: false,
        timing: None,
        progress: None,
    };
}

/// Why a dispatch stopped. Every variant names enough to find the cause in the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DispatchError {
    /// An instruction word the decoder does not know, or an opcode it knows but cannot run.
    UnknownInstruction {
        pc: u64,
        words: [u32; 2],
        detail: String,
    },
    /// A memory access outside anything [`GuestMemory`] allows.
    MemoryFault {
        address: u64,
        write: bool,
        pc: u64,
        instruction: String,
        workgroup: [u32; 3],
        wave: u32,
    },
    /// `s_trap`, `s_sethalt`, an instruction the ISA defines as illegal, a branch out of the
    /// code object, a private-segment (stack) overflow.
    Illegal { pc: u64, reason: String },
    /// A wave ran more instructions than the watchdog allows (`HSASIM_MAX_WAVE_INSTRUCTIONS`):
    /// almost certainly an endless loop, which on hardware would hang the queue.
    Watchdog {
        pc: u64,
        limit: u64,
        workgroup: [u32; 3],
        wave: u32,
    },
    /// The dispatch was still running when its wall-clock limit (`HSASIM_DISPATCH_TIMEOUT`)
    /// passed: an endless loop, or more work than the interpreter does in that time.
    Timeout {
        limit: std::time::Duration,
        /// Workgroups that had finished, of `workgroups`.
        finished: u64,
        workgroups: u64,
    },
    /// The interpreter failed internally (a panic in one of its threads); the message
    /// says where.
    Internal(String),
    /// The host could not provide what the dispatch needs (its private memory), as ROCr
    /// reports a failed scratch allocation.
    OutOfResources(String),
    /// The kernel descriptor or the packet cannot be run (bad object address, model mismatch,
    /// wave32 code, zero-sized grid, ...).
    InvalidDispatch(String),
}

impl DispatchError {
    /// The status hsasim reports through the queue's error callback for this failure.
    pub fn hsa_status(&self) -> hsa_status_t {
        use hsa_abi::status;
        match self {
            DispatchError::UnknownInstruction { .. }
            | DispatchError::Illegal { .. }
            | DispatchError::Watchdog { .. }
            | DispatchError::Timeout { .. } => status::AMD_ERROR_ILLEGAL_INSTRUCTION,
            DispatchError::Internal(_) => status::ERROR,
            DispatchError::OutOfResources(_) => status::ERROR_OUT_OF_RESOURCES,
            DispatchError::MemoryFault { .. } => status::AMD_ERROR_MEMORY_APERTURE_VIOLATION,
            DispatchError::InvalidDispatch(_) => status::ERROR_INVALID_PACKET_FORMAT,
        }
    }
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchError::UnknownInstruction { pc, words, detail } => write!(
                f,
                "unknown or unimplemented instruction at pc {pc:#x} (words {:#010x} {:#010x}): {detail}",
                words[0], words[1]
            ),
            DispatchError::MemoryFault {
                address,
                write,
                pc,
                instruction,
                workgroup,
                wave,
            } => write!(
                f,
                "memory fault: {} of address {address:#x} by `{instruction}` at pc {pc:#x}, workgroup ({}, {}, {}) wave {wave}",
                if *write { "write" } else { "read" },
                workgroup[0],
                workgroup[1],
                workgroup[2]
            ),
            DispatchError::Illegal { pc, reason } => write!(f, "illegal at pc {pc:#x}: {reason}"),
            DispatchError::Watchdog {
                pc,
                limit,
                workgroup,
                wave,
            } => write!(
                f,
                "watchdog: wave {wave} of workgroup ({}, {}, {}) executed more than {limit} instructions (HSASIM_MAX_WAVE_INSTRUCTIONS) and was stopped at pc {pc:#x}; an endless loop?",
                workgroup[0], workgroup[1], workgroup[2]
            ),
            DispatchError::Timeout {
                limit,
                finished,
                workgroups,
            } => write!(
                f,
                "dispatch timeout: still running after {} s (HSASIM_DISPATCH_TIMEOUT), so all its waves were stopped with {finished} of {workgroups} workgroups finished; an endless loop, or a kernel too long for the interpreter?",
                limit.as_secs_f64()
            ),
            DispatchError::Internal(why) => write!(f, "internal error in the interpreter: {why}"),
            DispatchError::OutOfResources(why) => write!(f, "out of host memory: {why}"),
            DispatchError::InvalidDispatch(why) => write!(f, "invalid dispatch: {why}"),
        }
    }
}

impl std::error::Error for DispatchError {}
