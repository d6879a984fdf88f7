//! Running a dispatch: workgroups over host threads, waves of a workgroup interleaved on
//! one thread (switching at `s_barrier`), the initial register state of each wave, and the
//! per-thread decoded-instruction cache.

use crate::aperture::PRIVATE_BASE;
use crate::api::{Dispatch, DispatchError, ExecConfig, GfxModel, GuestMemory, Timing};
use crate::arbiter::Entry;
use crate::cache_line::{CacheLine, LineBytes};
use crate::decode::{decode_for_exec, Decoded};
use crate::exec::{self, tlb::Tlb, Ctx, DispatchInfo, Handler, Outcome, Step};
use crate::inst::{Form, Inst};
use crate::jit::{self, Jit, Leave, RegionInst};
use crate::wave::{Wave, WaveState, EXEC_LO, FLAT_SCRATCH_LO, LANES};
use hsa_abi::{kernel_code_properties as kcp, KernelDescriptor};
use hsasim_vtime::{Class, Mix, WorkgroupCost};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Figures of one dispatch, for benchmarks and traces.
#[derive(Clone, Debug, Default)]
pub struct DispatchStats {
    pub workgroups: u64,
    pub waves: u64,
    /// Wave-instructions executed.
    pub instructions: u64,
    /// VALU/VMEM lane-operations (active lanes summed over vector instructions).
    pub lane_ops: u64,
    /// Of `instructions`, those run as translated native code ([`ExecConfig::jit`]).
    pub translated: u64,
    /// Of `instructions`, those run inside translated regions as call-outs to their
    /// interpreter handlers; the rest (`instructions - translated - called_out`) ran in
    /// the interpreter's own loop.
    pub called_out: u64,
    /// Regions translated during the dispatch (translations are kept with the kernel's
    /// decode cache: a later dispatch of the same kernel on the same worker reuses them).
    pub regions_compiled: u64,
    /// Host time spent translating, summed over workers.
    pub translate_time: Duration,
    /// Wave-instructions run by interpreter handlers (in the loop or as call-outs), by
    /// opcode: filled by [`run_dispatch_with_stats`](crate::run_dispatch_with_stats) only.
    pub interpreted_ops: HashMap<&'static str, u64>,
    /// Wave-instructions executed, by virtual-time class (the sum of every wave's
    /// [`Wave::mix`]); the same whether they ran interpreted or translated. Counted under
    /// virtual time ([`ExecConfig::timing`]) and by
    /// [`run_dispatch_with_stats`](crate::run_dispatch_with_stats); all zero otherwise, as
    /// the count costs the interpreter an increment per instruction.
    pub mix: Mix,
    /// Under virtual time ([`ExecConfig::timing`]), the priced waves of each workgroup in
    /// linear order (x fastest); a grid of more than [`MAX_COST_ENTRIES`] workgroups has
    /// runs of consecutive workgroups summed into one entry (`workgroups` says how many), so
    /// that the record stays bounded. The same whatever the worker count or the order
    /// workers took workgroups in. Empty without virtual time.
    pub costs: Vec<WorkgroupCost>,
}

impl DispatchStats {
    /// Adds another worker's figures.
    pub(crate) fn add(&mut self, o: &DispatchStats) {
        self.workgroups += o.workgroups;
        self.waves += o.waves;
        self.instructions += o.instructions;
        self.lane_ops += o.lane_ops;
        self.translated += o.translated;
        self.called_out += o.called_out;
        self.regions_compiled += o.regions_compiled;
        self.translate_time += o.translate_time;
        for (&name, &n) in &o.interpreted_ops {
            *self.interpreted_ops.entry(name).or_default() += n;
        }
        add_mix(&mut self.mix, &o.mix);
    }

    /// The `n` opcodes that ran most often in interpreter handlers, most first.
    pub fn top_interpreted(&self, n: usize) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> =
            self.interpreted_ops.iter().map(|(&k, &c)| (k, c)).collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

/// Entries a dispatch's [`DispatchStats::costs`] holds at most.
pub const MAX_COST_ENTRIES: u64 = 65_536;

fn add_mix(into: &mut Mix, o: &Mix) {
    for (a, b) in into.count.iter_mut().zip(&o.count) {
        *a += b;
    }
}

/// Adds the waves of `o` to `into`, whose workgroup count is already set.
fn merge_cost(into: &mut WorkgroupCost, o: &WorkgroupCost) {
    into.waves += o.waves;
    into.cycles_sum += o.cycles_sum;
    into.cycles_max = into.cycles_max.max(o.cycles_max);
    into.bytes += o.bytes;
    into.issue_sum += o.issue_sum;
    into.matrix_sum += o.matrix_sum;
}

/// The workgroups of the costs entries of a grid of `total` workgroups: each entry
/// covers this many consecutive ones (1 up to [`MAX_COST_ENTRIES`] workgroups).
fn cost_bucket(total: u64) -> u64 {
    total.div_ceil(MAX_COST_ENTRIES).max(1)
}

/// The empty costs record of a dispatch: one entry per bucket of `bucket` workgroups (the
/// last may hold fewer), nothing without virtual time.
pub(crate) fn empty_costs(plan: &Plan, total: u64) -> Vec<WorkgroupCost> {
    if plan.timing.is_none() {
        return Vec::new();
    }
    let bucket = plan.cost_bucket;
    (0..total.div_ceil(bucket))
        .map(|b| WorkgroupCost {
            workgroups: bucket.min(total - b * bucket) as u32,
            ..WorkgroupCost::default()
        })
        .collect()
}

/// A worker's costs of the workgroups it ran, by bucket in the order it finished them
/// (consecutive ones of a bucket merged), until the dispatch's record takes them.
#[derive(Default)]
pub(crate) struct CostLog(Vec<(u64, WorkgroupCost)>);

/// Entries a worker's [`CostLog`] holds before it hands them to the dispatch's record: a
/// grid of many short workgroups then neither grows one log per worker as long as the grid
/// nor takes the record's lock more than once per this many workgroups.
const COST_LOG_FLUSH: usize = 1024;

impl CostLog {
    /// Hands the entries to the dispatch's record once there are [`COST_LOG_FLUSH`].
    #[inline]
    pub(crate) fn flush_if_full(&mut self, totals: &Mutex<DispatchStats>) {
        if self.0.len() >= COST_LOG_FLUSH {
            let mut totals = totals.lock().unwrap_or_else(|p| p.into_inner());
            self.drain_into(&mut totals.costs);
        }
    }

