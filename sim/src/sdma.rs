//! SDMA engines: per GPU, N copy engines, each an in-order job queue served by its own
//! thread (started on first use) or, in deterministic mode, by whichever thread waits.

use crate::cabi::now_ns;
use crate::signal::{Signal, HUB};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What one job moves. Addresses were checked against the memory registry at submission.
#[derive(Clone, Copy, Debug)]
pub enum CopyShape {
    Linear {
        dst: u64,
        src: u64,
        size: u64,
    },
    /// `hsa_amd_memory_async_copy_rect`: `range` = (bytes per row, rows, slices).
    Rect {
        dst: u64,
        dst_pitch: u64,
        dst_slice: u64,
        src: u64,
        src_pitch: u64,
        src_slice: u64,
        range: [u64; 3],
    },
    /// `hsa_amd_svm_prefetch_async`: nothing moves (all memory is already where the
    /// device reads it); the job orders the completion after the dependencies.
    Prefetch,
}

pub struct CopyJob {
    pub shape: CopyShape,
    pub deps: Vec<Arc<Signal>>,
    pub completion: Option<Arc<Signal>>,
    pub profile: bool,
}

impl CopyJob {
    fn ready(&self) -> bool {
        self.deps.iter().all(|s| s.load(Ordering::Acquire) == 0)
    }

    fn run(&self) {
        let start = now_ns();
        match self.shape {
            CopyShape::Linear { dst, src, size } => {
                // SAFETY: both ranges were verified device-accessible (registered memory of
                // at least `size` bytes) when the job was submitted; `copy` tolerates overlap.
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
                        let d = dst + z * dst_slice + y * dst_pitch;
                        let s = src + z * src_slice + y * src_pitch;
                        // SAFETY: every row lies inside the extents validated at submission.
                        unsafe { std::ptr::copy(s as *const u8, d as *mut u8, range[0] as usize) };
                    }
                }
            }
            CopyShape::Prefetch => {}
        }
        std::sync::atomic::fence(Ordering::Release);
        if let Some(c) = &self.completion {
            if self.profile {
                c.set_timestamps(start, now_ns());
            }
            c.rmw(Ordering::Release, |v, o| v.fetch_sub(1, o));
        }
    }
}

pub struct SdmaEngine {
    pub node: u32,
    pub index: u32,
    jobs: Mutex<VecDeque<CopyJob>>,
    /// Serialises job execution so the engine stays in order even when several threads pump
    /// it in deterministic mode.
    exec: Mutex<()>,
    stop: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl SdmaEngine {
    pub fn new(node: u32, index: u32) -> Self {
        SdmaEngine {
            node,
            index,
            jobs: Mutex::new(VecDeque::new()),
            exec: Mutex::new(()),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.jobs.lock().is_empty()
    }

    pub fn submit(self: &Arc<Self>, job: CopyJob, threaded: bool) {
        self.jobs.lock().push_back(job);
        if threaded {
            self.ensure_thread();
        }
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
            .map(|j| j.completion.as_ref().map_or(0, |c| Arc::as_ptr(c) as u64))
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
                j.run();
                true
            }
            None => false,
        }
    }

    fn serve(&self) {
        while !self.stop.load(Ordering::SeqCst) {
            if !self.step() {
                HUB.sleep_unless(
                    &mut || self.stop.load(Ordering::SeqCst) || self.front_ready(),
                    Duration::from_millis(50),
                );
            }
        }
    }

    pub fn shut_down(&self) {
        self.stop.store(true, Ordering::SeqCst);
        HUB.notify();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }
}
