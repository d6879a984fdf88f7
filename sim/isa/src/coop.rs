//! Cooperative dispatches (from a queue created `HSA_QUEUE_TYPE_COOPERATIVE`): every
//! workgroup of the grid is resident at once, so a grid-wide barrier
//! (`__ockl_grid_sync`: `ds_gws_barrier` on the queue's GWS unit) can pass.
//!
//! An ordinary dispatch runs one workgroup at a time to completion on each host worker; that
//! cannot run a grid barrier, whose first arrival would wait for workgroups not started yet.
//! Here each worker owns the workgroups `k ≡ worker (mod workers)` and interleaves them: a
//! workgroup runs until all its waves end or wait (at `s_barrier`, at a GWS barrier, or
//! yielding at `s_sleep` and every [`CHECK_EVERY`](crate::dispatch::CHECK_EVERY) instructions, so a wave spinning on memory
//! another workgroup writes lets that one run), then the next; each round also starts one
//! more of the worker's workgroups until all have started. A worker whose every workgroup
//! waits at a GWS barrier sleeps until another worker's wave releases the phase. When every
//! worker still holding workgroups sleeps so, no wave can ever arrive: the dispatch stops
//! with a deadlock error instead of hanging (hardware would hang the queue).
//!
//! Residency limit: a grid runs only if all its workgroups fit at once on the agent's
//! compute units as hipshim's occupancy counts them: 32 wave slots and 64 KiB of LDS per
//! CU, whole workgroups. A larger grid fails before running (`InvalidDispatch`, naming the
//! limit). Register files and LDS are allocated per started workgroup for the dispatch and
//! reused by the worker's later workgroups once one ends.

use crate::api::{Dispatch, DispatchError, ExecConfig, GuestMemory};
use crate::cache_line::LineBytes;
use crate::dispatch::{
    empty_costs, end_workgroup, init_wave, panic_message, prepare, run_wave, timed_out, CostLog,
    DecodeCache, DispatchStats, Plan, Worker,
};
use crate::exec::{tlb::Tlb, Ctx, DispatchInfo, Step};
use crate::gws::{Arrival, Gws, GwsOp};
use crate::wave::{Wave, WaveState, LANES};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Wave slots of a compute unit (4 SIMDs of 8 waves on gfx90a and gfx942).
const WAVE_SLOTS_PER_CU: u64 = 32;
/// LDS of a compute unit.
const LDS_PER_CU: u64 = 64 * 1024;
/// How long a worker whose waves all wait sleeps before looking at the clock again.
const IDLE_WAIT: Duration = Duration::from_millis(20);

/// One started workgroup.
struct Resident {
    wg: [u32; 3],
    index: u64,
    nwaves: usize,
    waves: Vec<Wave>,
    lds: LineBytes,
    /// Per wave at a GWS barrier: the resource, the generation it waits to pass, and the
    /// barrier's pc (for the deadlock message).
    waits: Vec<(u8, u64, u64)>,
}

enum Progress {
    Finished,
    Ran,
    Blocked,
}

struct Shared<'a> {
    plan: &'a Plan,
    info: &'a DispatchInfo,
    mem: &'a dyn GuestMemory,
    gws: &'a Gws,
    total: u64,
    threads: usize,
    stop: AtomicBool,
    finished: AtomicU64,
    first_error: Mutex<Option<DispatchError>>,
    totals: Mutex<DispatchStats>,
}

impl Shared<'_> {
    fn record(&self, e: DispatchError) {
        self.stop.store(true, Ordering::Relaxed);
        let mut slot = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
        drop(slot);
        // Workers asleep waiting for a release must see the stop now.
        self.gws.notify();
    }
}

impl Resident {
    fn new() -> Resident {
        Resident {
            wg: [0; 3],
            index: 0,
            nwaves: 0,
            waves: Vec::new(),
            lds: LineBytes::empty(),
            waits: Vec::new(),
        }
    }

    /// Sets this slot up as workgroup `k` of the grid, its waves at the kernel's entry.
    fn start(
        &mut self,
        sh: &Shared,
        k: u64,
        stats: &mut DispatchStats,
    ) -> Result<(), DispatchError> {
        let plan = sh.plan;
        let [cx, cy, _] = plan.wg_count;
        let wg = [
            (k % cx as u64) as u32,
            ((k / cx as u64) % cy as u64) as u32,
            (k / (cx as u64 * cy as u64)) as u32,
        ];
        // The last workgroup in a dimension may be partial.
        let size: [u32; 3] =
            std::array::from_fn(|d| plan.wg_size[d].min(plan.grid[d] - wg[d] * plan.wg_size[d]));
        let items = size[0] * size[1] * size[2];
        let nwaves = items.div_ceil(LANES as u32) as usize;
        while self.waves.len() < nwaves {
            self.waves.push(Wave::new());
        }
        self.waits.resize(self.waves.len(), (0, 0, 0));
        if self.lds.len() != plan.lds_bytes {
            self.lds = LineBytes::zeroed(plan.lds_bytes).expect("64 KiB of LDS");
        } else {
            self.lds.as_mut_slice().fill(0);
        }
        for (id, w) in self.waves[..nwaves].iter_mut().enumerate() {
            init_wave(w, plan, sh.mem, wg, size, id as u32, items)?;
        }
        self.wg = wg;
        self.index = k;
        self.nwaves = nwaves;
        stats.workgroups += 1;
        stats.waves += nwaves as u64;
        Ok(())
    }