    /// Moves the entries into the dispatch's record ([`empty_costs`]).
    fn drain_into(&mut self, costs: &mut [WorkgroupCost]) {
        for (b, c) in self.0.drain(..) {
            if let Some(slot) = costs.get_mut(b as usize) {
                merge_cost(slot, &c);
            }
        }
    }
}

/// The end of workgroup `k` (its `waves` all ended): their counts join the worker's
/// figures and, under virtual time, their priced costs its log.
pub(crate) fn end_workgroup(
    plan: &Plan,
    k: u64,
    waves: &mut [Wave],
    stats: &mut DispatchStats,
    log: &mut CostLog,
) {
    let mut cost = WorkgroupCost::default();
    for w in waves.iter_mut() {
        stats.lane_ops += w.lane_ops;
        w.lane_ops = 0;
        if plan.count_mix {
            add_mix(&mut stats.mix, &w.mix);
        }
        if let Some(t) = &plan.timing {
            cost.add_wave(t.costs.cost(&w.mix));
        }
    }
    if plan.timing.is_some() {
        // Most grids have an entry per workgroup: no 64-bit division for them.
        let b = if plan.cost_bucket == 1 {
            k
        } else {
            k / plan.cost_bucket
        };
        match log.0.last_mut() {
            Some((last, into)) if *last == b => merge_cost(into, &cost),
            _ => log.0.push((b, cost)),
        }
    }
}

/// Everything fixed for the whole dispatch.
pub(crate) struct Plan {
    pub(crate) model: GfxModel,
    pub(crate) entry: u64,
    pub(crate) kd: KernelDescriptor,
    pub(crate) wg_size: [u32; 3],
    pub(crate) grid: [u32; 3],
    pub(crate) wg_count: [u32; 3],
    pub(crate) lds_bytes: usize,
    pub(crate) private_per_lane: u64,
    pub(crate) kernarg: u64,
    pub(crate) packet_address: u64,
    pub(crate) queue_address: u64,
    pub(crate) dispatch_id: u64,
    /// Where the kernel's code is ([`Dispatch::code`]).
    pub(crate) code: Option<(u64, u64)>,
    /// Watchdog: instructions one wave may execute.
    pub(crate) max_wave_instructions: u64,
    /// Wall-clock limit of the dispatch, and when it passes.
    pub(crate) timeout: Option<(Duration, Instant)>,
    /// From a cooperative queue: waves yield now and then (see `coop`).
    pub(crate) cooperative: bool,
    /// Translate hot code ([`ExecConfig::jit`]).
    pub(crate) jit: bool,
    /// Count interpreted instructions by opcode ([`DispatchStats::interpreted_ops`]).
    pub(crate) count_ops: bool,
    /// Virtual time ([`ExecConfig::timing`]).
    pub(crate) timing: Option<Timing>,
    /// Count each wave's instructions by class ([`Wave::mix`], [`DispatchStats::mix`]):
    /// under virtual time, or when the caller asked for the figures.
    pub(crate) count_mix: bool,
    /// Workgroups per entry of [`DispatchStats::costs`].
    pub(crate) cost_bucket: u64,
    /// [`ExecConfig::progress`].
    pub(crate) progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// Waves look at the stop flag and the clock whenever their instruction count crosses a
/// multiple of this (a power of two): rarely enough to cost nothing, often enough that a
/// stop takes effect within microseconds.
pub(crate) const CHECK_EVERY: u64 = 0x1000;

// COMPUTE_PGM_RSRC2 fields (AMDGPUUsage, "compute_pgm_rsrc2 for GFX6-GFX12").
const RSRC2_ENABLE_PRIVATE_SEGMENT: u32 = 1 << 0;
const RSRC2_USER_SGPR_COUNT_SHIFT: u32 = 1;
const RSRC2_WORKGROUP_ID_X: u32 = 1 << 7;
const RSRC2_WORKGROUP_ID_Y: u32 = 1 << 8;
const RSRC2_WORKGROUP_ID_Z: u32 = 1 << 9;
const RSRC2_WORKGROUP_INFO: u32 = 1 << 10;
/// ENABLE_VGPR_WORKITEM_ID (bits 12:11): 0 = x, 1 = x and y, 2 = x, y and z.
const RSRC2_VGPR_WORKITEM_ID_SHIFT: u32 = 11;

/// Largest LDS a workgroup may ask for (gfx90a/gfx942 have 64 KiB per CU).
const MAX_LDS: usize = 64 * 1024;
/// Stack added for kernels whose descriptor says USES_DYNAMIC_STACK (AMD's default
/// hipLimitStackSize).
const DEFAULT_DYNAMIC_STACK: u64 = 1024;
/// Largest private segment per work-item hsasim backs (hardware allows far less).
const MAX_PRIVATE: u64 = 1 << 20;

pub(crate) fn plan(d: &Dispatch, mem: &dyn GuestMemory) -> Result<Plan, DispatchError> {
    let p = &d.packet;
    let bad = |s: String| Err(DispatchError::InvalidDispatch(s));
    let kd_addr = p.kernel_object;
    let Some(kd_host) = (kd_addr != 0).then(|| mem.translate(kd_addr, 64)).flatten() else {
        return bad(format!(
            "kernel object {kd_addr:#x} is not a readable 64-byte kernel descriptor"
        ));
    };
    // SAFETY: the 64 bytes at kd_addr were translated just above, and KernelDescriptor is
    // plain old data of exactly that size.
    let kd: KernelDescriptor = unsafe { exec::host_read(kd_host) };
    if kd.kernel_code_properties & kcp::ENABLE_WAVEFRONT_SIZE32 != 0 {
        return bad("the kernel is wave32 code; gfx90a/gfx942 run wave64 only".into());
    }
    // COMPUTE_PGM_RSRC1 bits 29..31 (WGP_MODE, MEM_ORDERED, FWD_PROGRESS) exist from gfx10
    // on and are reserved (zero) on GFX9: a descriptor with them set was built for an
    // RDNA/gfx10+ ISA, whose encodings this interpreter does not decode.
    if kd.compute_pgm_rsrc1 >> 29 != 0 {
        return bad(format!(
            "the kernel descriptor sets COMPUTE_PGM_RSRC1 bits 29-31 (WGP_MODE/MEM_ORDERED/\
             FWD_PROGRESS = {:#x}), which only gfx10+ define: the code object is for an ISA \
             hsasim does not model (it runs gfx90a and gfx942)",
            kd.compute_pgm_rsrc1 >> 29
        ));
    }
    let entry = kd_addr.wrapping_add(kd.kernel_code_entry_byte_offset as u64);
    if !entry.is_multiple_of(4) || !mem.is_accessible(entry, 4) {
        return bad(format!(
            "kernel entry {entry:#x} (descriptor {kd_addr:#x} + {:#x}) is not readable code",
            kd.kernel_code_entry_byte_offset
        ));
    }
    let wg_size = [
        p.workgroup_size_x as u32,
        p.workgroup_size_y as u32,
        p.workgroup_size_z as u32,
    ];
    let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    if wg_size.contains(&0) || grid.contains(&0) {
        return bad(format!("zero-sized workgroup {wg_size:?} or grid {grid:?}"));
    }
    // In u64: three u16 sizes can multiply past u32 (and wrap to something small).
    let items: u64 = wg_size.iter().map(|&n| u64::from(n)).product();
    if items > 1024 {
        return bad(format!("workgroup of {items} work-items exceeds 1024"));
    }
    let wg_count = [
        grid[0].div_ceil(wg_size[0]),
        grid[1].div_ceil(wg_size[1]),
        grid[2].div_ceil(wg_size[2]),
    ];
    // The packet's size is the workgroup's whole group segment, static part included
    // (HSA's AQL dispatch packet; runtimes send static + dynamic). One that passes less
    // (strict mode refuses it) still gets the static part the code addresses.
    let lds_bytes = kd.group_segment_fixed_size.max(p.group_segment_size) as usize;
    if lds_bytes > MAX_LDS {
        return bad(format!(
            "group segment of {lds_bytes} bytes exceeds the {MAX_LDS}-byte LDS"
        ));
    }
    let mut private = kd.private_segment_fixed_size.max(p.private_segment_size) as u64;
    if kd.kernel_code_properties & kcp::USES_DYNAMIC_STACK != 0 {
        // Recursion or variable-sized frames: the compiler cannot size the stack, and
        // HIP runtimes give such kernels their stack-size limit (hipLimitStackSize,
        // 1024 bytes by default) on top of the fixed part. A runtime that passes less in
        // the packet still gets that default here, as on AMD's runtime.
        private = private.max(kd.private_segment_fixed_size as u64 + DEFAULT_DYNAMIC_STACK);
    }
    let private = private.next_multiple_of(16);
    if private > MAX_PRIVATE {
        return bad(format!(
            "private segment of {private} bytes per work-item is too large"
        ));
    }
    Ok(Plan {
        model: d.model,
        entry,
        kd,
        wg_size,
        grid,
        wg_count,
        lds_bytes,
        private_per_lane: private,
        kernarg: p.kernarg_address,
        packet_address: d.packet_address,
        queue_address: d.queue_address,
        dispatch_id: d.dispatch_id,
        code: d.code,
        max_wave_instructions: u64::MAX,
        timeout: None,
        cooperative: false,
        jit: false,
        count_ops: false,
        timing: None,
        count_mix: false,
        cost_bucket: cost_bucket(
            u64::from(wg_count[0]) * u64::from(wg_count[1]) * u64::from(wg_count[2]),
        ),
        progress: None,
    })
}

/// Slots per page of a decode cache: one per 4-byte code word, so a page covers 4 KiB of
/// code.
const PAGE_WORDS: usize = 1024;
/// Code words a cache indexes densely, from its base (16 MiB of code); anything outside
/// goes to the `far` map.
const CACHE_WINDOW_WORDS: u64 = 4 << 20;
/// Decode caches a worker keeps (one per kernel entry it ran recently).
const CACHES_PER_WORKER: usize = 32;
/// The most memory one decode cache may hold (about 100,000 decoded instructions, some
/// 400 KiB of distinct code run by one kernel on one host thread: far more than real
/// kernels run). A wave that reaches more new code than that is decoding something that is
/// not its kernel's code (a program counter run off into data, where most words decode as
/// something): its dispatch faults instead of growing the cache ~650 bytes per instruction
/// until the host runs out of memory.
pub const MAX_DECODE_CACHE_BYTES: usize = 64 << 20;

/// Decoded instructions of one kernel by address, filled when execution first reaches an
/// address (with the straight-line code after it: [`DecodeCache::fill`]) and kept across
/// dispatches of the same kernel. Words read ahead are remembered and checked like the rest.
///
/// Code memory can change under a kept cache: an executable destroyed and another loaded at
/// the same address, or code written by a copy or by the host through a pointer (hsasim's
/// device memory is host memory, so no write can be intercepted). The rule that covers all of
/// them: the cache remembers the words each instruction was decoded from and, before a
/// dispatch uses it, compares them with memory ([`DecodeCache::still_valid`]); any
/// difference discards the whole cache. The comparison runs over merged contiguous ranges,
/// one `is_accessible` and one slice compare each, so it costs little next to running the
/// code. Code changed while a dispatch runs is not seen until the next dispatch (hardware's
/// instruction cache is not coherent with such writes either).
pub(crate) struct DecodeCache {
    model: GfxModel,
    entry: u64,
    base: u64,
    /// Page table over the dense window: slot = decoded index + 1, 0 = not decoded yet.
    pages: Vec<Option<Box<[u32; PAGE_WORDS]>>>,
    /// Decoded instructions, each run of straight-line code at consecutive indices.
    insts: Vec<CachedInst>,
    far: HashMap<u64, u32>,
    /// The code words each decoded instruction came from, in decode order.
    sources: Vec<(u64, [u32; 3], u8)>,
    /// `sources` merged into contiguous runs (start, words); rebuilt when stale.
    ranges: Vec<(u64, Vec<u32>)>,
    ranges_cover: usize,
    /// Where the kernel's code is, when known ([`Dispatch::code`]).
    code: Option<(u64, u64)>,
    /// Translations of this cache's code, made when a dispatch with the translator on first
    /// runs hot code; discarded with the cache (so when its code changes).
    jit: Option<Jit>,
    /// The host has no translator (Cranelift could not target it): interpret.
    no_jit: bool,
}

impl DecodeCache {
    fn new(model: GfxModel, entry: u64) -> DecodeCache {
        // Non-inlined functions may sit before the kernel in .text: start the dense
        // window 1 MiB below the entry.
        let base = entry.saturating_sub(1 << 20) & !3;
        DecodeCache {
            model,
            entry,
            base,
            pages: Vec::new(),
            insts: Vec::new(),
            far: HashMap::new(),
            sources: Vec::new(),
            ranges: Vec::new(),
            ranges_cover: 0,
            code: None,
            jit: None,
            no_jit: false,
        }
    }

