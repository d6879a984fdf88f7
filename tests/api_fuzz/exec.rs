//! Runs operation sequences through hipshim's C API and checks every answer against a
//! model: the return codes each call may give, and every element of every buffer.
//!
//! # The model
//! Each thread owns its world (streams, events, buffers, modules, graph execs); nothing is
//! destroyed, recorded or waited for by another thread, so each thread's outcomes are those
//! of a single-threaded program. What threads share is the device: the null stream, queues
//! (the queue policy pools them), `hipDeviceSynchronize`, module loading and the fault
//! reports.
//!
//! A buffer's contents are predicted at issue time in program order (the generator orders
//! every conflicting use), element by element; `None` is unknown (fresh memory, or written
//! while a fault may stop the work).
//!
//! Faults: launching a faulting kernel opens a *fault episode* (process-wide). A thread is
//! *trusted* when no episode is open and **every** thread has recovered (synchronised its
//! streams and the device, and recorded again the events it recorded in the episode) since
//! the last one began: a thread that has not caught up yet may still make its streams wait
//! for an event whose record was lost, and that loss reaches every thread (device-wide
//! calls report it, and through the null stream it spreads to other threads' work). So
//! once the episodes are over each thread recovers and then waits for the others to have
//! recovered too before it goes on. While a thread is not trusted, calls that wait for
//! work may also return the fault (`hipErrorIllegalAddress`, `hipErrorLaunchFailure`, as
//! README's "Faults and errors" lists them: synchronise and query calls, hipFree/hipHostFree,
//! synchronous and pageable copies), writes it issues make their destination unknown, and
//! its callbacks may never run. Everything else must return `hipSuccess` (queries also
//! `hipErrorNotReady`), and every element the model knows must match. An event recorded
//! while untrusted may report the fault until it is recorded again; the thread's recovery
//! records such events again.

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use super::hip::{self, Hip, Ptr};
use super::ops::*;

/// What all threads of one run share.
pub struct Shared {
    pub hip: Hip,
    pub image: Vec<u8>,
    /// Fault episodes open now.
    open_faults: AtomicU32,
    /// Episodes begun so far.
    fault_generation: AtomicU64,
    /// The episode count each thread last recovered at ([`RETIRED`] for a thread that has
    /// finished, or that this run does not have).
    recovered: [AtomicU64; MAX_THREADS],
    pub calls: AtomicU64,
    /// hsasim fails chosen HSA calls on purpose (`HSASIM_FAIL` is set): a call may return
    /// what such a failure becomes ([`HSA_FAILURE_ERRORS`]).
    hsa_failures: bool,
    /// Calls that returned such an error.
    pub failed_calls: AtomicU64,
    /// `HIPSHIM_API_FUZZ_LOG` is set: every call is written to stderr as it returns, in the
    /// order hipshim's and hsasim's own log lines appear there (to see which thread's work a
    /// late fault report came from).
    log: bool,
}

/// Threads a run may have.
pub const MAX_THREADS: usize = 4;

/// What [`Shared::recovered`] holds for a thread that takes no part any more.
const RETIRED: u64 = u64::MAX;

impl Shared {
    pub fn new(hip: Hip, image: Vec<u8>, threads: usize) -> Shared {
        assert!((1..=MAX_THREADS).contains(&threads));
        Shared {
            hip,
            image,
            open_faults: AtomicU32::new(0),
            fault_generation: AtomicU64::new(0),
            recovered: std::array::from_fn(|t| {
                AtomicU64::new(if t < threads { 0 } else { RETIRED })
            }),
            calls: AtomicU64::new(0),
            hsa_failures: std::env::var("HSASIM_FAIL")
                .is_ok_and(|spec| !spec.trim().is_empty() && spec.trim() != "off"),
            failed_calls: AtomicU64::new(0),
            log: std::env::var_os("HIPSHIM_API_FUZZ_LOG").is_some(),
        }
    }
}

/// A finding: which step, what was called, what came back and what the model allowed.
pub struct Finding {
    pub thread: usize,
    pub step: usize,
    pub message: String,
}

type Model = Vec<Option<u32>>;

struct Buffer {
    ptr: Ptr,
    kind: u32,
    n: u32,
    model: Model,
    /// Pageable memory: the host allocation itself.
    pageable: Option<Box<[u32]>>,
}

struct Module {
    handle: Ptr,
    fill: Ptr,
    mix: Ptr,
    store_to_nowhere: Ptr,
    trap: Ptr,
}

/// A model operation a graph replays on its stream at each launch.
#[derive(Clone)]
enum Effect {
    Set { b: u32, values: Vec<u32> },
    Mix { dst: u32, src: u32, k: u32 },
    Copy { dst: u32, src: u32 },
}

struct Graph {
    exec: Ptr,
    effects: Vec<Effect>,
    /// Holds a copy the CPU makes (see `Op::Copy`): launching the graph waits for its stream
    /// on the host there, as `hipMemcpyAsync` of such a copy does, and may report its fault.
    waits: bool,
}

struct Callback {
    ran: AtomicBool,
}

unsafe extern "C" fn host_fn(data: Ptr) {
    // SAFETY: `data` is a `Callback` the thread keeps alive for the whole run.
    let cell = unsafe { &*data.cast::<Callback>() };
    cell.ran.store(true, Ordering::Release);
}

unsafe extern "C" fn stream_callback(_stream: Ptr, _status: i32, data: Ptr) {
    // SAFETY: as in `host_fn`.
    unsafe { host_fn(data) }
}

