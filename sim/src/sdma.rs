//! SDMA engines: per GPU, N copy engines, each an in-order job queue served by its own
//! thread (started on first use) or, in deterministic mode, by whichever thread waits.

use crate::clock::now_ns;
use crate::error::catch_panic;
use crate::idle_spin::IdleSpin;
use crate::memory::MemoryRegistry;
use crate::signal::{Bell, Signal, HUB};
use crate::virtual_time::{Completion, VirtualTime, Work};
use hsasim_vtime::Direction;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use crate::copy_shape::CopyShape;

pub struct CopyJob {
    pub shape: CopyShape,
    pub deps: Vec<Arc<Signal>>,
    pub completion: Option<Arc<Signal>>,
    pub profile: bool,
    /// Its entry on the virtual time line (`HSASIM_TIME=virtual`), given at submission.
    pub virtual_entry: Option<u64>,
}

/// The bytes from `base` a pitched copy touches: the last row of the last slice ends
/// `(slices - 1) * slice + (rows - 1) * pitch + width` bytes in. `None` on overflow.
fn pitched_extent(width: u64, rows: u64, slices: u64, pitch: u64, slice: u64) -> Option<u64> {
    (slices - 1)
        .checked_mul(slice)?
        .checked_add((rows - 1).checked_mul(pitch)?)?
        .checked_add(width)
}

impl CopyJob {
    fn ready(&self) -> bool {
        self.deps.iter().all(|s| s.load(Ordering::Acquire) == 0)
    }

    /// The (source, destination) byte ranges the job touches, as (start, length); `None`
    /// when it moves nothing.
    fn extents(&self) -> Result<Option<[(u64, u64); 2]>, String> {
        match self.shape {
            CopyShape::Linear { dst, src, size } => {
                Ok((size > 0).then_some([(src, size), (dst, size)]))
            }
            CopyShape::Rect {
                dst,
                dst_pitch,
                dst_slice,
                src,
                src_pitch,
                src_slice,
                range: [width, rows, slices],
            } => {
                if width == 0 || rows == 0 || slices == 0 {
                    return Ok(None);
                }
                let extent = |pitch, slice| {
                    pitched_extent(width, rows, slices, pitch, slice).ok_or_else(|| {
                        format!(
                            "the rectangle's extent overflows 64 bits ({:?})",
                            self.shape
                        )
                    })
                };
                Ok(Some([
                    (src, extent(src_pitch, src_slice)?),
                    (dst, extent(dst_pitch, dst_slice)?),
                ]))
            }
            CopyShape::Prefetch => Ok(None),
        }
    }

    /// The ranges must still lie inside memory the agents can reach: the client may have
    /// freed or unlocked it since submission. A copy engine then faults; hsasim fails the
    /// copy instead of touching memory that may be gone. Returns how far each side's host
    /// bytes lie from its addresses (source, destination): zero but for agent addresses of
    /// strict-mode locked memory.
    fn check(&self, memory: &MemoryRegistry) -> Result<[u64; 2], String> {
        let Some(ranges) = self.extents()? else {
            return Ok([0, 0]);
        };
        let mut deltas = [0u64; 2];
        for (((start, len), what), delta) in ranges
            .into_iter()
            .zip(["source", "destination"])
            .zip(&mut deltas)
        {
            let host = memory.accessible(start, len).map_err(|why| {
                format!("the {what} range {start:#x}+{len:#x} {why} (or no longer is)")
            })?;
            *delta = host.wrapping_sub(start);
        }
        Ok(deltas)
    }

    /// Moves the bytes, after checking the ranges.
    fn transfer(&self, memory: &MemoryRegistry) -> Result<(), String> {
        let [src_delta, dst_delta] = self.check(memory)?;
        let (src_host, dst_host) = (
            |a: u64| a.wrapping_add(src_delta),
            |a: u64| a.wrapping_add(dst_delta),
        );
        match self.shape {
            CopyShape::Linear { dst, src, size } => {
                let (dst, src) = (dst_host(dst), src_host(src));
                // SAFETY: `check` found both ranges inside registered memory just now;
                // `copy` tolerates overlap.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size as usize) };
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
                for z in 0..range[2] {
                    for y in 0..range[1] {
                        let d = dst_host(dst + z * dst_slice + y * dst_pitch);
                        let s = src_host(src + z * src_slice + y * src_pitch);
                        // SAFETY: every row lies inside the extents `check` just found
                        // registered (and their arithmetic did not overflow).
                        unsafe { std::ptr::copy(s as *const u8, d as *mut u8, range[0] as usize) };
                    }
                }
            }
            CopyShape::Prefetch => {}
        }
        Ok(())
    }