    /// The region entered at instruction `id`, translating it now if it is not yet;
    /// `None` when it is not worth translating (no native instruction) or cannot be.
    #[cold]
    fn translate(&mut self, id: usize, w: &Wave) -> Option<u32> {
        if self.no_jit {
            return None;
        }
        if self.jit.is_none() {
            match Jit::new() {
                Ok(j) => self.jit = Some(j),
                Err(_) => {
                    self.no_jit = true;
                    return None;
                }
            }
        }
        let jit = self.jit.as_mut()?;
        let mut insts = Vec::new();
        let mut k = id;
        loop {
            let c = &self.insts[k];
            insts.push(RegionInst {
                run: c.run,
                class: c.class,
                inst: c.inst,
                pc: c.pc,
                next_pc: c.next_pc,
                called_out: 0,
            });
            if jit::ends_region(&c.inst) || !c.falls_through || insts.len() >= jit::MAX_REGION {
                break;
            }
            k += 1;
        }
        let region = if jit.worth_translating(&insts, w) {
            jit.translate(insts, w).ok()
        } else {
            None
        };
        self.insts[id].region = region.unwrap_or(REGION_NEVER);
        region
    }

    /// Adds the instructions interpreted since the last call to `ops`, by opcode.
    fn count_interpreted(&mut self, ops: &mut HashMap<&'static str, u64>) {
        for c in &mut self.insts {
            if c.runs != c.reported {
                *ops.entry(c.inst.info.name).or_default() += c.runs - c.reported;
                c.reported = c.runs;
            }
        }
        if let Some(jit) = self.jit.as_mut() {
            for r in jit.regions_mut() {
                r.take_called_out(|name, n| *ops.entry(name).or_default() += n);
            }
        }
    }

    /// The bytes the cache holds on the heap (what [`MAX_DECODE_CACHE_BYTES`] bounds): its
    /// vectors' capacities, the page table's pages and the far map's entries.
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.insts.capacity() * size_of::<CachedInst>()
            + self.sources.capacity() * size_of::<(u64, [u32; 3], u8)>()
            + self.pages.capacity() * size_of::<Option<Box<[u32; PAGE_WORDS]>>>()
            + self.pages.iter().flatten().count() * size_of::<[u32; PAGE_WORDS]>()
            + self.far.capacity() * (size_of::<(u64, u32)>() + 8)
            + self
                .ranges
                .iter()
                .map(|(_, w)| 32 + 4 * w.capacity())
                .sum::<usize>()
    }

    /// Room for one more instruction: the vectors grow (by at most the room left under
    /// [`MAX_DECODE_CACHE_BYTES`]) without aborting when the host has no memory left.
    fn make_room(&mut self, pc: u64) -> Result<(), DispatchError> {
        let used = self.bytes();
        let decoded = self.insts.len();
        let full = |what: &str| DispatchError::Illegal {
            pc,
            reason: format!(
                "the wave reached more new code than any kernel runs: its decode cache holds \
                 {used} bytes ({decoded} instructions), and {what} (limit \
                 {MAX_DECODE_CACHE_BYTES} bytes); its program counter most likely ran off \
                 into data"
            ),
        };
        if used >= MAX_DECODE_CACHE_BYTES {
            return Err(full("it may not grow further"));
        }
        let room = MAX_DECODE_CACHE_BYTES - used;
        fn grow<T>(v: &mut Vec<T>, room: usize) -> Result<(), bool> {
            if v.len() < v.capacity() {
                return Ok(());
            }
            let each = std::mem::size_of::<T>().max(1);
            let more = v.capacity().max(16).min(room / each);
            if more == 0 {
                return Err(true);
            }
            v.try_reserve_exact(more).map_err(|_| false)
        }
        let grown = grow(&mut self.insts, room).and_then(|()| {
            let room = MAX_DECODE_CACHE_BYTES.saturating_sub(self.bytes());
            grow(&mut self.sources, room)
        });
        match grown {
            Ok(()) => {}
            Err(true) => return Err(full("it may not grow further")),
            Err(false) => return Err(full("the host has no memory for more")),
        }
        Ok(())
    }