const FAULTS: [i32; 2] = [hip::ILLEGAL_ADDRESS, hip::LAUNCH_FAILURE];
/// What an HSA call hsasim fails on purpose becomes (`HSASIM_FAIL` makes it return
/// `HSA_STATUS_ERROR_OUT_OF_RESOURCES`, which hipshim reports as `hipErrorOutOfMemory`, from
/// the call itself or from the next call that waits for the work it belonged to).
const HSA_FAILURE_ERRORS: [i32; 1] = [hip::OUT_OF_MEMORY];
/// Tries of a call that keeps returning an HSA failure (each fails with the plan's
/// probability).
const FAILURE_RETRIES: usize = 64;
const BLOCK: u32 = 256;
/// `Thread::callbacks` index of callbacks queued on streams destroyed since.
const ORPHANED: usize = STREAMS as usize + 1;

pub struct Thread<'a> {
    shared: &'a Shared,
    index: usize,
    /// The step running now (read by the watchdog).
    pub progress: &'a AtomicU64,
    streams: [Option<Ptr>; STREAMS as usize],
    events: [Option<Ptr>; EVENTS as usize],
    tainted_events: [bool; EVENTS as usize],
    buffers: [Option<Buffer>; BUFFERS as usize],
    modules: [Option<Module>; MODULES as usize],
    graphs: [Option<Graph>; GRAPHS as usize],
    capture: Option<(u32, Vec<Effect>)>,
    /// The capture in progress holds a copy the CPU makes (`Graph::waits`).
    capture_waits: bool,
    /// Callbacks queued while trusted, by stream slot (NULL at index STREAMS, destroyed
    /// streams at ORPHANED), not yet seen to run.
    callbacks: Vec<Vec<Arc<Callback>>>,
    /// Every callback ever queued, kept alive for the whole run (a lost one never runs; one
    /// whose stream was destroyed may run later).
    all_callbacks: Vec<Arc<Callback>>,
    /// Error codes returned since the last hipGetLastError.
    errors_since: BTreeSet<i32>,
    /// Fault episodes this thread opened and has not recovered from.
    my_open_faults: u32,
    seen_generation: u64,
    /// A wait returned a fault in this episode. A stream that lost work stops waiting for
    /// what its lost work waited for (events of other streams), so such a synchronise may
    /// return before work it covers through those events is done: until the episode ends,
    /// reads compare nothing (the work may still land; the recovery waits for all of it).
    waits_cut_short: bool,
    step: usize,
    op_line: String,
}