    /// Whether a wave waiting at a GWS barrier has been released.
    fn released(&self, gws: &Gws) -> bool {
        self.waves[..self.nwaves]
            .iter()
            .zip(&self.waits)
            .any(|(w, &(r, generation, _))| {
                w.state == WaveState::AtGws && gws.generation(r) != generation
            })
    }

    /// Runs the workgroup's waves until all end or wait, or one yields.
    fn run_slice(
        &mut self,
        sh: &Shared,
        cache: &mut DecodeCache,
        tlb: &Tlb,
        stats: &mut DispatchStats,
        log: &mut CostLog,
    ) -> Result<Progress, DispatchError> {
        let mut ctx = Ctx::new(
            sh.mem,
            tlb,
            self.lds.as_mut_slice(),
            sh.info,
            self.wg,
            self.index,
        );
        let waves = &mut self.waves[..self.nwaves];
        let waits = &mut self.waits;
        let mut ran = false;
        loop {
            let mut yielded = false;
            for (k, w) in waves.iter_mut().enumerate() {
                if w.state == WaveState::AtGws && sh.gws.generation(waits[k].0) != waits[k].1 {
                    w.state = WaveState::Running;
                }
                if w.state != WaveState::Running {
                    continue;
                }
                ran = true;
                loop {
                    match run_wave(w, cache, &mut ctx, sh.plan, &sh.stop, stats)? {
                        Step::Barrier => w.state = WaveState::AtBarrier,
                        Step::End | Step::Continue => w.state = WaveState::Ended,
                        Step::Yield => yielded = true,
                        Step::Gws => {
                            let r = w.gws;
                            match r.op {
                                GwsOp::Init => {
                                    sh.gws.init(r.resource, r.value);
                                    continue;
                                }
                                GwsOp::Barrier => match sh.gws.arrive(r.resource, r.value) {
                                    Arrival::Released => continue,
                                    Arrival::Wait(generation) => {
                                        w.state = WaveState::AtGws;
                                        waits[k] = (r.resource, generation, ctx.pc);
                                    }
                                },
                            }
                        }
                    }
                    break;
                }
            }
            if yielded || sh.stop.load(Ordering::Relaxed) {
                return Ok(Progress::Ran);
            }
            let live = waves.iter().filter(|w| w.state != WaveState::Ended).count();
            if live == 0 {
                end_workgroup(sh.plan, self.index, waves, stats, log);
                return Ok(Progress::Finished);
            }
            let at_gws = waves.iter().filter(|w| w.state == WaveState::AtGws).count();
            if at_gws == 0 {
                // Every live wave waits at `s_barrier`: release them together.
                for w in waves.iter_mut() {
                    if w.state == WaveState::AtBarrier {
                        w.state = WaveState::Running;
                    }
                }
                continue;
            }
            let woken = waves
                .iter()
                .zip(waits.iter())
                .any(|(w, &(r, generation, _))| {
                    w.state == WaveState::AtGws && sh.gws.generation(r) != generation
                });
            if !woken {
                return Ok(if ran {
                    Progress::Ran
                } else {
                    Progress::Blocked
                });
            }
        }
    }
}

/// Sleeps until a wave of `active` is released; the deadlock error when every worker with
/// workgroups left is asleep so.
fn wait_for_release(sh: &Shared, active: &[Resident]) -> Result<(), DispatchError> {
    let mut s = sh.gws.lock();
    loop {
        if sh.stop.load(Ordering::Relaxed) || active.iter().any(|g| g.released(sh.gws)) {
            return Ok(());
        }
        if let Some(e) = timed_out(sh.plan) {
            return Err(e);
        }
        s.idle += 1;
        if s.idle >= s.working {
            s.idle -= 1;
            drop(s);
            return Err(deadlock(sh, active));
        }
        let epoch = s.epoch;
        s = sh.gws.wait(s, IDLE_WAIT);
        // A release since then cleared the count (and may have woken a wave here).
        if s.epoch == epoch {
            s.idle -= 1;
        }
    }
}

fn deadlock(sh: &Shared, active: &[Resident]) -> DispatchError {
    let waiting = active.iter().find_map(|g| {
        g.waves[..g.nwaves]
            .iter()
            .zip(&g.waits)
            .find(|(w, _)| w.state == WaveState::AtGws)
            .map(|(w, &(r, _, pc))| (g.wg, w.id, r, pc))
    });
    let Some((wg, wave, resource, pc)) = waiting else {
        return DispatchError::Internal("a cooperative worker waited with no wave at GWS".into());
    };
    let (arrived, expected) = sh.gws.phase(resource);
    DispatchError::Illegal {
        pc,
        reason: format!(
            "GWS barrier deadlock: wave {wave} of workgroup ({}, {}, {}) waits at \
             `ds_gws_barrier` on resource {resource}, whose phase needs {expected} waves; \
             {arrived} arrived and every other wave of the dispatch has ended or waits too \
             (hardware would hang the queue). The count comes from ds_gws_init or the \
             previous phase's barrier value: do all {} workgroups reach the barrier?",
            wg[0], wg[1], wg[2], sh.total
        ),
    }
}