    #[inline(always)]
    fn lookup(&self, pc: u64) -> Option<u32> {
        let idx = pc.wrapping_sub(self.base) / 4;
        if pc >= self.base && idx < CACHE_WINDOW_WORDS {
            let idx = idx as usize;
            match self.pages.get(idx / PAGE_WORDS) {
                Some(Some(page)) => match page[idx % PAGE_WORDS] {
                    0 => None,
                    s => Some(s - 1),
                },
                _ => None,
            }
        } else {
            self.far.get(&pc).copied()
        }
    }

    /// Whether every instruction decoded so far still has the same code words in memory.
    fn still_valid(&mut self, mem: &dyn GuestMemory) -> bool {
        if self.ranges_cover != self.sources.len() {
            self.rebuild_ranges();
        }
        self.ranges.iter().all(|(start, words)| {
            let len = 4 * words.len() as u64;
            let Some(host) = mem.translate(*start, len) else {
                return false;
            };
            // SAFETY: start..start+len was translated just above to live host memory, and
            // u32 reads of 4-aligned code need no more.
            let now = unsafe { std::slice::from_raw_parts(host as *const u32, words.len()) };
            now == words.as_slice()
        })
    }

    fn rebuild_ranges(&mut self) {
        let mut sorted: Vec<&(u64, [u32; 3], u8)> = self.sources.iter().collect();
        sorted.sort_unstable_by_key(|(pc, _, _)| *pc);
        let mut ranges: Vec<(u64, Vec<u32>)> = Vec::new();
        for (pc, words, n) in sorted {
            let words = &words[..*n as usize];
            match ranges.last_mut() {
                Some((start, run)) if *start + 4 * run.len() as u64 == *pc => {
                    run.extend_from_slice(words)
                }
                // Overlapping decodes (a jump into the middle of an instruction) stay
                // separate runs; each is checked on its own.
                _ => ranges.push((*pc, words.to_vec())),
            }
        }
        self.ranges = ranges;
        self.ranges_cover = self.sources.len();
    }

    /// The index of the instruction to run after `from` when it left the program counter
    /// at `pc`: the next entry when it fell through to straight-line code decoded after it,
    /// else where it went last time, else the page table, else a new fill.
    #[inline(always)]
    fn successor(
        &mut self,
        from: usize,
        pc: u64,
        model: GfxModel,
        mem: &dyn GuestMemory,
    ) -> Result<usize, DispatchError> {
        let e = &self.insts[from];
        if pc == e.next_pc && e.straight {
            return Ok(from + 1);
        }
        let last = e.jump.wrapping_sub(1) as usize;
        if self.insts.get(last).is_some_and(|t| t.pc == pc) {
            return Ok(last);
        }
        let id = self.find(pc, model, mem)?;
        self.insts[from].jump = id as u32 + 1;
        Ok(id)
    }

    /// [`find`](Self::find) for where a wave starts or resumes: most often the kernel's
    /// entry, which the first fill decoded at index 0.
    #[inline(always)]
    fn find_start(
        &mut self,
        pc: u64,
        model: GfxModel,
        mem: &dyn GuestMemory,
    ) -> Result<usize, DispatchError> {
        if self.insts.first().is_some_and(|e| e.pc == pc) {
            return Ok(0);
        }
        self.find(pc, model, mem)
    }

    /// The index of the instruction at `pc`, decoding it (and the code after it) if needed.
    fn find(
        &mut self,
        pc: u64,
        model: GfxModel,
        mem: &dyn GuestMemory,
    ) -> Result<usize, DispatchError> {
        match self.lookup(pc) {
            Some(id) => Ok(id as usize),
            None => self.fill(pc, model, mem),
        }
    }

    /// Decodes the instruction at `pc`, then the straight-line code after it up to an
    /// unconditional change of flow, an instruction decoded before, or one that does not
    /// decode (which stops the dispatch only if it runs), so that code run in order runs
    /// at consecutive indices. Returns the index of the one at `pc`.
    #[cold]
    fn fill(
        &mut self,
        pc: u64,
        model: GfxModel,
        mem: &dyn GuestMemory,
    ) -> Result<usize, DispatchError> {
        if !pc.is_multiple_of(4) {
            return Err(DispatchError::Illegal {
                pc,
                reason: "the program counter is not 4-byte aligned".into(),
            });
        }
        if let Some((start, end)) = self.code.filter(|&(start, end)| pc < start || pc >= end) {
            return Err(DispatchError::Illegal {
                pc,
                reason: format!(
                    "the program counter left the kernel's code [{start:#x}, {end:#x}) (a \
                     branch, return or s_setpc_b64 into data or past the code)"
                ),
            });
        }
        if !mem.is_accessible(pc, 4) {
            return Err(DispatchError::Illegal {
                pc,
                reason:
                    "the program counter left readable code (branch or return to a bad address)"
                        .into(),
            });
        }
        let code_end = self.code.map_or(u64::MAX, |(_, end)| end);
        let first = self.insts.len();
        let mut at = pc;
        loop {
            self.make_room(at)?;
            let decoded = self.decode_at(at, model, mem);
            let inst = match decoded {
                Ok(inst) => inst,
                Err(e) if at == pc => return Err(e),
                Err(_) => break,
            };
            let id = self.insts.len();
            if id > first {
                self.insts[id - 1].set_straight();
            }
            let ends = ends_straight_code(&inst.inst);
            let next_pc = at.wrapping_add(inst.inst.len as u64);
            self.insts.push(CachedInst::new(at, next_pc, inst));
            self.index(at, id as u32)?;
            if ends
                || self.insts.len() - first >= MAX_FILL
                || next_pc >= code_end
                || self.lookup(next_pc).is_some()
            {
                break;
            }
            at = next_pc;
        }
        Ok(first)
    }

    /// Decodes the instruction at `pc` and remembers its code words.
    fn decode_at(
        &mut self,
        pc: u64,
        model: GfxModel,
        mem: &dyn GuestMemory,
    ) -> Result<Decoded, DispatchError> {
        let mut words = [0u32; 3];
        let mut n = 0;
        for (k, slot) in words.iter_mut().enumerate() {
            let Some(host) = mem.translate(pc + 4 * k as u64, 4) else {
                break;
            };
            // SAFETY: the 4 bytes were translated just above.
            *slot = unsafe { exec::host_read::<u32>(host) };
            n += 1;
        }
        let inst =
            decode_for_exec(model, &words[..n]).map_err(|e| DispatchError::UnknownInstruction {
                pc,
                words: e.words,
                detail: e.detail,
            })?;
        let used = (inst.inst.len as usize / 4).clamp(1, n);
        self.sources.push((pc, words, used as u8));
        Ok(inst)
    }