    /// The bytes the job moves, for the copy engine model.
    fn bytes(&self) -> u64 {
        match self.shape {
            CopyShape::Linear { size, .. } => size,
            CopyShape::Rect { range, .. } => {
                range[0].saturating_mul(range[1]).saturating_mul(range[2])
            }
            CopyShape::Prefetch => 0,
        }
    }

    /// Which way it moves bytes, by where its two sides live.
    fn direction(&self, memory: &MemoryRegistry) -> Direction {
        let (src, dst) = match self.shape {
            CopyShape::Linear { dst, src, .. } | CopyShape::Rect { dst, src, .. } => (src, dst),
            CopyShape::Prefetch => return Direction::HostToDevice,
        };
        let on_gpu = |address: u64| {
            memory.find(address, 1).is_some_and(|r| {
                matches!(
                    r.kind,
                    crate::memory::RegionKind::PoolAllocation { peers: Some(_), .. }
                )
            })
        };
        match (on_gpu(src), on_gpu(dst)) {
            (false, true) => Direction::HostToDevice,
            (true, false) => Direction::DeviceToHost,
            (true, true) => Direction::DeviceToDevice,
            (false, false) => Direction::HostToHost,
        }
    }

    /// Decrements the completion signal (with timestamps when profiling).
    fn complete(&self, start: u64) {
        std::sync::atomic::fence(Ordering::Release);
        if let Some(c) = &self.completion {
            if self.profile {
                c.set_timestamps(start, now_ns());
            }
            c.rmw(Ordering::Release, |v, o| v.fetch_sub(1, o));
        }
    }

    fn completion_handle(&self) -> u64 {
        self.completion.as_ref().map_or(0, |c| c.handle().handle)
    }
}

pub struct SdmaEngine {
    pub node: u32,
    pub index: u32,
    /// What jobs are checked against before they touch memory.
    memory: Arc<MemoryRegistry>,
    jobs: Mutex<VecDeque<CopyJob>>,
    /// Serialises job execution so the engine stays in order even when several threads pump
    /// it in deterministic mode.
    exec: Mutex<()>,
    stop: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// What the engine's thread sleeps on while it has no job: a submission or the stop
    /// wakes it, and signal changes (the hub's) do not.
    idle: Bell,
    /// The virtual clock, under `HSASIM_TIME=virtual`.
    vtime: std::sync::OnceLock<Arc<VirtualTime>>,
}

impl SdmaEngine {
    pub fn new(node: u32, index: u32, memory: Arc<MemoryRegistry>) -> Self {
        SdmaEngine {
            node,
            index,
            memory,
            jobs: Mutex::new(VecDeque::new()),
            exec: Mutex::new(()),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
            idle: Bell::new(),
            vtime: std::sync::OnceLock::new(),
        }
    }

    pub fn use_virtual_time(&self, vtime: Arc<VirtualTime>) {
        let _ = self.vtime.set(vtime);
    }

    /// Whether the job at the front waits on a dependency (virtual time passes over it).
    pub fn front_waits(&self) -> bool {
        self.jobs.lock().front().is_some_and(|j| !j.ready())
    }

    pub fn is_idle(&self) -> bool {
        self.jobs.lock().is_empty()
    }

    pub fn submit(self: &Arc<Self>, mut job: CopyJob, threaded: bool) {
        if let Some(v) = self.vtime.get() {
            job.virtual_entry = Some(v.submit_copy(self.node, self.index, job.completion_handle()));
        }
        self.jobs.lock().push_back(job);
        if threaded {
            self.ensure_thread();
        }
        // The bell's protocol: the new job is visible (SeqCst) before its sleeper count is read.
        std::sync::atomic::fence(Ordering::SeqCst);
        self.idle.wake();
        HUB.notify();
    }