impl<'a> Thread<'a> {
    pub fn new(shared: &'a Shared, index: usize, progress: &'a AtomicU64) -> Thread<'a> {
        Thread {
            shared,
            index,
            progress,
            streams: [None; STREAMS as usize],
            events: [None; EVENTS as usize],
            tainted_events: [false; EVENTS as usize],
            buffers: Default::default(),
            modules: Default::default(),
            graphs: Default::default(),
            capture: None,
            capture_waits: false,
            callbacks: vec![Vec::new(); ORPHANED + 1],
            all_callbacks: Vec::new(),
            errors_since: BTreeSet::new(),
            my_open_faults: 0,
            seen_generation: 0,
            waits_cut_short: false,
            step: 0,
            op_line: String::new(),
        }
    }

    fn trusted(&self) -> bool {
        let generation = self.shared.fault_generation.load(Ordering::SeqCst);
        self.shared.open_faults.load(Ordering::SeqCst) == 0
            && generation == self.seen_generation
            && self.all_recovered(generation)
    }

    /// Every thread has recovered since episode `generation` began.
    fn all_recovered(&self, generation: u64) -> bool {
        self.shared.recovered.iter().all(|r| {
            let r = r.load(Ordering::SeqCst);
            r == generation || r == RETIRED
        })
    }

    /// Once this thread has recovered: waits until every other thread has too, or a new
    /// episode begins (then this thread goes on untrusted and recovers again later).
    fn await_others(&self) {
        loop {
            let generation = self.shared.fault_generation.load(Ordering::SeqCst);
            if generation != self.seen_generation
                || self.shared.open_faults.load(Ordering::SeqCst) != 0
                || self.all_recovered(generation)
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    /// This thread takes no part any more: the others stop waiting for it to recover.
    pub fn retire(&self) {
        self.shared.recovered[self.index].store(RETIRED, Ordering::SeqCst);
    }

    /// After the last step: ends this thread's own episodes and, once no episode is open,
    /// recovers from the others' (so that nothing it did in one is left for the others to
    /// find), before its world is torn down.
    pub fn finish(&mut self) -> Result<(), Finding> {
        if self.capture.is_some() {
            return Ok(());
        }
        if self.my_open_faults > 0 {
            self.recover()?;
        }
        while self.shared.open_faults.load(Ordering::SeqCst) != 0 {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        if self.shared.fault_generation.load(Ordering::SeqCst) != self.seen_generation {
            self.recover()?;
        }
        Ok(())
    }

    fn finding(&self, message: String) -> Finding {
        Finding {
            thread: self.index,
            step: self.step,
            message: format!("{}\n  op: {}", message, self.op_line),
        }
    }

    /// Makes one call and checks its code. `waits`: the call waits for queued work (so it
    /// may report a fault while the thread is not trusted); `may_be_not_ready`: a query.
    ///
    /// Under `HSASIM_FAIL`, a call that returns an HSA failure's error is made again, as a
    /// program that retries would, until it returns something else; what the failed tries
    /// would have written is unknown from then on (every buffer's model is forgotten).
    fn call(
        &mut self,
        what: &str,
        waits: bool,
        may_be_not_ready: bool,
        mut f: impl FnMut(&Hip) -> i32,
    ) -> Result<i32, Finding> {
        let before = self.trusted();
        self.shared.calls.fetch_add(1, Ordering::Relaxed);
        let mut rc = f(&self.shared.hip);
        let mut tries = 1;
        while self.shared.hsa_failures && HSA_FAILURE_ERRORS.contains(&rc) {
            self.shared.failed_calls.fetch_add(1, Ordering::Relaxed);
            self.errors_since.insert(rc);
            self.forget_models();
            if tries == FAILURE_RETRIES {
                return Err(self.finding(format!(
                    "{what} returned {rc} {FAILURE_RETRIES} times in a row under HSASIM_FAIL"
                )));
            }
            tries += 1;
            self.shared.calls.fetch_add(1, Ordering::Relaxed);
            rc = f(&self.shared.hip);
        }
        let after = self.trusted();
        if self.shared.log {
            eprintln!(
                "api_fuzz: thread {} step {}: {what} -> {rc} (trusted {before} -> {after}) | {}",
                self.index, self.step, self.op_line
            );
        }
        let fault_possible = waits && !(before && after);
        let ok = rc == hip::SUCCESS
            || (may_be_not_ready && rc == hip::NOT_READY)
            || (fault_possible && FAULTS.contains(&rc));
        if rc != hip::SUCCESS {
            self.errors_since.insert(rc);
        }
        if waits && FAULTS.contains(&rc) {
            self.waits_cut_short = true;
        }
        if !ok {
            return Err(self.finding(format!(
                "{what} returned {rc}; the model allows 0{}{}",
                if may_be_not_ready { ", 600" } else { "" },
                if fault_possible { ", 700, 719" } else { "" }
            )));
        }
        Ok(rc)
    }

    /// After an HSA failure: the work a failed call belonged to may have been done in part.
    fn forget_models(&mut self) {
        for buf in self.buffers.iter_mut().flatten() {
            buf.model.iter_mut().for_each(|m| *m = None);
        }
        // Host functions queued behind the failed work may never run.
        for list in &mut self.callbacks {
            list.clear();
        }
    }

    fn stream(&self, s: u32) -> Ptr {
        if s == NULL {
            null_mut()
        } else {
            self.streams[s as usize].expect("the generator uses live streams")
        }
    }

    fn callback_slot(s: u32) -> usize {
        if s == NULL {
            STREAMS as usize
        } else {
            s as usize
        }
    }

    fn buffer(&self, b: u32) -> &Buffer {
        self.buffers[b as usize]
            .as_ref()
            .expect("the generator uses live buffers")
    }

    fn event(&self, e: u32) -> Ptr {
        self.events[e as usize].expect("the generator uses live events")
    }

    fn module(&self, m: u32) -> &Module {
        self.modules[m as usize]
            .as_ref()
            .expect("the generator uses loaded modules")
    }

    /// Callbacks queued on `slot` must all have run once it completed without a fault.
    fn check_callbacks(&mut self, slot: usize) -> Result<(), Finding> {
        let pending = std::mem::take(&mut self.callbacks[slot]);
        if let Some(i) = pending.iter().position(|c| !c.ran.load(Ordering::Acquire)) {
            return Err(self.finding(format!(
                "a host callback (number {i} of {} queued on this stream since its last check) \
                 had not run when the synchronise returned hipSuccess",
                pending.len()
            )));
        }
        Ok(())
    }

    /// Applies a write to the model: exact while trusted, unknown otherwise.
    fn apply(&mut self, effect: &Effect, trusted: bool) {
        let n_of = |t: &Self, b: u32| t.buffer(b).n as usize;
        match effect {
            Effect::Set { b, values } => {
                let buf = self.buffers[*b as usize].as_mut().unwrap();
                for (m, v) in buf.model.iter_mut().zip(values) {
                    *m = trusted.then_some(*v);
                }
            }
            Effect::Mix { dst, src, k } => {
                let n = n_of(self, *dst).min(n_of(self, *src));
                let src_model = self.buffer(*src).model[..n].to_vec();
                let buf = self.buffers[*dst as usize].as_mut().unwrap();
                for (d, s) in buf.model[..n].iter_mut().zip(src_model) {
                    *d = match (*d, s) {
                        (Some(d), Some(s)) if trusted => {
                            Some(d.wrapping_mul(3).wrapping_add(s).wrapping_add(*k))
                        }
                        _ => None,
                    };
                }
            }
            Effect::Copy { dst, src } => {
                let n = n_of(self, *dst).min(n_of(self, *src));
                let src_model = self.buffer(*src).model[..n].to_vec();
                let buf = self.buffers[*dst as usize].as_mut().unwrap();
                for (d, s) in buf.model[..n].iter_mut().zip(src_model) {
                    *d = if trusted { s } else { None };
                }
            }
        }
    }

    fn launch(
        &mut self,
        what: &str,
        f: Ptr,
        n: u32,
        s: u32,
        args: &mut [Ptr],
    ) -> Result<(), Finding> {
        let stream = self.stream(s);
        let grid = n.div_ceil(BLOCK).max(1);
        self.call(what, false, false, |hip| {
            // SAFETY: `args` points at the kernel's arguments, which live across the call.
            unsafe {
                (hip.module_launch_kernel)(
                    f,
                    grid,
                    1,
                    1,
                    BLOCK,
                    1,
                    1,
                    0,
                    stream,
                    args.as_mut_ptr(),
                    null_mut(),
                )
            }
        })?;
        Ok(())
    }

    /// Issues one model effect on stream `s` (also used while capturing).
    fn issue(&mut self, op: &Op) -> Result<Option<Effect>, Finding> {
        Ok(match *op {
            Op::Memset { b, s, value } => {
                let (ptr, n) = (self.buffer(b).ptr, self.buffer(b).n);
                let stream = self.stream(s);
                self.call("hipMemsetD32Async", false, false, |hip| {
                    // SAFETY: `ptr` is a live allocation of `n` u32s.
                    unsafe { (hip.memset_d32_async)(ptr, value as i32, n as usize, stream) }
                })?;
                Some(Effect::Set {
                    b,
                    values: vec![value; n as usize],
                })
            }
            Op::Fill { b, s, m, value } => {
                let (mut ptr, mut n) = (self.buffer(b).ptr, self.buffer(b).n);
                let f = self.module(m).fill;
                let mut value_arg = value;
                let mut args = [
                    (&mut ptr as *mut Ptr).cast(),
                    (&mut value_arg as *mut u32).cast(),
                    (&mut n as *mut u32).cast(),
                ];
                self.launch("hipModuleLaunchKernel(fuzz_fill)", f, n, s, &mut args)?;
                Some(Effect::Set {
                    b,
                    values: (0..n).map(|i| value.wrapping_add(i)).collect(),
                })
            }
            Op::Mix { dst, src, s, m, k } => {
                let mut d = self.buffer(dst).ptr;
                let mut sp = self.buffer(src).ptr;
                let mut n = self.buffer(dst).n.min(self.buffer(src).n);
                let mut k_arg = k;
                let f = self.module(m).mix;
                let mut args = [
                    (&mut d as *mut Ptr).cast(),
                    (&mut sp as *mut Ptr).cast(),
                    (&mut k_arg as *mut u32).cast(),
                    (&mut n as *mut u32).cast(),
                ];
                self.launch("hipModuleLaunchKernel(fuzz_mix)", f, n, s, &mut args)?;
                Some(Effect::Mix { dst, src, k })
            }
            Op::Copy { dst, src, s, sync } => {
                let (d, sp) = (self.buffer(dst).ptr, self.buffer(src).ptr);
                let n = self.buffer(dst).n.min(self.buffer(src).n) as usize;
                let host = |k: u32| matches!(k, PINNED | PAGEABLE | MANAGED);
                let (dk, sk) = (self.buffer(dst).kind, self.buffer(src).kind);
                // Copies the CPU makes once the stream gets there (hipshim's
                // runtime/copy.rs): pageable memory on either side, or host memory on both
                // (managed memory may count as either).
                let on_host = dk == PAGEABLE || sk == PAGEABLE || (host(dk) && host(sk));
                let stream = self.stream(s);
                let rc = if sync == 1 {
                    self.call("hipMemcpy", true, false, |hip| {
                        // SAFETY: both are live allocations of at least `n` u32s.
                        unsafe { (hip.memcpy)(d, sp, n * 4, hip::MEMCPY_DEFAULT) }
                    })?
                } else {
                    let waits = on_host && self.capture.is_none();
                    if on_host && matches!(self.capture, Some((c, _)) if c == s) {
                        self.capture_waits = true;
                    }
                    self.call("hipMemcpyAsync", waits, false, |hip| {
                        // SAFETY: as above.
                        unsafe { (hip.memcpy_async)(d, sp, n * 4, hip::MEMCPY_DEFAULT, stream) }
                    })?
                };
                if rc != hip::SUCCESS {
                    // It did not copy, or copied something undefined.
                    let values = vec![0; self.buffer(dst).n as usize];
                    self.apply(&Effect::Set { b: dst, values }, false);
                    None
                } else {
                    Some(Effect::Copy { dst, src })
                }
            }
            _ => unreachable!("not an effect: {op:?}"),
        })
    }

    pub fn run(&mut self, ops: &[Op]) -> Result<(), Finding> {
        for (step, op) in ops.iter().enumerate() {
            self.step = step;
            self.progress.store(step as u64, Ordering::Relaxed);
            self.op_line = op.to_line();
            // The episodes are over: catch up, then wait for the others to (a thread that
            // stays untrusted would check nothing).
            if self.capture.is_none()
                && self.my_open_faults == 0
                && self.shared.open_faults.load(Ordering::SeqCst) == 0
            {
                if self.shared.fault_generation.load(Ordering::SeqCst) != self.seen_generation {
                    self.recover()?;
                }
                self.await_others();
            }
            self.one(op)?;
        }
        Ok(())
    }

    fn one(&mut self, op: &Op) -> Result<(), Finding> {
        let shared = self.shared;
        match *op {
            Op::StreamCreate { s, nonblocking } => {
                let mut ptr = null_mut();
                let flags = if nonblocking == 1 {
                    hip::STREAM_NON_BLOCKING
                } else {
                    0
                };
                self.call("hipStreamCreateWithFlags", false, false, |hip| {
                    // SAFETY: a valid out-pointer.
                    unsafe { (hip.stream_create_with_flags)(&mut ptr, flags) }
                })?;
                if shared.log {
                    eprintln!(
                        "api_fuzz: thread {} step {}: stream slot {s} is {ptr:?}",
                        self.index, self.step
                    );
                }
                self.streams[s as usize] = Some(ptr);
            }
            Op::StreamDestroy { s } => {
                let stream = self.stream(s);
                self.call("hipStreamDestroy", false, false, |hip| {
                    // SAFETY: a live stream of this thread.
                    unsafe { (hip.stream_destroy)(stream) }
                })?;
                self.streams[s as usize] = None;
                // Its callbacks still run; the next device-wide synchronise checks them.
                let orphans = std::mem::take(&mut self.callbacks[s as usize]);
                self.callbacks[ORPHANED].extend(orphans);
            }
            Op::StreamSync { s } => {
                let stream = self.stream(s);
                let trusted = self.trusted();
                let rc = self.call("hipStreamSynchronize", true, false, |hip| {
                    // SAFETY: a live stream (or the null stream).
                    unsafe { (hip.stream_synchronize)(stream) }
                })?;
                let slot = Self::callback_slot(s);
                if rc == hip::SUCCESS && trusted && self.trusted() {
                    self.check_callbacks(slot)?;
                }
            }
            Op::StreamQuery { s } => {
                let stream = self.stream(s);
                self.call("hipStreamQuery", true, true, |hip| {
                    // SAFETY: a live stream.
                    unsafe { (hip.stream_query)(stream) }
                })?;
            }
            Op::EventCreate { e, timing } => {
                if let Some(old) = self.events[e as usize].take() {
                    self.call("hipEventDestroy", false, false, |hip| {
                        // SAFETY: a live event of this thread.
                        unsafe { (hip.event_destroy)(old) }
                    })?;
                }
                let mut ptr = null_mut();
                let flags = if timing == 1 {
                    0
                } else {
                    hip::EVENT_DISABLE_TIMING
                };
                self.call("hipEventCreateWithFlags", false, false, |hip| {
                    // SAFETY: a valid out-pointer.
                    unsafe { (hip.event_create_with_flags)(&mut ptr, flags) }
                })?;
                self.events[e as usize] = Some(ptr);
                self.tainted_events[e as usize] = false;
            }
            Op::EventDestroy { e } => {
                let event = self.event(e);
                self.call("hipEventDestroy", false, false, |hip| {
                    // SAFETY: a live event.
                    unsafe { (hip.event_destroy)(event) }
                })?;
                self.events[e as usize] = None;
                self.tainted_events[e as usize] = false;
            }
            Op::EventRecord { e, s } => {
                let (event, stream) = (self.event(e), self.stream(s));
                let trusted = self.trusted();
                self.call("hipEventRecord", false, false, |hip| {
                    // SAFETY: a live event and stream.
                    unsafe { (hip.event_record)(event, stream) }
                })?;
                self.tainted_events[e as usize] = !(trusted && self.trusted());
            }
            Op::EventSync { e } | Op::EventQuery { e } => {
                let event = self.event(e);
                let tainted = self.tainted_events[e as usize];
                let query = matches!(op, Op::EventQuery { .. });
                let name = if query {
                    "hipEventQuery"
                } else {
                    "hipEventSynchronize"
                };
                self.call_event(name, query, tainted, |hip| {
                    // SAFETY: a live event.
                    unsafe {
                        if query {
                            (hip.event_query)(event)
                        } else {
                            (hip.event_synchronize)(event)
                        }
                    }
                })?;
            }
            Op::EventElapsed { a, b } => {
                let (ea, eb) = (self.event(a), self.event(b));
                let tainted = self.tainted_events[a as usize] || self.tainted_events[b as usize];
                let mut ms = 0f32;
                self.call_event("hipEventElapsedTime", true, tainted, |hip| {
                    // SAFETY: live events and a valid out-pointer.
                    unsafe { (hip.event_elapsed_time)(&mut ms, ea, eb) }
                })?;
            }
            Op::StreamWaitEvent { s, e } => {
                let (stream, event) = (self.stream(s), self.event(e));
                self.call("hipStreamWaitEvent", false, false, |hip| {
                    // SAFETY: live stream and event.
                    unsafe { (hip.stream_wait_event)(stream, event, 0) }
                })?;
            }
            Op::Alloc { b, kind, n, s } => {
                let bytes = n as usize * 4;
                let mut ptr = null_mut();
                let mut pageable = None;
                match kind {
                    DEVICE => self.call("hipMalloc", false, false, |hip| {
                        // SAFETY: a valid out-pointer.
                        unsafe { (hip.malloc)(&mut ptr, bytes) }
                    })?,
                    PINNED => self.call("hipHostMalloc", false, false, |hip| {
                        // SAFETY: a valid out-pointer.
                        unsafe { (hip.host_malloc)(&mut ptr, bytes, 0) }
                    })?,
                    MANAGED => self.call("hipMallocManaged", false, false, |hip| {
                        // SAFETY: a valid out-pointer (1: hipMemAttachGlobal).
                        unsafe { (hip.malloc_managed)(&mut ptr, bytes, 1) }
                    })?,
                    POOL => {
                        let stream = self.stream(s);
                        self.call("hipMallocAsync", false, false, |hip| {
                            // SAFETY: a valid out-pointer and a live stream.
                            unsafe { (hip.malloc_async)(&mut ptr, bytes, stream) }
                        })?
                    }
                    _ => {
                        let mut host = vec![0xa5a5_a5a5u32; n as usize].into_boxed_slice();
                        ptr = host.as_mut_ptr().cast();
                        pageable = Some(host);
                        0
                    }
                };
                if ptr.is_null() {
                    return Err(self.finding("the allocation returned hipSuccess and null".into()));
                }
                self.buffers[b as usize] = Some(Buffer {
                    ptr,
                    kind,
                    n,
                    model: vec![None; n as usize],
                    pageable,
                });
            }
            Op::Free { b, s } => {
                let buf = self.buffers[b as usize].take().unwrap();
                let ptr = buf.ptr;
                match buf.kind {
                    PAGEABLE => drop(buf.pageable),
                    POOL => {
                        let stream = self.stream(s);
                        self.call("hipFreeAsync", false, false, |hip| {
                            // SAFETY: a live stream-ordered allocation.
                            unsafe { (hip.free_async)(ptr, stream) }
                        })?;
                    }
                    kind => {
                        // A free that reports a fault did not free: call it again.
                        for _ in 0..16 {
                            let rc = if kind == PINNED {
                                self.call("hipHostFree", true, false, |hip| {
                                    // SAFETY: a live pinned allocation.
                                    unsafe { (hip.host_free)(ptr) }
                                })?
                            } else {
                                self.call("hipFree", true, false, |hip| {
                                    // SAFETY: a live allocation.
                                    unsafe { (hip.free)(ptr) }
                                })?
                            };
                            if rc == hip::SUCCESS {
                                return Ok(());
                            }
                        }
                        return Err(self.finding("the free kept reporting faults 16 times".into()));
                    }
                }
            }
            Op::Memset { s, .. } | Op::Fill { s, .. } | Op::Mix { s, .. } | Op::Copy { s, .. } => {
                let capturing = matches!(self.capture, Some((c, _)) if c == s);
                let trusted = self.trusted();
                let effect = self.issue(op)?;
                if let Some(effect) = effect {
                    if capturing {
                        self.capture.as_mut().unwrap().1.push(effect);
                    } else {
                        let trusted = trusted && self.trusted();
                        self.apply(&effect, trusted);
                    }
                }
            }
            Op::Fault { s, m, trap } => {
                shared.open_faults.fetch_add(1, Ordering::SeqCst);
                shared.fault_generation.fetch_add(1, Ordering::SeqCst);
                self.my_open_faults += 1;
                let module = self.module(m);
                let (f, what) = if trap == 1 {
                    (module.trap, "hipModuleLaunchKernel(fuzz_trap)")
                } else {
                    (
                        module.store_to_nowhere,
                        "hipModuleLaunchKernel(fuzz_store_to_nowhere)",
                    )
                };
                let mut value = 7u32;
                let mut args: Vec<Ptr> = if trap == 1 {
                    Vec::new()
                } else {
                    vec![(&mut value as *mut u32).cast()]
                };
                self.launch(what, f, 1, s, &mut args)?;
            }
            Op::HostFunc { s, add_callback } => {
                let stream = self.stream(s);
                let cell = Arc::new(Callback {
                    ran: AtomicBool::new(false),
                });
                let data: Ptr = Arc::as_ptr(&cell).cast_mut().cast();
                let trusted = self.trusted();
                if add_callback == 1 {
                    self.call("hipStreamAddCallback", false, false, |hip| {
                        // SAFETY: `data` outlives the run (kept in all_callbacks).
                        unsafe { (hip.stream_add_callback)(stream, stream_callback, data, 0) }
                    })?;
                } else {
                    self.call("hipLaunchHostFunc", false, false, |hip| {
                        // SAFETY: as above.
                        unsafe { (hip.launch_host_func)(stream, host_fn, data) }
                    })?;
                }
                self.all_callbacks.push(cell.clone());
                if trusted && self.trusted() {
                    self.callbacks[Self::callback_slot(s)].push(cell);
                }
            }
            Op::Check { b } => self.check(b)?,
            Op::ModuleLoad { m } => {
                let mut handle = null_mut();
                let image = shared.image.as_ptr().cast::<c_void>();
                self.call("hipModuleLoadData", false, false, |hip| {
                    // SAFETY: a complete code object and a valid out-pointer.
                    unsafe { (hip.module_load_data)(&mut handle, image) }
                })?;
                let mut get = |name: &[u8]| -> Result<Ptr, Finding> {
                    let mut f = null_mut();
                    self.call("hipModuleGetFunction", false, false, |hip| {
                        // SAFETY: a loaded module and a NUL-terminated name.
                        unsafe { (hip.module_get_function)(&mut f, handle, name.as_ptr()) }
                    })?;
                    Ok(f)
                };
                let module = Module {
                    handle,
                    fill: get(b"fuzz_fill\0")?,
                    mix: get(b"fuzz_mix\0")?,
                    store_to_nowhere: get(b"fuzz_store_to_nowhere\0")?,
                    trap: get(b"fuzz_trap\0")?,
                };
                self.modules[m as usize] = Some(module);
            }
            Op::ModuleUnload { m } => {
                let handle = self.module(m).handle;
                // The unload waits for queued launches of the module, and so may report a
                // fault; then it did not unload: call it again.
                for _ in 0..16 {
                    let rc = self.call("hipModuleUnload", true, false, |hip| {
                        // SAFETY: a loaded module.
                        unsafe { (hip.module_unload)(handle) }
                    })?;
                    if rc == hip::SUCCESS {
                        self.modules[m as usize] = None;
                        return Ok(());
                    }
                }
                return Err(self.finding("hipModuleUnload kept reporting faults 16 times".into()));
            }
            Op::BeginCapture { s } => {
                let stream = self.stream(s);
                self.call("hipStreamBeginCapture", false, false, |hip| {
                    // SAFETY: a live stream.
                    unsafe { (hip.stream_begin_capture)(stream, hip::CAPTURE_MODE_THREAD_LOCAL) }
                })?;
                self.capture = Some((s, Vec::new()));
                self.capture_waits = false;
            }
            Op::EndCapture { s, g } => {
                let stream = self.stream(s);
                let mut graph = null_mut();
                self.call("hipStreamEndCapture", false, false, |hip| {
                    // SAFETY: a capturing stream and a valid out-pointer.
                    unsafe { (hip.stream_end_capture)(stream, &mut graph) }
                })?;
                let (_, effects) = self.capture.take().unwrap();
                let mut exec = null_mut();
                self.call("hipGraphInstantiate", false, false, |hip| {
                    // SAFETY: a graph from the capture and a valid out-pointer.
                    unsafe { (hip.graph_instantiate)(&mut exec, graph, null_mut(), null_mut(), 0) }
                })?;
                // The exec is independent of the graph it was made from.
                self.call("hipGraphDestroy", false, false, |hip| {
                    // SAFETY: a live graph.
                    unsafe { (hip.graph_destroy)(graph) }
                })?;
                let waits = std::mem::take(&mut self.capture_waits);
                self.graphs[g as usize] = Some(Graph {
                    exec,
                    effects,
                    waits,
                });
            }
            Op::GraphLaunch { g, s } => {
                let stream = self.stream(s);
                let graph = self.graphs[g as usize].as_ref().unwrap();
                let (exec, effects, waits) = (graph.exec, graph.effects.clone(), graph.waits);
                let trusted = self.trusted();
                self.call("hipGraphLaunch", waits, false, |hip| {
                    // SAFETY: a live exec and stream.
                    unsafe { (hip.graph_launch)(exec, stream) }
                })?;
                let trusted = trusted && self.trusted();
                for effect in &effects {
                    self.apply(effect, trusted);
                }
            }
            Op::GraphExecDestroy { g } => {
                let exec = self.graphs[g as usize].take().unwrap().exec;
                self.call("hipGraphExecDestroy", false, false, |hip| {
                    // SAFETY: a live exec.
                    unsafe { (hip.graph_exec_destroy)(exec) }
                })?;
            }
            Op::DeviceSync {} => {
                self.device_sync()?;
            }
            Op::GetLastError {} => {
                let allowed = std::mem::take(&mut self.errors_since);
                self.shared.calls.fetch_add(1, Ordering::Relaxed);
                // SAFETY: no arguments.
                let rc = unsafe { (shared.hip.get_last_error)() };
                if rc != hip::SUCCESS && !allowed.contains(&rc) {
                    return Err(self.finding(format!(
                        "hipGetLastError returned {rc}; this thread's calls since the last one \
                         returned {allowed:?}"
                    )));
                }
            }
            Op::Recover {} => self.recover()?,
        }
        Ok(())
    }

    /// Event calls: a fault is possible while untrusted or while the event's latest record
    /// was made untrusted.
    fn call_event(
        &mut self,
        what: &str,
        may_be_not_ready: bool,
        tainted: bool,
        f: impl FnMut(&Hip) -> i32,
    ) -> Result<i32, Finding> {
        if !tainted {
            return self.call(what, true, may_be_not_ready, f);
        }
        let mut f = f;
        self.shared.calls.fetch_add(1, Ordering::Relaxed);
        let rc = f(&self.shared.hip);
        if rc != hip::SUCCESS {
            self.errors_since.insert(rc);
        }
        let hsa_failure = self.shared.hsa_failures && HSA_FAILURE_ERRORS.contains(&rc);
        if rc == hip::SUCCESS
            || FAULTS.contains(&rc)
            || (may_be_not_ready && rc == hip::NOT_READY)
            || hsa_failure
        {
            Ok(rc)
        } else {
            Err(self.finding(format!(
                "{what} (of an event recorded in a fault episode) returned {rc}"
            )))
        }
    }

    fn device_sync(&mut self) -> Result<i32, Finding> {
        let trusted = self.trusted();
        let rc = self.call("hipDeviceSynchronize", true, false, |hip| {
            // SAFETY: no arguments.
            unsafe { (hip.device_synchronize)() }
        })?;
        if rc == hip::SUCCESS && trusted && self.trusted() {
            for slot in 0..self.callbacks.len() {
                self.check_callbacks(slot)?;
            }
        }
        Ok(rc)
    }

    /// Ends this thread's fault episodes: synchronises its streams and the device until the
    /// faults are reported, and records tainted events again.
    fn recover(&mut self) -> Result<(), Finding> {
        let generation = self.shared.fault_generation.load(Ordering::SeqCst);
        // Each stream that lost work reports it once, and the device once per fault,
        // independently of each other (README, "Faults and errors").
        self.sync_streams_until_clean()?;
        let mut clean = false;
        for _ in 0..16 {
            if self.device_sync()? == hip::SUCCESS {
                clean = true;
                break;
            }
        }
        if !clean {
            return Err(self.finding("hipDeviceSynchronize kept reporting faults 16 times".into()));
        }
        self.sync_streams_until_clean()?;
        for e in 0..EVENTS {
            if self.tainted_events[e as usize] {
                self.record_again(e)?;
            }
        }
        // Callbacks queued in the episode may never run: forget them.
        for list in &mut self.callbacks {
            list.clear();
        }
        if self.my_open_faults > 0 {
            self.shared
                .open_faults
                .fetch_sub(self.my_open_faults, Ordering::SeqCst);
            self.my_open_faults = 0;
        }
        // An episode begun while this thread recovered is not over for it.
        if self.shared.open_faults.load(Ordering::SeqCst) == 0
            && self.shared.fault_generation.load(Ordering::SeqCst) == generation
        {
            self.seen_generation = generation;
            self.shared.recovered[self.index].store(generation, Ordering::SeqCst);
            self.waits_cut_short = false;
        }
        Ok(())
    }

    /// Records event `e` again on the null stream until that record completes. A record
    /// made while another thread's fault episode is open may itself be lost (the null stream
    /// gives up its work behind that fault), and an event whose latest record was lost never
    /// completes: a stream made to wait for it later loses its own work.
    fn record_again(&mut self, e: u32) -> Result<(), Finding> {
        let event = self.event(e);
        for _ in 0..16 {
            self.call("hipEventRecord", false, false, |hip| {
                // SAFETY: a live event, on the null stream.
                unsafe { (hip.event_record)(event, null_mut()) }
            })?;
            let rc = self.call("hipEventSynchronize", true, false, |hip| {
                // SAFETY: a live event.
                unsafe { (hip.event_synchronize)(event) }
            })?;
            if rc == hip::SUCCESS {
                self.tainted_events[e as usize] = false;
                return Ok(());
            }
        }
        Err(self.finding(format!(
            "event slot {e}: its record kept reporting faults 16 times"
        )))
    }

    fn sync_streams_until_clean(&mut self) -> Result<(), Finding> {
        let live = (0..STREAMS).filter(|&s| self.streams[s as usize].is_some());
        for s in live.chain([NULL]).collect::<Vec<_>>() {
            let stream = self.stream(s);
            let mut clean = false;
            for _ in 0..16 {
                let rc = self.call("hipStreamSynchronize", true, false, |hip| {
                    // SAFETY: a live stream (or the null stream).
                    unsafe { (hip.stream_synchronize)(stream) }
                })?;
                if rc == hip::SUCCESS {
                    clean = true;
                    break;
                }
            }
            if !clean {
                return Err(self.finding(format!(
                    "hipStreamSynchronize(stream slot {s}) kept reporting faults 16 times"
                )));
            }
        }
        Ok(())
    }

    /// Reads a buffer on the host and compares every element the model knows.
    fn check(&mut self, b: u32) -> Result<(), Finding> {
        let buf = self.buffer(b);
        let (ptr, n, kind) = (buf.ptr, buf.n as usize, buf.kind);
        let mut seen = vec![0u32; n];
        if kind == DEVICE || kind == POOL {
            let dst = seen.as_mut_ptr().cast::<c_void>();
            let mut copied = false;
            for _ in 0..16 {
                let rc = self.call("hipMemcpy (check)", true, false, |hip| {
                    // SAFETY: a live allocation of `n` u32s and a host buffer as large.
                    unsafe { (hip.memcpy)(dst, ptr, n * 4, hip::MEMCPY_DEFAULT) }
                })?;
                if rc == hip::SUCCESS {
                    copied = true;
                    break;
                }
            }
            if !copied {
                return Err(self.finding("hipMemcpy kept reporting faults 16 times".into()));
            }
        } else {
            // SAFETY: host-accessible memory of `n` u32s that no queued work touches.
            unsafe { std::ptr::copy_nonoverlapping(ptr.cast::<u32>(), seen.as_mut_ptr(), n) };
        }
        if self.waits_cut_short {
            return Ok(());
        }
        let model = &self.buffer(b).model;
        let wrong: Vec<usize> = (0..n)
            .filter(|&i| matches!(model[i], Some(v) if v != seen[i]))
            .collect();
        if let Some(&i) = wrong.first() {
            let kinds = ["device", "pinned", "pageable", "managed", "pool"];
            return Err(self.finding(format!(
                "buffer {b} ({}, {n} u32s): {} elements differ from the model; first at {i}: \
                 read {:#x}, expected {:#x}",
                kinds[kind as usize],
                wrong.len(),
                seen[i],
                model[i].unwrap()
            )));
        }
        Ok(())
    }

    /// Frees what the thread still holds (the process ends soon after; this exercises the
    /// destroys of a busy world).
    pub fn teardown(&mut self) {
        let hip = &self.shared.hip;
        // SAFETY: every handle below is live and owned by this thread.
        unsafe {
            for g in self.graphs.iter_mut().filter_map(Option::take) {
                (hip.graph_exec_destroy)(g.exec);
            }
            for b in self.buffers.iter_mut().filter_map(Option::take) {
                match b.kind {
                    PINNED => (hip.host_free)(b.ptr),
                    DEVICE | MANAGED | POOL => (hip.free)(b.ptr),
                    _ => 0,
                };
            }
            for e in self.events.iter_mut().filter_map(Option::take) {
                (hip.event_destroy)(e);
            }
            for s in self.streams.iter_mut().filter_map(Option::take) {
                (hip.stream_destroy)(s);
            }
            for m in self.modules.iter_mut().filter_map(Option::take) {
                (hip.module_unload)(m.handle);
            }
        }
    }
}