    /// Enters instruction `id` at `pc` in the page table (or the far map); a host out of
    /// memory is the dispatch's error, not an abort.
    fn index(&mut self, pc: u64, id: u32) -> Result<(), DispatchError> {
        let held = self.bytes();
        let no_memory = || {
            DispatchError::Internal(format!(
                "no host memory to index the instruction at pc {pc:#x} in the decode cache \
                 ({held} bytes)"
            ))
        };
        let idx = pc.wrapping_sub(self.base) / 4;
        if pc >= self.base && idx < CACHE_WINDOW_WORDS {
            let idx = idx as usize;
            let page = idx / PAGE_WORDS;
            if self.pages.len() <= page {
                self.pages
                    .try_reserve(page + 1 - self.pages.len())
                    .map_err(|_| no_memory())?;
                self.pages.resize_with(page + 1, || None);
            }
            if self.pages[page].is_none() {
                let mut slots = Vec::new();
                slots
                    .try_reserve_exact(PAGE_WORDS)
                    .map_err(|_| no_memory())?;
                slots.resize(PAGE_WORDS, 0u32);
                let slots: Box<[u32; PAGE_WORDS]> = slots
                    .into_boxed_slice()
                    .try_into()
                    .map_err(|_| no_memory())?;
                self.pages[page] = Some(slots);
            }
            if let Some(slots) = self.pages[page].as_mut() {
                slots[idx % PAGE_WORDS] = id + 1;
            }
        } else {
            self.far.try_reserve(1).map_err(|_| no_memory())?;
            self.far.insert(pc, id);
        }
        Ok(())
    }
}

/// Instructions one fill decodes at most (a bound on reading ahead through code that never
/// ends a run).
const MAX_FILL: usize = 4096;

/// True when no instruction runs right after `i` (in the order the code is laid out), so
/// a fill stops decoding there: an unconditional jump, the end of the program. Calls come
/// back to the next instruction, so they do not end it.
fn ends_straight_code(i: &Inst) -> bool {
    matches!(i.info.name, "s_branch" | "s_setpc_b64") || i.info.name.starts_with("s_endpgm")
}

/// True when `i` may leave the program counter anywhere but at the next instruction (the
/// run loop then finds its successor by address): branches, calls, `s_setpc_b64`.
fn may_jump(i: &Inst) -> bool {
    i.info.form == Form::Branch || matches!(i.info.name, "s_setpc_b64" | "s_swappc_b64")
}

/// [`CachedInst::region`] before its entry was translated.
const REGION_NONE: u32 = u32::MAX;
/// [`CachedInst::region`] of an entry not to translate.
const REGION_NEVER: u32 = u32::MAX - 1;

/// A decoded instruction as the run loop keeps it.
struct CachedInst {
    /// The handler: the opcode's, or one that reports it unimplemented.
    run: Handler,
    pc: u64,
    /// The address after it, where the wave goes unless the instruction jumps.
    next_pc: u64,
    /// The fill decoded the instruction at `next_pc` right after it, at the next index.
    straight: bool,
    /// `straight` and the instruction never jumps: the next index runs next, unasked.
    falls_through: bool,
    /// 1 + the index of the instruction that last ran after it other than through
    /// `straight` (a branch's target), 0 before any: a loop's back edge then finds its
    /// target without the page table.
    jump: u32,
    /// Times the run loop interpreted it (the translator's heat, and the interpreted
    /// opcode counts), and how many of those the counts have taken.
    runs: u64,
    reported: u64,
    /// The translated region entered here ([`REGION_NONE`], [`REGION_NEVER`] or its id).
    region: u32,
    /// What it counts as in the wave's [`Mix`] (found here, once, not per execution).
    class: Class,
    inst: Inst,
}

impl CachedInst {
    fn new(pc: u64, next_pc: u64, d: Decoded) -> CachedInst {
        CachedInst {
            run: d.exec.unwrap_or(not_implemented),
            pc,
            next_pc,
            straight: false,
            falls_through: false,
            jump: 0,
            runs: 0,
            reported: 0,
            region: REGION_NONE,
            class: crate::mix::class_of(&d.inst),
            inst: d.inst,
        }
    }

    fn set_straight(&mut self) {
        self.straight = true;
        self.falls_through = !may_jump(&self.inst);
    }
}

/// The handler of opcodes that decode but have no semantics yet.
fn not_implemented(_w: &mut Wave, i: &Inst, c: &mut Ctx) -> Outcome {
    Err(Box::new(exec::unimplemented(i, c.pc)))
}

/// A host thread's reusable state: wave register files, LDS, the decode caches of recent
/// kernels. Kept in [`IDLE_WORKERS`] between dispatches, so a dispatch neither allocates
/// register files nor decodes code it has decoded before.
pub(crate) struct Worker {
    waves: Vec<Wave>,
    lds: LineBytes,
    /// Most recently used last.
    caches: Vec<DecodeCache>,
    /// Translations of the dispatch's guest memory (emptied when it begins).
    tlb: Tlb,
    pub(crate) stats: DispatchStats,
    /// Costs of the workgroups it ran, under virtual time.
    costs: CostLog,
}

/// Workers not running a dispatch. A handful suffices: one per worker thread ever used at
/// once (bounded by `MAX_IDLE_WORKERS`, beyond which they are dropped).
static IDLE_WORKERS: Mutex<Vec<Worker>> = Mutex::new(Vec::new());
const MAX_IDLE_WORKERS: usize = 64;

impl Worker {
    /// A worker for `plan`: an idle one if there is one, with the kernel's decode cache
    /// (checked against memory) at the end of its list.
    pub(crate) fn take(plan: &Plan, mem: &dyn GuestMemory) -> Worker {
        let idle = IDLE_WORKERS.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut worker = idle.unwrap_or_else(|| Worker {
            waves: Vec::new(),
            lds: LineBytes::empty(),
            caches: Vec::new(),
            tlb: Tlb::default(),
            stats: DispatchStats::default(),
            costs: CostLog::default(),
        });
        worker.stats = DispatchStats::default();
        worker.costs.0.clear();
        worker.tlb.clear();
        if worker.lds.len() != plan.lds_bytes {
            // At most 64 KiB (checked by `plan`).
            worker.lds = LineBytes::zeroed(plan.lds_bytes).expect("64 KiB of LDS");
        }
        let found = worker
            .caches
            .iter()
            .rposition(|c| c.entry == plan.entry && c.model == plan.model);
        let kept = found
            .map(|i| worker.caches.remove(i))
            .and_then(|mut cache| cache.still_valid(mem).then_some(cache));
        let mut cache = kept.unwrap_or_else(|| DecodeCache::new(plan.model, plan.entry));
        cache.code = plan.code;
        if worker.caches.len() >= CACHES_PER_WORKER {
            worker.caches.remove(0);
        }
        worker.caches.push(cache);
        worker
    }

    /// The decode cache of the dispatch's kernel, the kept translations and the figures.
    pub(crate) fn parts(&mut self) -> (&mut DecodeCache, &Tlb, &mut DispatchStats, &mut CostLog) {
        let cache = self
            .caches
            .last_mut()
            .expect("Worker::take leaves the dispatch's cache last");
        (cache, &self.tlb, &mut self.stats, &mut self.costs)
    }

    /// Adds this worker's figures to the dispatch's and goes back to the idle list.
    pub(crate) fn finish(mut self, plan: &Plan, totals: &Mutex<DispatchStats>) {
        if let Some(cache) = self.caches.last_mut() {
            if plan.count_ops {
                cache.count_interpreted(&mut self.stats.interpreted_ops);
            }
            if let Some(jit) = cache.jit.as_mut() {
                self.stats.regions_compiled = jit.compiled;
                self.stats.translate_time = jit.translate_time;
                // Counted per dispatch: the translations stay with the cache.
                jit.compiled = 0;
                jit.translate_time = Duration::ZERO;
            }
        }
        let mut totals = totals.lock().unwrap_or_else(|p| p.into_inner());
        totals.add(&self.stats);
        self.costs.drain_into(&mut totals.costs);
        drop(totals);
        self.give_back();
    }