/// One host worker: its share of the grid, interleaved, to the end.
fn work(sh: &Shared, me: usize) {
    let mut worker = Worker::take(sh.plan, sh.mem);
    let mut active: Vec<Resident> = Vec::new();
    let mut spare: Vec<Resident> = Vec::new();
    let mut next = me as u64;
    let mut body = || -> Result<(), DispatchError> {
        let (cache, tlb, stats, log) = worker.parts();
        loop {
            if sh.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if let Some(e) = timed_out(sh.plan) {
                return Err(e);
            }
            let mut ran = false;
            if next < sh.total {
                let mut g = spare.pop().unwrap_or_else(Resident::new);
                g.start(sh, next, stats)?;
                next += sh.threads as u64;
                active.push(g);
                ran = true;
            }
            let mut i = 0;
            while i < active.len() {
                match active[i].run_slice(sh, cache, tlb, stats, log)? {
                    Progress::Finished => {
                        log.flush_if_full(&sh.totals);
                        if !sh.stop.load(Ordering::Relaxed) {
                            sh.finished.fetch_add(1, Ordering::Relaxed);
                        }
                        spare.push(active.swap_remove(i));
                        ran = true;
                        continue;
                    }
                    Progress::Ran => ran = true,
                    Progress::Blocked => {}
                }
                if sh.stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                i += 1;
            }
            if ran {
                continue;
            }
            if active.is_empty() {
                return Ok(());
            }
            wait_for_release(sh, &active)?;
        }
    };
    let result = body();
    sh.gws.lock().working -= 1;
    sh.gws.notify();
    if let Err(e) = result {
        sh.record(e);
    }
    worker.finish(sh.plan, &sh.totals);
}

/// Whether every workgroup of the grid fits on the compute units at once.
fn check_residency(plan: &Plan, compute_units: u32, total: u64) -> Result<(), DispatchError> {
    let items = plan.wg_size.iter().map(|&n| u64::from(n)).product::<u64>();
    let waves = items.div_ceil(LANES as u64);
    let by_waves = WAVE_SLOTS_PER_CU / waves;
    let by_lds = LDS_PER_CU
        .checked_div(plan.lds_bytes as u64)
        .unwrap_or(u64::MAX);
    let per_cu = by_waves.min(by_lds);
    let resident = per_cu * u64::from(compute_units.max(1));
    if total > resident {
        return Err(DispatchError::InvalidDispatch(format!(
            "cooperative dispatch of {total} workgroups cannot be resident at once: {} \
             compute units hold {per_cu} such workgroups each ({waves} waves of \
             {WAVE_SLOTS_PER_CU} wave slots, {} bytes of {LDS_PER_CU} bytes of LDS), \
             {resident} in all",
            compute_units.max(1),
            plan.lds_bytes
        )));
    }
    Ok(())
}

pub fn run(
    d: &Dispatch,
    mem: &dyn GuestMemory,
    config: &ExecConfig,
    gws: &Gws,
    count_ops: bool,
) -> Result<DispatchStats, DispatchError> {
    let (plan, info) = prepare(d, mem, config, true, count_ops)?;
    let [cx, cy, cz] = plan.wg_count;
    let total = cx as u64 * cy as u64 * cz as u64;
    check_residency(&plan, info.compute_units, total)?;
    let threads = config.worker_threads.max(1).min(total.min(256) as usize);
    let _session = gws.begin(threads)?;
    let sh = Shared {
        plan: &plan,
        info: &info,
        mem,
        gws,
        total,
        threads,
        stop: AtomicBool::new(false),
        finished: AtomicU64::new(0),
        first_error: Mutex::new(None),
        totals: Mutex::new(DispatchStats {
            costs: empty_costs(&plan, total),
            ..DispatchStats::default()
        }),
    };
    // A panic in the interpreter fails this dispatch only.
    let guarded = |me: usize| {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| work(&sh, me))) {
            sh.record(DispatchError::Internal(format!(
                "a worker thread panicked: {}",
                panic_message(payload.as_ref())
            )));
        }
    };
    if threads <= 1 {
        guarded(0);
    } else {
        std::thread::scope(|s| {
            for me in 0..threads {
                let guarded = &guarded;
                s.spawn(move || guarded(me));
            }
        });
    }
    if let Some(mut e) = sh
        .first_error
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        if let DispatchError::Timeout {
            finished: f,
            workgroups,
            ..
        } = &mut e
        {
            *f = sh.finished.load(Ordering::Relaxed);
            *workgroups = total;
        }
        return Err(e);
    }
    Ok(sh.totals.into_inner().unwrap_or_else(|p| p.into_inner()))
}