    fn ensure_thread(self: &Arc<Self>) {
        let mut t = self.thread.lock();
        if t.is_some() || self.stop.load(Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("hsasim-sdma{}.{}", self.node, self.index))
            .spawn(move || me.serve());
        match spawned {
            Ok(h) => *t = Some(h),
            Err(e) => {
                tracing::error!(target: "hsasim", "cannot start SDMA engine thread: {e}; copies will run on waiting threads")
            }
        }
    }

    /// The completion signal handle (0 for none) of the front job, if it can run now.
    pub fn ready_front(&self) -> Option<u64> {
        self.jobs
            .lock()
            .front()
            .filter(|j| j.ready())
            .map(CopyJob::completion_handle)
    }

    fn front_ready(&self) -> bool {
        self.jobs.lock().front().is_some_and(|j| j.ready())
    }

    /// Runs the front job if its dependencies are met. Returns true if it ran one.
    pub fn step(&self) -> bool {
        let _order = self.exec.lock();
        let job = {
            let mut q = self.jobs.lock();
            match q.front() {
                Some(j) if j.ready() => q.pop_front(),
                _ => None,
            }
        };
        match job {
            Some(j) => {
                self.run(&j);
                true
            }
            None => false,
        }
    }

    /// Runs one job. A copy that cannot be done (its memory is gone, or an internal panic)
    /// moves nothing more and is reported on stderr and in the log; its completion signal
    /// is still decremented, so no waiter hangs. (ROCr has no per-copy error: a faulting
    /// copy engine raises a GPU memory fault, which by default aborts the process.)
    fn run(&self, job: &CopyJob) {
        if crate::capture::is_on() {
            crate::capture::copy(
                (self.node, self.index),
                &job.shape,
                job.deps.len(),
                job.completion.is_some(),
            );
        }
        let start = now_ns();
        let outcome = catch_panic(|| {
            crate::testing::copy_hook(job.completion_handle());
            job.transfer(&self.memory)
        })
        .unwrap_or_else(|why| Err(format!("internal error: {why}")));
        if let Err(why) = outcome {
            tracing::error!(target: "hsasim", engine = format_args!("{}.{}", self.node, self.index), shape = ?job.shape, "copy failed: {why}");
            eprintln!(
                "hsasim: copy engine {}.{}: copy failed, not (completely) done: {why}",
                self.node, self.index
            );
        }
        match (self.vtime.get(), job.virtual_entry) {
            (Some(v), Some(entry)) => {
                std::sync::atomic::fence(Ordering::Release);
                v.finish(
                    entry,
                    Work::Copy {
                        node: self.node,
                        engine: self.index,
                        bytes: job.bytes(),
                        direction: job.direction(&self.memory),
                        deps: job.deps.clone(),
                    },
                    Completion {
                        signal: job.completion.clone(),
                        timestamps: job.profile,
                    },
                    self.thread.lock().is_some(),
                );
            }
            _ => job.complete(start),
        }
    }

    fn serve(&self) {
        let mut idle = IdleSpin::new();
        // Whether the last step ran a job: only then is another one likely soon.
        let mut busy = false;
        while !self.stop.load(Ordering::SeqCst) {
            // `run` already contains a panic in a job; this keeps the thread alive through
            // one anywhere else, so later copies still run.
            let stepped = catch_panic(|| self.step()).unwrap_or_else(|why| {
                tracing::error!(target: "hsasim", "copy engine {}.{}: internal error: {why}", self.node, self.index);
                eprintln!("hsasim: copy engine {}.{}: internal error: {why}", self.node, self.index);
                true
            });
            let stopping = || self.stop.load(Ordering::SeqCst);
            // `try_lock`: a look must not hold up a submitter on the job list's lock.
            let work_soon = stepped
                || (busy
                    && idle.look(&mut || {
                        stopping() || self.jobs.try_lock().is_some_and(|q| !q.is_empty())
                    }));
            if !work_soon {
                // No job: only a submission (or the stop) can give it work. A job waiting for
                // its dependencies waits for signals, which the hub announces.
                if self.is_idle() {
                    self.idle.sleep_unless(
                        &mut || stopping() || !self.is_idle(),
                        Duration::from_millis(50),
                    );
                    idle.woke();
                } else {
                    HUB.sleep_unless(
                        &mut || stopping() || self.front_ready(),
                        Duration::from_millis(50),
                    );
                }
            }
            busy = stepped;
        }
    }

    pub fn shut_down(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.idle.wake();
        HUB.notify();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }
}