    /// Back to the idle list for the next dispatch.
    fn give_back(self) {
        let mut idle = IDLE_WORKERS.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_WORKERS {
            idle.push(self);
        }
    }

    fn run_workgroup(
        &mut self,
        plan: &Plan,
        info: &DispatchInfo,
        mem: &dyn GuestMemory,
        wg: [u32; 3],
        wg_index: u64,
        stop: &AtomicBool,
    ) -> Result<(), DispatchError> {
        // The last workgroup in a dimension may be partial.
        let size: [u32; 3] =
            std::array::from_fn(|k| plan.wg_size[k].min(plan.grid[k] - wg[k] * plan.wg_size[k]));
        let items = size[0] * size[1] * size[2];
        let nwaves = items.div_ceil(LANES as u32) as usize;
        while self.waves.len() < nwaves {
            self.waves.push(Wave::new());
        }
        self.lds.as_mut_slice().fill(0);
        for (id, w) in self.waves[..nwaves].iter_mut().enumerate() {
            init_wave(w, plan, mem, wg, size, id as u32, items)?;
        }
        let mut ctx = Ctx::new(mem, &self.tlb, self.lds.as_mut_slice(), info, wg, wg_index);
        self.stats.workgroups += 1;
        self.stats.waves += nwaves as u64;
        loop {
            let mut running = 0;
            for w in self.waves[..nwaves].iter_mut() {
                if w.state != WaveState::Running {
                    continue;
                }
                running += 1;
                let cache = self
                    .caches
                    .last_mut()
                    .expect("Worker::take leaves the dispatch's cache last");
                let step = run_wave(w, cache, &mut ctx, plan, stop, &mut self.stats)?;
                w.state = match step {
                    Step::Barrier => WaveState::AtBarrier,
                    Step::End | Step::Continue => WaveState::Ended,
                    // The handlers and run_wave give these in cooperative dispatches only,
                    // which `coop` runs.
                    Step::Yield | Step::Gws => {
                        return Err(DispatchError::Internal(format!(
                            "{step:?} in an ordinary dispatch"
                        )))
                    }
                };
            }
            let waiting = self.waves[..nwaves]
                .iter()
                .filter(|w| w.state == WaveState::AtBarrier)
                .count();
            if waiting == 0 || running == 0 {
                break;
            }
            // Each pass runs every live wave up to a barrier or its end, so now every wave
            // still alive waits at the barrier: release them together.
            for w in self.waves[..nwaves].iter_mut() {
                if w.state == WaveState::AtBarrier {
                    w.state = WaveState::Running;
                }
            }
        }
        end_workgroup(
            plan,
            wg_index,
            &mut self.waves[..nwaves],
            &mut self.stats,
            &mut self.costs,
        );
        Ok(())
    }
}

/// Runs one wave until it ends or reaches a barrier (or, in a cooperative dispatch, a
/// GWS operation or a point to yield at).
#[inline(always)]
pub(crate) fn run_wave(
    w: &mut Wave,
    cache: &mut DecodeCache,
    ctx: &mut Ctx,
    plan: &Plan,
    stop: &AtomicBool,
    stats: &mut DispatchStats,
) -> Result<Step, DispatchError> {
    // Two copies of the loop: counting classes costs an increment per instruction that a
    // dispatch nobody reads the counts of (hsasim's without virtual time) need not pay.
    if plan.count_mix {
        run_wave_loop::<true>(w, cache, ctx, plan, stop, stats)
    } else {
        run_wave_loop::<false>(w, cache, ctx, plan, stop, stats)
    }
}

/// [`run_wave`]; `COUNT`: add each instruction to the wave's class counts.
#[inline(never)]
fn run_wave_loop<const COUNT: bool>(
    w: &mut Wave,
    cache: &mut DecodeCache,
    ctx: &mut Ctx,
    plan: &Plan,
    stop: &AtomicBool,
    stats: &mut DispatchStats,
) -> Result<Step, DispatchError> {
    let model = plan.model;
    // What is left of this wave's watchdog allowance (it may have run before a barrier).
    let budget = plan.max_wave_instructions.saturating_sub(w.executed);
    // The periodic check keys on the wave's total count, not this call's: a loop around
    // `s_barrier` returns here every few instructions and must still be checked.
    let base = w.executed;
    // The count after which the next periodic check is due (never 0: it follows an
    // instruction).
    let periodic_after = |count: u64| count + CHECK_EVERY - ((base + count) & (CHECK_EVERY - 1));
    // The count at which the loop next looks beyond the instruction stream (the periodic
    // check or the watchdog, whichever comes first), and how many instructions are left
    // until then: the instructions run so far are `look_at - left`. One countdown per
    // instruction, and few values live across the handler call.
    let mut look_at = periodic_after(0).min(budget);
    let mut left = look_at;
    // The instruction at the wave's PC, as a pointer into `cache.insts` (null with no
    // allowance left: the watchdog stops the wave before it would run one).
    let mut at: *mut CachedInst = if budget == 0 {
        std::ptr::null_mut()
    } else {
        match cache.find_start(w.pc, model, ctx.mem) {
            Ok(id) => &mut cache.insts[id],
            Err(e) => return Err(e),
        }
    };
    let jit = plan.jit;
    let result = loop {
        if left == 0 {
            let count = look_at;
            // Another thread's error ends the dispatch: look now and then, not every time.
            if count > 0 && (base + count) & (CHECK_EVERY - 1) == 0 {
                if stop.load(Ordering::Relaxed) {
                    break Ok(Step::End);
                }
                if let Some(progress) = &plan.progress {
                    progress.fetch_max(base + count, Ordering::Relaxed);
                }
                if let Some(e) = timed_out(plan) {
                    break Err(e);
                }
                if plan.cooperative {
                    break Ok(Step::Yield);
                }
            }
            if count >= budget {
                break Err(DispatchError::Watchdog {
                    pc: w.pc,
                    limit: plan.max_wave_instructions,
                    workgroup: ctx.workgroup,
                    wave: w.id,
                });
            }
            look_at = periodic_after(count).min(budget);
            left = look_at - count;
        }
        // SAFETY: `at` points at an element of `cache.insts`, which only `successor` and
        // `translate` change (they may push and reallocate), and `at` is set again from
        // their answers after they run.
        if jit && unsafe { (*at).runs } >= jit::HOT_AFTER {
            // SAFETY: as above; the offset is its index.
            let id = unsafe { at.offset_from(cache.insts.as_ptr()) } as usize;
            let region = match cache.insts[id].region {
                REGION_NONE => cache.translate(id, w),
                REGION_NEVER => None,
                r => Some(r),
            };
            if let (Some(r), Some(translated)) = (region, cache.jit.as_mut()) {
                let region = translated.region(r);
                // Only when the whole region fits before the next look beyond the
                // instruction stream: the watchdog and the periodic check stay exact.
                if left >= region.len() {
                    let len = region.len() as usize;
                    let (n, exit) = region.run(w, ctx, left);
                    if n > 0 {
                        left -= n;
                        stats.translated += n - exit.called_out;
                        stats.called_out += exit.called_out;
                        match exit.leave {
                            Leave::Ran => {}
                            Leave::Step(s) => break Ok(s),
                            Leave::Error(e) => break Err(*e),
                            // Region::run resumed it.
                            Leave::Panic(_) => unreachable!("a region's panic is resumed"),
                        }
                        // It ran to its end (perhaps several trips round).
                        match cache.successor(id + len - 1, w.pc, model, ctx.mem) {
                            Ok(next) => at = &mut cache.insts[next],
                            Err(e) => break Err(e),
                        }
                        continue;
                    }
                }
            }
            at = &mut cache.insts[id];
        }
        // SAFETY: as above.
        let d = unsafe { &mut *at };
        d.runs += 1;
        if COUNT {
            w.mix.add(d.class);
        }
        w.pc = d.next_pc;
        ctx.pc = d.pc;
        left -= 1;
        match (d.run)(w, &d.inst, ctx) {
            Ok(Step::Continue) => {}
            Ok(s) => break Ok(s),
            Err(e) => break Err(*e),
        }
        if d.falls_through {
            debug_assert_eq!(w.pc, d.next_pc, "an instruction not known to jump jumped");
            // SAFETY: `falls_through` says the next element exists: the fill that decoded
            // `d` decoded its successor right after it.
            at = unsafe { at.add(1) };
        } else {
            // SAFETY: `at` points into `cache.insts` (above), so the offset is its index.
            let id = unsafe { at.offset_from(cache.insts.as_ptr()) } as usize;
            match cache.successor(id, w.pc, model, ctx.mem) {
                Ok(next) => at = &mut cache.insts[next],
                Err(e) => break Err(e),
            }
        }
    };
    let count = look_at - left;
    stats.instructions += count;
    w.executed += count;
    result
}

/// The timeout error if the dispatch's wall-clock limit has passed. The workgroup counts
/// are filled in by [`run`].
pub(crate) fn timed_out(plan: &Plan) -> Option<DispatchError> {
    let (limit, deadline) = plan.timeout?;
    (Instant::now() >= deadline).then_some(DispatchError::Timeout {
        limit,
        finished: 0,
        workgroups: 0,
    })
}

/// Sets the registers a wave starts with (AMDGPUUsage, "Initial Kernel Execution State").
pub(crate) fn init_wave(
    w: &mut Wave,
    plan: &Plan,
    mem: &dyn GuestMemory,
    wg: [u32; 3],
    size: [u32; 3],
    id: u32,
    items: u32,
) -> Result<(), DispatchError> {
    let kd = &plan.kd;
    w.s = [0; 128];
    w.pc = plan.entry;
    w.scc = false;
    // MODE starts from the descriptor (COMPUTE_PGM_RSRC1): FLOAT_ROUND_MODE_32/16_64 and
    // FLOAT_DENORM_MODE_32/16_64 (bits 19:12) land in MODE.FP_ROUND/FP_DENORM (7:0),
    // ENABLE_DX10_CLAMP (21) in MODE.DX10_CLAMP (8), ENABLE_IEEE_MODE (23) in MODE.IEEE (9).
    let rsrc1 = plan.kd.compute_pgm_rsrc1;
    w.mode = ((rsrc1 >> 12) & 0xff) | ((rsrc1 >> 21) & 1) << 8 | ((rsrc1 >> 23) & 1) << 9;
    w.trapsts = 0;
    w.state = WaveState::Running;
    w.id = id;
    w.lane_ops = 0;
    w.executed = 0;
    w.mix = Mix::default();
    let mut n = 0usize;
    let mut push = |w: &mut Wave, v: u32| {
        if n < 106 {
            w.s[n] = v;
        }
        n += 1;
    };
    let props = kd.kernel_code_properties;
    if props & kcp::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER != 0 {
        // A buffer resource over the private window: base, no stride, all records.
        push(w, PRIVATE_BASE as u32);
        push(w, (PRIVATE_BASE >> 32) as u32);
        push(w, u32::MAX);
        push(w, 0x0002_7000);
    }
    if props & kcp::ENABLE_SGPR_DISPATCH_PTR != 0 {
        push(w, plan.packet_address as u32);
        push(w, (plan.packet_address >> 32) as u32);
    }
    if props & kcp::ENABLE_SGPR_QUEUE_PTR != 0 {
        push(w, plan.queue_address as u32);
        push(w, (plan.queue_address >> 32) as u32);
    }
    if props & kcp::ENABLE_SGPR_KERNARG_SEGMENT_PTR != 0 {
        push(w, plan.kernarg as u32);
        push(w, (plan.kernarg >> 32) as u32);
    }
    if props & kcp::ENABLE_SGPR_DISPATCH_ID != 0 {
        push(w, plan.dispatch_id as u32);
        push(w, (plan.dispatch_id >> 32) as u32);
    }
    if props & kcp::ENABLE_SGPR_FLAT_SCRATCH_INIT != 0 {
        push(w, PRIVATE_BASE as u32);
        push(w, (PRIVATE_BASE >> 32) as u32);
    }
    if props & kcp::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE != 0 {
        push(w, plan.private_per_lane as u32);
    }
    // gfx940+: kernel arguments preloaded into the SGPRs after the other user SGPRs.
    let preload_len = (kd.kernarg_preload & 0x7f) as u64;
    let preload_off = (kd.kernarg_preload >> 7) as u64 * 4;
    if plan.model == GfxModel::Gfx942 && preload_len > 0 {
        for k in 0..preload_len {
            let a = plan.kernarg.wrapping_add(preload_off + 4 * k);
            // An unreadable kernarg word preloads as 0; the kernel's own loads of the
            // same word would fault and report it.
            let v = match mem.translate(a, 4) {
                // SAFETY: a..a+4 was translated just above.
                Some(host) => unsafe { exec::host_read::<u32>(host) },
                None => 0,
            };
            push(w, v);
        }
    }
    let rsrc2 = kd.compute_pgm_rsrc2;
    let mut n = ((rsrc2 >> RSRC2_USER_SGPR_COUNT_SHIFT) & 0x1f) as usize;
    let mut sys = |w: &mut Wave, v: u32| {
        if n < 106 {
            w.s[n] = v;
        }
        n += 1;
    };
    if rsrc2 & RSRC2_WORKGROUP_ID_X != 0 {
        sys(w, wg[0]);
    }
    if rsrc2 & RSRC2_WORKGROUP_ID_Y != 0 {
        sys(w, wg[1]);
    }
    if rsrc2 & RSRC2_WORKGROUP_ID_Z != 0 {
        sys(w, wg[2]);
    }
    if rsrc2 & RSRC2_WORKGROUP_INFO != 0 {
        sys(w, 0);
    }
    if rsrc2 & RSRC2_ENABLE_PRIVATE_SEGMENT != 0 {
        // Private segment wave byte offset: each wave has its own scratch here.
        sys(w, 0);
    }
    w.s[FLAT_SCRATCH_LO] = PRIVATE_BASE as u32;
    w.s[FLAT_SCRATCH_LO + 1] = (PRIVATE_BASE >> 32) as u32;
    // v0 = packed work-item ids x | y << 10 | z << 20 (gfx90a/gfx942), EXEC = live lanes.
    // Only the components ENABLE_VGPR_WORKITEM_ID asks for are set: a kernel that never
    // reads y/z gets 0 there, and the compiler relies on it (it does not mask v0).
    let id_components = (rsrc2 >> RSRC2_VGPR_WORKITEM_ID_SHIFT) & 3;
    let mut exec = 0u64;
    let v0 = &mut w.v[0];
    // Work-item t = id * 64 + lane has x = t % size.x, y = (t / size.x) % size.y and
    // z = t / (size.x * size.y): found once for the first lane, then stepped.
    let t0 = id * LANES as u32;
    // Most waves start in the workgroup's first row (every wave of a one-dimensional
    // workgroup): their ids need no division, which costs more than the rest of this
    // function's arithmetic.
    let (x, y, z) = if t0 < size[0] {
        (t0, 0, 0)
    } else {
        (
            t0 % size[0],
            (t0 / size[0]) % size[1],
            t0 / (size[0] * size[1]),
        )
    };
    if x + LANES as u32 <= size[0] && t0 + LANES as u32 <= items {
        // The whole wave lies in one row of x: only x changes from lane to lane.
        let y_id = if id_components >= 1 { y } else { 0 };
        let z_id = if id_components >= 2 { z } else { 0 };
        let yz = y_id << 10 | z_id << 20;
        for (l, slot) in v0.iter_mut().enumerate() {
            *slot = (x + l as u32) | yz;
        }
        exec = u64::MAX;
    } else {
        init_v0_lanes(v0, t0, items, size, id_components, (x, y, z), &mut exec);
    }
    w.s[EXEC_LO] = exec as u32;
    w.s[EXEC_LO + 1] = (exec >> 32) as u32;
    let scratch = (plan.private_per_lane * LANES as u64) as usize;
    w.scratch_per_lane = plan.private_per_lane;
    if w.scratch.len() != scratch {
        // Drop the old buffer first: a dispatch with a huge private segment should not
        // need the previous one's memory on top.
        w.scratch = LineBytes::empty();
        w.scratch = LineBytes::zeroed(scratch).ok_or_else(|| {
            DispatchError::OutOfResources(format!(
                "cannot allocate {scratch} bytes of private memory for a wave ({} bytes per work-item)",
                plan.private_per_lane
            ))
        })?;
    }
    Ok(())
}

/// v0 and EXEC lane by lane (a wave that spans rows of x, or the last partial wave):
/// work-item `t0 + l` has the ids stepped from `(x, y, z)`, those of `t0`.
fn init_v0_lanes(
    v0: &mut [u32; LANES],
    t0: u32,
    items: u32,
    size: [u32; 3],
    id_components: u32,
    (mut x, mut y, mut z): (u32, u32, u32),
    exec: &mut u64,
) {
    for (l, slot) in v0.iter_mut().enumerate() {
        let t = t0 + l as u32;
        if t < items {
            *exec |= 1 << l;
            let y_id = if id_components >= 1 { y } else { 0 };
            let z_id = if id_components >= 2 { z } else { 0 };
            *slot = x | y_id << 10 | z_id << 20;
        } else {
            *slot = 0;
        }
        x += 1;
        if x == size[0] {
            x = 0;
            y += 1;
            if y == size[1] {
                y = 0;
                z += 1;
            }
        }
    }
}

/// The plan and per-dispatch facts of `d` under `config`; the clock of its timeout starts.
pub(crate) fn prepare(
    d: &Dispatch,
    mem: &dyn GuestMemory,
    config: &ExecConfig,
    cooperative: bool,
    count_ops: bool,
) -> Result<(Plan, DispatchInfo), DispatchError> {
    let mut plan = plan(d, mem)?;
    plan.jit = config.jit || jit::forced_on();
    plan.count_ops = count_ops;
    plan.max_wave_instructions = config.max_wave_instructions.max(1);
    plan.timeout = config
        .timeout
        .and_then(|t| Some((t, Instant::now().checked_add(t)?)));
    plan.cooperative = cooperative;
    plan.timing = config.timing;
    plan.progress = config.progress.clone();
    plan.count_mix = config.timing.is_some() || count_ops;
    let info = DispatchInfo {
        timing: config.timing,
        model: plan.model,
        compute_units: config.compute_units.max(1),
        private_segment_size: plan.private_per_lane as u32,
        cooperative,
    };
    Ok((plan, info))
}

/// Runs a dispatch; `count_ops` fills [`DispatchStats::interpreted_ops`].
pub fn run(
    d: &Dispatch,
    mem: &dyn GuestMemory,
    config: &ExecConfig,
    count_ops: bool,
) -> Result<DispatchStats, DispatchError> {
    let (plan, info) = prepare(d, mem, config, false, count_ops)?;
    let [cx, cy, cz] = plan.wg_count;
    let total = cx as u64 * cy as u64 * cz as u64;
    let threads = config.worker_threads.max(1).min(total.min(256) as usize);
    // Workers claim workgroups a batch at a time, so that the one counter they all write
    // is touched once per batch rather than once per (possibly microseconds-short)
    // workgroup; small enough that every worker still gets many batches. Each shared word
    // has a cache line of its own: `stop`, read by every worker all the time, must not
    // share one with `next`, which they write.
    let batch = (total / (threads as u64 * 64)).clamp(1, 16);
    let next = CacheLine(AtomicU64::new(0));
    let finished = CacheLine(AtomicU64::new(0));
    let stop = CacheLine(AtomicBool::new(false));
    let first_error: Mutex<Option<DispatchError>> = Mutex::new(None);
    let totals: Mutex<DispatchStats> = Mutex::new(DispatchStats {
        costs: empty_costs(&plan, total),
        ..DispatchStats::default()
    });
    // Slots: the host threads a dispatch may use (not fewer for a small grid).
    let arbitration = Entry::enter(config.device, config.priority, config.worker_threads.max(1));
    let deadline = plan.timeout.map(|(_, at)| at);
    let record = |e: DispatchError| {
        stop.0.store(true, Ordering::Relaxed);
        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let work = || {
        let _running = arbitration.run_worker();
        let mut worker = Worker::take(&plan, mem);
        // Workgroups this worker finished, added to `finished` once at the end.
        let mut done = 0u64;
        let (mut k, mut end) = (0u64, 0u64);
        while !stop.0.load(Ordering::Relaxed) {
            if k == end {
                if !arbitration.may_claim(&stop.0, deadline) {
                    // Stopped, or out of time, while held back: the loop says which.
                    if let Some(e) = timed_out(&plan) {
                        record(e);
                    }
                    break;
                }
                k = next.0.fetch_add(batch, Ordering::Relaxed);
                end = (k + batch).min(total);
                if k < total && end == total {
                    arbitration.retire();
                }
            }
            if k >= total {
                break;
            }
            // Also between workgroups: a grid of many short workgroups never reaches a
            // wave's periodic check.
            if let Some(e) = timed_out(&plan) {
                record(e);
                break;
            }
            // A one-dimensional grid (the common case) needs no 64-bit divisions.
            let wg = if k < cx as u64 {
                [k as u32, 0, 0]
            } else {
                [
                    (k % cx as u64) as u32,
                    ((k / cx as u64) % cy as u64) as u32,
                    (k / (cx as u64 * cy as u64)) as u32,
                ]
            };
            if let Err(e) = worker.run_workgroup(&plan, &info, mem, wg, k, &stop.0) {
                record(e);
                break;
            }
            worker.costs.flush_if_full(&totals);
            k += 1;
            // Its waves may have ended early because another worker's error stopped the
            // dispatch: count it only if not.
            if !stop.0.load(Ordering::Relaxed) {
                done += 1;
            }
        }
        finished.0.fetch_add(done, Ordering::Relaxed);
        worker.finish(&plan, &totals);
    };
    // A panic in the interpreter fails this dispatch only; the caller's queue, and the
    // process, go on.
    let guarded = || {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(&work)) {
            record(DispatchError::Internal(format!(
                "a worker thread panicked: {}",
                panic_message(payload.as_ref())
            )));
        }
    };
    if threads <= 1 {
        guarded();
    } else {
        crate::pool::run_shared(threads, &guarded);
    }
    if let Some(mut e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        if let DispatchError::Timeout {
            finished: f,
            workgroups,
            ..
        } = &mut e
        {
            *f = finished.0.load(Ordering::Relaxed);
            *workgroups = total;
        }
        return Err(e);
    }
    Ok(totals.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
