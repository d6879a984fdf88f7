//! The ordering engine: streams, their dependencies, markers and gates, legacy null-stream
//! ordering, and fault containment and reporting (see the module comment in `mod.rs`).

use super::stream_list::{Slot, SlotList, Slotted};
use crate::config::Config;
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{self, barrier_and, Doom, Marker, Queue, QueueFactory, BARRIER_DEPS};
use crate::hsa::signal::{PooledSignal, SignalPool};
use crate::hsa::{HsaApi, HsaError};
use crate::policy::{Priority, QueuePolicy, QueueRequest};
use crate::runtime::base::device_assert;
use hsa_abi::*;
use parking_lot::{Mutex, RwLock};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::sync::{Arc, Weak};

/// `hipStreamNonBlocking`: no implicit ordering with the null stream.
pub const NON_BLOCKING: u32 = 1;
/// `hipStreamPerThread`: the calling thread's default stream.
pub const PER_THREAD_HANDLE: usize = 2;

/// The streams of one device and the policy that assigns them queues, with what of the device
/// the streams need (so the stream engine does not build on `Device`, which holds this).
pub struct DeviceStreams {
    /// The device ordinal.
    pub index: usize,
    pub api: &'static HsaApi,
    pub timestamp_hz: u64,
    /// What the policy makes this device's queues with.
    pub queues: QueueFactory,
    pub policy: QueuePolicy,
    /// Markers, gates and event records draw their signals from here.
    pub signals: &'static SignalPool,
    pub(in crate::runtime) null: Stream,
    /// Created and per-thread streams of this device, for legacy ordering and device sync
    /// (a stream leaves in O(1): `stream_list.rs`).
    others: RwLock<SlotList<Stream>>,
    /// How many of `others` are blocking: 0 lets null-stream work skip legacy ordering.
    blocking: AtomicUsize,
    /// Blocking streams that may have work the null stream has not waited for yet: what a
    /// null-stream operation looks at, instead of every stream (see [`Stream::legacy_deps`]).
    /// A stream is added by its first operation after the null stream last saw it
    /// (`Stream::listed`), so the list is as long as the streams busy since the last
    /// null-stream operation; entries may repeat, and ones the null stream has seen are pruned
    /// when it finishes an operation.
    unseen: Mutex<Vec<Weak<Stream>>>,
    /// Destroyed streams whose work may still be running, or whose fault no device-wide call
    /// has reported yet; dropped once neither holds.
    retiring: Mutex<Vec<Arc<Stream>>>,
    /// Copy-engine jobs let go after a fault (see `Wedged`) whose stream no longer names them:
    /// the completion signals of those copies, which still run. A device-wide synchronise
    /// waits for them, so that no copy given up in a fault episode writes memory after the
    /// program has recovered from it.
    released: Mutex<Vec<PooledSignal>>,
}

impl DeviceStreams {
    pub fn new(
        config: &Config,
        queues: QueueFactory,
        timestamp_hz: u64,
    ) -> Result<DeviceStreams, HsaError> {
        let api = queues.api;
        let signals = SignalPool::leak(api);
        tracing::info!(target: "hipshim::policy", policy = %config.queue_policy, "queue policy in force");
        Ok(DeviceStreams {
            index: queues.device as usize,
            api,
            timestamp_hz,
            queues,
            policy: QueuePolicy::new(config.queue_policy, config.queue_size)
                .with_graph_queues(config.graph_queues),
            signals,
            null: Stream::new(
                signals,
                StreamKind::Null,
                usize::MAX,
                0,
                Priority::Normal,
                None,
            )?,
            others: RwLock::new(SlotList::new()),
            blocking: AtomicUsize::new(0),
            unseen: Mutex::new(Vec::new()),
            retiring: Mutex::new(Vec::new()),
            released: Mutex::new(Vec::new()),
        })
    }

    /// The device's null stream.
    pub fn null_stream(&self) -> &Stream {
        &self.null
    }

    /// Every stream of the device but the null stream, destroyed ones still kept included.
    fn shared_streams(&self) -> Vec<Arc<Stream>> {
        let mut all = self.others.read().to_vec();
        all.extend(self.retiring.lock().iter().cloned());
        all
    }

    /// Waits for the work of every stream of `device`, destroyed ones still running included.
    /// A device-wide call: reports the faults no device-wide call has reported yet.
    pub fn synchronize_all(&self) -> HipResult {
        let result = self.settle_with(&self.shared_streams());
        self.settle_released();
        self.reap();
        result
    }

    /// Waits for the copies let go after faults (see `released`); each completes once its
    /// engine gets to it.
    fn settle_released(&self) {
        let released = std::mem::take(&mut *self.released.lock());
        for done in released {
            // Nothing can make the copy lost: it waits for nothing any more.
            let _ = done
                .signal()
                .wait_zero(self.timestamp_hz, || None::<std::convert::Infallible>);
        }
    }

    /// `hipStreamSynchronize(0)`: AMD's runtime waits for the null stream and every blocking
    /// stream of the device; so does hipshim. Reports the null stream's own faults and, like a
    /// device-wide call, the faults of the streams it waited for.
    pub fn synchronize_null(&self) -> HipResult {
        let waited = self.settle_legacy();
        self.null.take_stream_report().and(waited)
    }

    /// `hipStreamQuery` of the null stream: like its synchronisation, it answers for every
    /// blocking stream too (not ready while one of them has work pending).
    pub fn query_null(&self) -> HipResult {
        self.null.query(self)?;
        let blocking = self.legacy_streams();
        if blocking.iter().any(|s| s.busy()) {
            return Err(HipError::NOT_READY);
        }
        Ok(())
    }

    /// What synchronous copies and fills (`hipMemcpy`, `hipMemset`: null-stream operations)
    /// wait for before they touch memory outside stream order: the null stream and every
    /// blocking stream, never a non-blocking one. Reports, like a device-wide call, the faults
    /// of the streams it waited for.
    ///
    /// Destroyed blocking streams whose work still runs count too: their work was queued
    /// before this call, and what it waited for was trusted to be done (a block such a stream
    /// freed went back to the HSA runtime while a kernel it had waited for still wrote it).
    pub fn settle_legacy(&self) -> HipResult {
        self.settle_with(&self.legacy_streams())
    }

    /// The blocking streams of the device, destroyed ones still running included.
    fn legacy_streams(&self) -> Vec<Arc<Stream>> {
        let mut blocking: Vec<Arc<Stream>> = self
            .others
            .read()
            .iter()
            .filter(|s| s.is_blocking())
            .cloned()
            .collect();
        let retiring = self.retiring.lock();
        blocking.extend(retiring.iter().filter(|s| s.is_blocking()).cloned());
        blocking
    }

    /// Waits for the null stream and `others`, then takes the faults they owe device-wide
    /// calls: every stream's report is taken, also after the first error.
    fn settle_with(&self, others: &[Arc<Stream>]) -> HipResult {
        self.null.settle(self);
        for stream in others {
            stream.settle(self);
        }
        let mut result = self.null.take_device_report();
        for stream in others {
            result = result.and(stream.take_device_report());
        }
        result
    }

    /// For `hipDeviceReset`: forgets every fault the streams of this device still owe.
    pub fn discard_reports(&self) {
        for stream in std::iter::once(&self.null).chain(self.shared_streams().iter().map(|s| &**s))
        {
            let owed = stream.owed.take_all();
            if let Some(error) = owed.stream.or(owed.device) {
                tracing::warn!(stream = %stream.kind, ?error, "device reset: an unreported fault is discarded");
            }
        }
        self.reap();
    }

    /// Lets every stream of the device check whether it lost work to a fault (see [`contain`]).
    fn after_fault(&self) {
        let device = self;
        self.null.after_fault(device);
        for stream in self.shared_streams() {
            stream.after_fault(device);
        }
    }

    pub(in crate::runtime) fn register(&self, stream: Arc<Stream>) {
        if stream.is_blocking() {
            // Before the stream is shared: its operations list it through this.
            let _ = stream.me.set(Arc::downgrade(&stream));
            self.blocking.fetch_add(1, Ordering::AcqRel);
        }
        self.others.write().push(stream);
        self.reap();
    }

    /// Forgets `stream`; its outstanding work still completes (it is kept until idle).
    pub(in crate::runtime) fn unregister(&self, stream: &Arc<Stream>) {
        let removed = self.others.write().remove(stream);
        if removed && stream.is_blocking() {
            self.blocking.fetch_sub(1, Ordering::AcqRel);
        }
        if stream.is_quiescent() {
            stream.retire();
        } else {
            self.retiring.lock().push(stream.clone());
        }
        self.reap();
    }

    /// Called by a blocking stream after each operation: lists it in `unseen` unless it is
    /// already listed. The flag is cleared by the null stream before it reads `ops` (see
    /// `prune_unseen`), and set here after `ops` counted the operation, both sequentially
    /// consistent: either the null stream sees the operation, or this sees the flag clear and
    /// lists the stream again.
    fn note_unseen(&self, stream: &Stream) {
        if stream.listed.load(Ordering::SeqCst) || stream.listed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(me) = stream.me.get() {
            self.unseen.lock().push(me.clone());
        }
    }

    /// Entries of the `unseen` list: what the next null-stream operation looks at (for tests).
    #[doc(hidden)]
    pub fn unseen_len(&self) -> usize {
        self.unseen.lock().len()
    }

    /// The listed streams that may have work the null stream has not waited for.
    fn unseen_streams(&self) -> Vec<Arc<Stream>> {
        self.unseen
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|s| s.ops.load(Ordering::SeqCst) != s.seen_by_null.load(Ordering::Acquire))
            .collect()
    }

    /// After a null-stream operation recorded what it waited for: drops the entries of streams
    /// with nothing unseen left (and of destroyed ones).
    fn prune_unseen(&self) {
        self.unseen.lock().retain(|weak| {
            let Some(stream) = weak.upgrade() else {
                return false;
            };
            stream.listed.store(false, Ordering::SeqCst);
            if stream.ops.load(Ordering::SeqCst) != stream.seen_by_null.load(Ordering::Acquire) {
                stream.listed.store(true, Ordering::SeqCst);
                return true;
            }
            false
        });
    }

    /// Drops destroyed streams whose work has finished and whose faults were reported, and
    /// destroys the signals the pool no longer needs (a destroyed stream's come back to it).
    fn reap(&self) {
        {
            let mut retiring = self.retiring.lock();
            if !retiring.is_empty() {
                retiring.retain(|s| {
                    let done = s.is_quiescent();
                    if done {
                        s.retire();
                    }
                    !done
                });
            }
        }
        self.signals.trim();
    }

    /// Streams listed for legacy ordering and device-wide calls, and the room kept for them
    /// (for tests of what destroying streams gives back).
    #[doc(hidden)]
    pub fn listed_streams(&self) -> (usize, usize) {
        let others = self.others.read();
        (others.len(), others.capacity())
    }
}

/// Which stream this is, for logs and for the handle the callbacks receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Null,
    PerThread,
    /// A stream created by the program; the value is its `hipStream_t`.
    Created(usize),
}

impl StreamKind {
    /// The `hipStream_t` value the program knows this stream by.
    pub fn handle(self) -> *mut c_void {
        match self {
            StreamKind::Null => std::ptr::null_mut(),
            StreamKind::PerThread => PER_THREAD_HANDLE as *mut c_void,
            StreamKind::Created(h) => h as *mut c_void,
        }
    }
}

impl fmt::Display for StreamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamKind::Null => f.write_str("null"),
            StreamKind::PerThread => f.write_str("per-thread"),
            StreamKind::Created(h) => write!(f, "{h:#x}"),
        }
    }
}

/// `Stream::settled_ops` before any wait saw the stream's work complete.
const NEVER: u64 = u64::MAX;

pub struct Stream {
    pub kind: StreamKind,
    /// Device ordinal (`usize::MAX` for a null stream, which belongs to its `DeviceStreams`).
    pub(in crate::runtime) device: usize,
    pub flags: u32,
    pub priority: Priority,
    pub cu_mask: Option<Box<[u32]>>,
    signals: &'static SignalPool,
    /// Operations enqueued so far (kernels, copies, waits, callbacks, records).
    ops: AtomicU64,
    /// What the last completed wait for all of the stream's work saw: `ops` then (`NEVER` if
    /// none yet, or if work was enqueued without being counted) and the process's fault
    /// count then. While both still hold, nothing was submitted since, nothing failed since,
    /// and a synchronize answers from host state (see [`Stream::synchronize`]).
    settled_ops: AtomicU64,
    settled_faults: AtomicU64,
    /// Blocking streams: the null stream's `ops` this stream has already waited for.
    seen_null: AtomicU64,
    /// Blocking streams: this stream's `ops` the null stream has already waited for.
    seen_by_null: AtomicU64,
    /// Blocking streams: listed in the device's `unseen` list (see `DeviceStreams::note_unseen`).
    listed: AtomicBool,
    /// Blocking streams: this stream, for the `unseen` list (set when registered).
    me: OnceLock<Weak<Stream>>,
    /// Faults this stream owes its callers (see "Faults"); shared with its host tasks.
    pub(in crate::runtime) owed: Arc<OwedReports>,
    /// The one lock a launch takes: it orders this stream's packets on its queue. Never held
    /// while waiting, and never while taking another stream's lock.
    state: Mutex<State>,
    /// Issued once per stream in the process: what a stream-ordered free is stamped with, so
    /// that "the same stream" survives the reuse of a destroyed stream's address.
    pub serial: u64,
    /// Per queue (by id), the highest packet index of a marker this stream waited for through
    /// [`Stream::wait_for`]: every packet of that queue up to it completes before the stream's
    /// later work (the marker's barrier bit). Read by the stream-ordered allocator
    /// ([`Stream::has_waited_for`]); a few entries, touched only by waits, never by a launch.
    waited: Mutex<Vec<(u64, u64)>>,
    /// Set while the stream takes part in a stream capture (`graph/capture.rs`): the launch
    /// path's one check, a load of a line it touches anyway.
    pub(in crate::runtime) capturing: AtomicBool,
    /// How a host thread waits for the stream ([`SyncPolicy`], `hipStreamSetAttribute`).
    sync_policy: AtomicU32,
    /// Where the stream is in its device's list of streams (`DeviceStreams::others`).
    slot: Slot,
}

/// `hipSynchronizationPolicy`: how a host thread waits for a stream's work (AMD's and CUDA's
/// values). Every policy but `BlockingSync` spins for a while before it sleeps in the HSA
/// runtime's blocked wait; `BlockingSync` sleeps at once, as `hipEventBlockingSync` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    Auto = 1,
    Spin = 2,
    Yield = 3,
    BlockingSync = 4,
}

impl SyncPolicy {
    pub fn from_hip(value: u32) -> Option<SyncPolicy> {
        Some(match value {
            1 => SyncPolicy::Auto,
            2 => SyncPolicy::Spin,
            3 => SyncPolicy::Yield,
            4 => SyncPolicy::BlockingSync,
            _ => return None,
        })
    }
}

impl Slotted for Stream {
    fn slot(&self) -> &Slot {
        &self.slot
    }
}

/// Where [`Stream::serial`] values come from.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

struct State {
    queue: Option<Arc<Queue>>,
    /// Counted packets not yet complete (see the module comment). Replaced, and never reused,
    /// when the stream gives up a failed queue: packets there may still name it.
    pending: PooledSignal,
    /// Counted packets published (the ones `pending` tracks).
    counted: u64,
    /// Queue index of the latest counted packet on `queue`: where the stream's work there
    /// ends, for fault checks.
    last: u64,
    /// Out-of-queue work the stream's next packet must wait for.
    gate: Option<Gate>,
    /// Pooled signals named by published packets or copies, released in order once the
    /// counted packet `release_at` has completed.
    held: VecDeque<Held>,
    /// The last marker and the `ops` it covers, reused while no new work arrives.
    tail: Option<(u64, Marker)>,
    /// `counted` from which a launch sweeps `held` again (see [`Stream::sweep_now_and_then`]).
    next_launch_sweep: u64,
    /// Set by [`Stream::retire`]: the stream was destroyed and its work is done; it has given
    /// up its queue and takes no more work.
    retired: bool,
}

/// Which sweep of the held signals an operation's fast path makes.
#[derive(Clone, Copy)]
enum Sweep {
    Always,
    NowAndThen,
}

/// Counted packets between two sweeps of the launch path (see [`Stream::sweep_now_and_then`]).
const LAUNCH_SWEEP_INTERVAL: u64 = 16;

impl State {
    /// Counts one more packet on `pending` and returns the signal that packet must complete:
    /// counted before it is published, so the packet can never complete the count early.
    fn count_packet(&mut self) -> hsa_signal_t {
        self.pending.signal().count_up(1);
        self.counted += 1;
        self.pending.handle()
    }
}

/// How [`Stream::submit_counted`] holds the stream while it publishes.
enum Ready<'s> {
    /// Nothing to wait for: just the lock.
    Idle(parking_lot::MutexGuard<'s, State>),
    /// An operation whose waits are published.
    AfterWaits(Operation<'s>),
}

/// Completion of out-of-queue work, and the marker that work depended on.
struct Gate {
    signal: PooledSignal,
    after: Option<Marker>,
    /// Work that is a packet on another queue of the device (a cooperative dispatch): that
    /// packet, whose completion signal is `signal`. It also answers for `after`, which its
    /// queue records as a wait (see [`Stream::submit_elsewhere`]).
    completed_by: Option<Marker>,
    /// The work is a copy-engine job, started once `after` completes (`copy::ordered_copies`
    /// hands it to an engine then; given to an engine at once, it would hold up every later
    /// copy there, as an engine runs its jobs in order). Waiting for a lost marker it would
    /// never start and its gate never complete: when the stream gives up its work, such a
    /// job is released instead (see `Stream::abandon`).
    on_engine: bool,
}

/// Where work enqueued out of the stream's queue ([`Stream::enqueue_external`]) waits for
/// the stream's earlier work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfQueue {
    /// On a copy engine, which runs its jobs in order: after a fault the job is let go (see
    /// [`Wedged`]), or it would hold up every later copy there.
    OnEngine,
    /// Off the engines (an HSA signal handler starts it): after a fault it never runs, like
    /// the rest of the stream's lost work.
    OffEngine,
}

/// A copy-engine job waiting for a lost marker, to be released once no stream lock is held.
struct Wedged(PooledSignal);

impl Wedged {
    /// Completes the marker the job waits for: only the job waits for that signal (a marker
    /// of `enqueue_external`'s own), and the packet that would have completed it never runs.
    fn release(self) {
        self.0.signal().store(0);
        // Still named by that packet, on a queue nothing will run again: never reused.
        self.0.leak();
    }
}

struct Held {
    release_at: u64,
    signal: PooledSignal,
    /// The signal is the completion signal of the packet that names it (a marker) and no
    /// packet of this stream waits on it: it may go back to the pool as soon as it reads 0,
    /// without waiting for a later counted packet (a stream that only records events has
    /// none).
    completes_itself: bool,
    /// Memory the packets point to (a batch's kernarg images, see [`Stream::submit_batch`]),
    /// kept as long as the signal.
    keep: Option<Keepalive>,
    /// The signal is that of the marker a copy-engine job waits for, whose gate a barrier
    /// has since taken over: the stream no longer has a gate that names the job, and
    /// `abandon` still has to let the job go if the marker is lost (see `Wedged`).
    engine_waits: Option<Marker>,
    /// With `engine_waits`: the job's own completion signal (its gate's), which the device
    /// waits for once the job is let go (see `DeviceStreams::released`).
    engine_done: Option<PooledSignal>,
    /// The signal is a gate's, the completion of out-of-queue work (a host task, a copy),
    /// which a barrier took over; that work starts once this marker completes (at once
    /// without one). Unless the marker is lost the work still runs after a fault, and the
    /// stream gives its work up only once it is done (see `Stream::out_of_queue_running`).
    gate: Option<Option<Marker>>,
}

impl Held {
    fn of(release_at: u64, signal: PooledSignal, completes_itself: bool) -> Held {
        Held {
            release_at,
            signal,
            completes_itself,
            keep: None,
            engine_waits: None,
            engine_done: None,
            gate: None,
        }
    }

    /// Never given back: a stuck packet may still name the signal or read the memory.
    fn leak(self) {
        self.signal.leak();
        if let Some(keep) = self.keep {
            std::mem::forget(keep);
        }
    }
}

/// What a batch of packets needs kept until they complete (see [`Stream::submit_batch`]).
pub type Keepalive = Arc<dyn std::any::Any + Send + Sync>;

/// Faults a stream has not reported yet: to its own calls, and to device-wide calls.
#[derive(Default)]
pub(in crate::runtime) struct Owed {
    pub(in crate::runtime) stream: Option<HipError>,
    pub(in crate::runtime) device: Option<HipError>,
}

impl Owed {
    pub(in crate::runtime) fn owe(&mut self, error: HipError) {
        self.stream.get_or_insert(error);
        self.device.get_or_insert(error);
    }
}

/// A stream's [`Owed`] faults, with a flag that lets the calls that find nothing owed (every
/// synchronize of a healthy stream) skip the lock.
#[derive(Default)]
pub(in crate::runtime) struct OwedReports {
    /// Set, under the lock, whenever a fault is owed; cleared, under the lock, once nothing is.
    any: AtomicBool,
    owed: Mutex<Owed>,
}

impl OwedReports {
    pub(in crate::runtime) fn owe(&self, error: HipError) {
        let mut owed = self.owed.lock();
        owed.owe(error);
        self.any.store(true, Ordering::Release);
    }

    /// Takes what `which` picks of the owed faults.
    #[inline(always)]
    fn take(&self, which: impl FnOnce(&mut Owed) -> &mut Option<HipError>) -> Option<HipError> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        self.take_locked(which)
    }

    #[inline(never)]
    fn take_locked(
        &self,
        which: impl FnOnce(&mut Owed) -> &mut Option<HipError>,
    ) -> Option<HipError> {
        let mut owed = self.owed.lock();
        let taken = which(&mut owed).take();
        if owed.stream.is_none() && owed.device.is_none() {
            self.any.store(false, Ordering::Release);
        }
        taken
    }

    /// The fault owed to the stream's own calls, taken.
    #[inline(always)]
    pub(in crate::runtime) fn take_stream(&self) -> Option<HipError> {
        self.take(|owed| &mut owed.stream)
    }

    /// The fault owed to device-wide calls, taken.
    pub(in crate::runtime) fn take_device(&self) -> Option<HipError> {
        self.take(|owed| &mut owed.device)
    }

    /// Everything owed, taken.
    pub(in crate::runtime) fn take_all(&self) -> Owed {
        let mut owed = self.owed.lock();
        self.any.store(false, Ordering::Release);
        std::mem::take(&mut *owed)
    }

    /// A device-wide call still has a fault to report.
    pub(in crate::runtime) fn owes_device(&self) -> bool {
        self.any.load(Ordering::Acquire) && self.owed.lock().device.is_some()
    }
}

/// Something a stream operation must wait for: a signal that reads 0 when it is done, and the
/// marker it cannot complete before (what a fault would leave it stranded behind), if any.
pub struct Dep {
    pub signal: PooledSignal,
    pub producer: Option<Marker>,
}

impl Dep {
    /// A wait for `marker` itself.
    pub fn on(marker: Marker) -> Dep {
        Dep {
            signal: marker.signal.clone(),
            producer: Some(marker),
        }
    }
}

/// Dependencies of one operation. Small, because every launch moves it: the usual operation
/// waits for nothing or for one thing (legacy ordering's, or the event of
/// `hipStreamWaitEvent`), which needs no heap; more spill into `rest`.
#[derive(Default)]
pub struct DepList {
    first: Option<Dep>,
    rest: Vec<Dep>,
}

impl DepList {
    pub fn push(&mut self, dep: Dep) {
        if self.first.is_none() {
            self.first = Some(dep);
        } else {
            self.rest.push(dep);
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    fn drain(&mut self) -> impl Iterator<Item = Dep> + '_ {
        self.first.take().into_iter().chain(self.rest.drain(..))
    }

    /// Drops the list, without a call when it holds nothing (what every launch leaves).
    #[inline(always)]
    fn discard(self) {
        if self.first.is_none() && self.rest.capacity() == 0 {
            // Nothing to drop: no dependency, and no heap buffer.
            std::mem::forget(self);
        }
    }
}

/// What legacy ordering made an operation wait for, to record once it is published.
#[derive(Default)]
struct LegacyMarks {
    /// For a blocking stream: the null stream's `ops` now waited for.
    null_ops: Option<u64>,
    /// For the null stream: blocking streams and their `ops` now waited for.
    streams: Vec<(Arc<Stream>, u64)>,
}

/// A stream resolved from a handle: the null stream is borrowed, others are shared.
pub enum StreamRef<'a> {
    Borrowed(&'a Stream),
    Shared(Arc<Stream>),
}

impl Deref for StreamRef<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        match self {
            StreamRef::Borrowed(s) => s,
            StreamRef::Shared(s) => s,
        }
    }
}

impl Stream {
    pub fn sync_policy(&self) -> SyncPolicy {
        SyncPolicy::from_hip(self.sync_policy.load(Ordering::Relaxed)).unwrap_or(SyncPolicy::Auto)
    }

    pub fn set_sync_policy(&self, policy: SyncPolicy) {
        self.sync_policy.store(policy as u32, Ordering::Relaxed);
    }

    pub(in crate::runtime) fn new(
        signals: &'static SignalPool,
        kind: StreamKind,
        device: usize,
        flags: u32,
        priority: Priority,
        cu_mask: Option<Box<[u32]>>,
    ) -> Result<Stream, HsaError> {
        Ok(Stream {
            kind,
            device,
            flags,
            priority,
            cu_mask,
            signals,
            ops: AtomicU64::new(0),
            settled_ops: AtomicU64::new(NEVER),
            settled_faults: AtomicU64::new(0),
            seen_null: AtomicU64::new(0),
            seen_by_null: AtomicU64::new(0),
            listed: AtomicBool::new(false),
            capturing: AtomicBool::new(false),
            sync_policy: AtomicU32::new(SyncPolicy::Auto as u32),
            me: OnceLock::new(),
            owed: Arc::default(),
            state: Mutex::new(State {
                queue: None,
                pending: signals.get(0)?,
                counted: 0,
                last: 0,
                gate: None,
                held: VecDeque::with_capacity(16),
                tail: None,
                next_launch_sweep: 0,
                retired: false,
            }),
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            waited: Mutex::new(Vec::new()),
            slot: Slot::new(),
        })
    }

    /// Whether this stream's work from now on is ordered after `marker`: it waited (through
    /// [`Stream::wait_for`]) for a marker at or after `marker` on the same queue. Conservative:
    /// orderings through other queues or legacy null-stream waits are not seen.
    pub fn has_waited_for(&self, marker: &Marker) -> bool {
        let id = marker.queue.id;
        self.waited
            .lock()
            .iter()
            .any(|&(queue, index)| queue == id && index >= marker.index)
    }

    /// True unless the stream was created with `hipStreamNonBlocking` (the null stream itself
    /// is not "blocking" in this sense: it is the one the others block with).
    /// Counts one operation in `ops`. Every count is made under the stream's lock (`_locked`
    /// is its state), so a load and a store count it without a locked instruction: on the
    /// launch path that is one full barrier fewer. A blocking stream's count stays
    /// sequentially consistent: `DeviceStreams::note_unseen` and the null stream's
    /// `prune_unseen` rely on it (a store, then a load of `listed`, on each side).
    #[inline(always)]
    fn count_op(&self, _locked: &State) {
        let counted = self.ops.load(Ordering::Relaxed) + 1;
        if self.is_blocking() {
            self.ops.store(counted, Ordering::SeqCst);
        } else {
            self.ops.store(counted, Ordering::Release);
        }
    }

    pub fn is_blocking(&self) -> bool {
        self.kind != StreamKind::Null && self.flags & NON_BLOCKING == 0
    }

    /// The device ordinal of this stream (`device` for a null stream).
    pub fn device_index(&self, device: &DeviceStreams) -> usize {
        if self.kind == StreamKind::Null {
            device.index
        } else {
            self.device
        }
    }

    /// Starts one operation on this stream: gathers what legacy ordering makes it wait for
    /// (taking other streams' locks one at a time, before ours), plus `extra`, then takes this
    /// stream's lock, which the returned [`Operation`] holds until it is finished. The caller
    /// publishes the operation's packets through it and calls [`Operation::finish`] (or
    /// [`Operation::finish_counted`]); an operation dropped unfinished (an error part-way)
    /// leaves the stream's operation count and legacy marks as they were.
    #[inline(always)]
    pub fn begin<'s>(
        &'s self,
        device: &'s DeviceStreams,
        extra: Option<Dep>,
    ) -> HipResult<Operation<'s>> {
        if self.capturing.load(Ordering::Relaxed) {
            // What capture turns into graph nodes never gets here; anything else would run
            // on the device in the middle of a capture.
            tracing::warn!(stream = %self.kind, "an operation stream capture does not support on a capturing stream");
            return Err(HipError::STREAM_CAPTURE_UNSUPPORTED);
        }
        let mut deps = DepList::default();
        let legacy = self.legacy_deps(device, &mut deps)?;
        if let Some(dep) = extra {
            deps.push(dep);
        }
        let mut st = self.state.lock();
        self.sweep(&mut st);
        Ok(Operation {
            stream: self,
            device,
            st,
            deps,
            legacy,
        })
    }

    /// Publishes one counted packet (a kernel dispatch) after everything the stream must wait
    /// for: `publish` writes it on the queue it is given, with the completion signal it is
    /// given (the stream's synchronisation waits for it), rings the doorbell and returns the
    /// packet's queue index. Cannot fail once `publish` is called.
    ///
    /// The launch path. A stream with nothing to wait for (no legacy ordering owed, no
    /// out-of-queue work, a queue already assigned) publishes under its lock without building
    /// an [`Operation`]: no dependency list, no queue reference count, no moves of either.
    /// Anything else first publishes its waits through the general operation. Either way the
    /// packet is written at one place, which the launch inlines.
    #[inline(always)]
    pub fn submit_counted(
        &self,
        device: &DeviceStreams,
        publish: impl FnOnce(&Queue, hsa_signal_t) -> u64,
    ) -> HipResult {
        self.submit_one_counted(
            device,
            Sweep::NowAndThen,
            #[inline(always)]
            |queue, completion_signal| publish(queue, completion_signal),
            |_| {},
        )
    }

    /// What [`Stream::submit_counted`] and [`Stream::submit_batch`] share: publishes one
    /// counted packet through `publish` after everything the stream must wait for (under the
    /// stream's lock alone when there is nothing), then lets `hold` keep what the packet needs
    /// until it completes.
    #[inline(always)]
    fn submit_one_counted(
        &self,
        device: &DeviceStreams,
        sweep: Sweep,
        publish: impl FnOnce(&Arc<Queue>, hsa_signal_t) -> u64,
        hold: impl FnOnce(&mut State),
    ) -> HipResult {
        let mut ready = match self.lock_if_nothing_to_wait_for(device, sweep) {
            Some(st) => Ready::Idle(st),
            None => Ready::AfterWaits(self.begin_after_waits(device)?),
        };
        let st = match &mut ready {
            Ready::Idle(st) => &mut **st,
            Ready::AfterWaits(op) => &mut *op.st,
        };
        let State {
            queue,
            pending,
            counted,
            last,
            ..
        } = &mut *st;
        let Some(queue) = queue.as_ref() else {
            // `begin_after_waits` assigned one.
            tracing::error!(stream = %self.kind, "internal error: no queue after the waits");
            return Err(HipError::UNKNOWN);
        };
        // Counted before it is published (see `State::count_packet`).
        pending.signal().count_up(1);
        *counted += 1;
        *last = publish(queue, pending.handle());
        hold(st);
        match ready {
            Ready::Idle(st) => {
                self.count_op(&st);
                drop(st);
                if self.is_blocking() {
                    device.note_unseen(self);
                }
            }
            Ready::AfterWaits(op) => op.finish(),
        }
        Ok(())
    }

    /// The stream's lock, if its next packet has nothing to wait for and its queue is
    /// assigned.
    #[inline(always)]
    fn lock_if_nothing_to_wait_for(
        &self,
        device: &DeviceStreams,
        sweep: Sweep,
    ) -> Option<parking_lot::MutexGuard<'_, State>> {
        if self.legacy_wait_needed(device) {
            return None;
        }
        let mut st = self.state.lock();
        match sweep {
            Sweep::Always => self.sweep(&mut st),
            Sweep::NowAndThen => self.sweep_now_and_then(&mut st),
        }
        (st.queue.is_some() && st.gate.is_none()).then_some(st)
    }

    /// Publishes a batch of prebuilt packets (an executable graph's, see `graph/exec`) as one
    /// operation of the stream, after everything the stream must wait for, as
    /// [`Stream::submit_counted`] does for one dispatch: `publish` writes the batch on the
    /// stream's queue (and on any other queues it uses, whose packets the batch's last packet
    /// on the stream's queue must wait for), gives that last packet the completion signal it
    /// is given (so one counted packet stands for the whole batch: every packet carries the
    /// barrier bit), rings each queue's doorbell and returns that packet's index. `hold` are
    /// pooled signals the batch's packets name and `keep` the memory they read (kernarg
    /// images): both are kept until the counted packet completes. Cannot fail once `publish`
    /// is called.
    pub fn submit_batch(
        &self,
        device: &DeviceStreams,
        hold: Vec<PooledSignal>,
        keep: Keepalive,
        publish: impl FnOnce(&Arc<Queue>, hsa_signal_t) -> u64,
    ) -> HipResult {
        self.submit_one_counted(device, Sweep::Always, publish, |st| {
            st.held.push_back(Held {
                keep: Some(keep),
                ..Held::of(st.counted, st.pending.clone(), false)
            });
            for signal in hold {
                st.held.push_back(Held::of(st.counted, signal, false));
            }
        })
    }

    /// An operation whose waits are published on its queue (assigned if need be).
    #[inline(never)]
    fn begin_after_waits<'s>(&'s self, device: &'s DeviceStreams) -> HipResult<Operation<'s>> {
        let mut op = self.begin(device, None)?;
        op.queue_after_waits()?;
        Ok(op)
    }

    /// `hipStreamWaitEvent`: later work of this stream waits for `dep` (a barrier-AND packet
    /// on this stream's queue; the host does not wait).
    pub fn wait_for(&self, device: &DeviceStreams, dep: Dep) -> HipResult {
        let waited = dep.producer.as_ref().map(|m| (m.queue.id, m.index));
        let mut op = self.begin(device, Some(dep))?;
        if !op.deps.is_empty() {
            op.queue_after_waits()?;
        }
        op.finish();
        if let Some((queue, index)) = waited {
            let mut list = self.waited.lock();
            match list.iter_mut().find(|(q, _)| *q == queue) {
                Some((_, latest)) => *latest = (*latest).max(index),
                None => list.push((queue, index)),
            }
        }
        Ok(())
    }

    /// Publishes `packet` (a barrier-value packet: `hipStreamWaitValue32/64`) as one counted
    /// packet of the stream, after its waits: the stream's later work runs after it completes,
    /// and its synchronisation waits for it as for a kernel.
    pub fn submit_counted_barrier(
        &self,
        device: &DeviceStreams,
        packet: impl FnOnce(hsa_signal_t) -> AqlPacket,
    ) -> HipResult {
        let mut op = self.begin(device, None)?;
        let queue = op.queue_after_waits()?;
        let completion = op.st.count_packet();
        op.st.last = queue.publish(&packet(completion));
        tracing::trace!(target: "hipshim::packet", stream = %self.kind, queue = queue.id, index = op.st.last, "barrier-value packet");
        op.finish();
        Ok(())
    }

    /// `hipEventRecord`: a marker after all work so far.
    pub fn record(&self, device: &DeviceStreams) -> HipResult<Marker> {
        let mut op = self.begin(device, None)?;
        let marker = op.marker()?;
        op.st.tail = Some((self.ops.load(Ordering::Relaxed) + 1, marker.clone()));
        op.finish();
        Ok(marker)
    }

    /// Enqueues copy-engine work: `start` is called (under the stream lock) with the signal
    /// the work must wait for (none if the stream is idle) and a completion signal holding
    /// `completions`; the work decrements it once per part. The stream's later work waits for
    /// it to reach 0. `start` also says whether the work waits for that signal on a copy
    /// engine ([`OutOfQueue::OnEngine`]: let go after a fault, see [`Wedged`]) or off the
    /// engines ([`OutOfQueue::OffEngine`]: it never runs if the signal is lost).
    pub fn enqueue_external(
        &self,
        device: &DeviceStreams,
        completions: i64,
        start: impl FnOnce(Option<&PooledSignal>, &PooledSignal) -> (OutOfQueue, HipResult),
    ) -> HipResult {
        self.enqueue_out_of_queue(device, completions, start)
    }

    /// [`Stream::enqueue_external`] for copy-engine jobs and host tasks alike.
    pub(in crate::runtime) fn enqueue_out_of_queue(
        &self,
        device: &DeviceStreams,
        completions: i64,
        start: impl FnOnce(Option<&PooledSignal>, &PooledSignal) -> (OutOfQueue, HipResult),
    ) -> HipResult {
        let mut op = self.begin(device, None)?;
        let before = if op.deps.is_empty() && self.idle(&op.st) {
            None
        } else {
            Some(op.marker()?)
        };
        let done = self.signals.get(completions)?;
        if let Some(m) = &before {
            tracing::debug!(stream = %self.kind, after = ?m, gate = ?done, "out-of-queue work waits for a marker");
        }
        let (waits, started) = start(before.as_ref().map(|m| &m.signal), &done);
        let on_engine = waits == OutOfQueue::OnEngine;
        // An earlier gate was covered by the marker (or already complete). The gate is kept
        // even when `start` failed part-way: the parts it issued still name `done` and the
        // marker, which must not go back to the pool while an engine may write them (`start`
        // has already taken the parts it did not issue off `done`).
        op.st.gate = Some(Gate {
            signal: done,
            after: before,
            on_engine,
            completed_by: None,
        });
        if started.is_err() {
            // The cached tail marker does not cover the parts that were issued, and `ops`
            // does not count them: no synchronize may answer without waiting for them.
            op.st.tail = None;
            self.settled_ops.store(NEVER, Ordering::Release);
            return started;
        }
        op.finish();
        Ok(())
    }

    /// Publishes one packet on `queue`, a queue other than the stream's own (a device's
    /// cooperative queue), in stream order: it runs after the stream's work so far and after
    /// `also_after` (barrier-AND packets there wait for a marker of the stream and for those,
    /// each recorded as that queue's cross-queue wait), and the stream's later work waits for it
    /// (it completes the stream's gate, which the next packet of the stream waits for, as for a
    /// copy). `publish` writes the packet with the completion signal it is given, rings the
    /// doorbell and returns the packet's index. Cannot fail once `publish` is called. Returns
    /// the packet as a marker: complete when the packet is.
    ///
    /// The caller keeps `also_after` (their signals) until the returned marker completes: the
    /// barrier reads them until then.
    pub fn submit_elsewhere(
        &self,
        device: &DeviceStreams,
        queue: &Arc<Queue>,
        also_after: &[Dep],
        publish: impl FnOnce(&Queue, hsa_signal_t) -> u64,
    ) -> HipResult<Marker> {
        let mut op = self.begin(device, None)?;
        let before = if op.deps.is_empty() && self.idle(&op.st) {
            None
        } else {
            Some(op.marker()?)
        };
        let done = self.signals.get(1)?;
        let own = before.as_ref().map(|m| (m.signal.handle(), Some(m)));
        let others = also_after
            .iter()
            .filter(|d| !d.signal.is_zero())
            .map(|d| (d.signal.handle(), d.producer.as_ref()));
        let mut waits = own.into_iter().chain(others).peekable();
        while waits.peek().is_some() {
            let mut batch: [Option<(hsa_signal_t, Option<&Marker>)>; BARRIER_DEPS] =
                Default::default();
            for slot in batch.iter_mut() {
                *slot = waits.next();
            }
            let handles = batch.map(|w| w.map_or(hsa_signal_t::default(), |w| w.0));
            let at = queue.publish(&barrier_and(&handles, hsa_signal_t::default()));
            for producer in batch.iter().flatten().filter_map(|w| w.1) {
                if !Arc::ptr_eq(&producer.queue, queue) {
                    queue.add_blocker(at, producer);
                }
            }
        }
        let index = publish(queue, done.handle());
        tracing::trace!(target: "hipshim::packet", stream = %self.kind, queue = queue.id, index, after = ?before, also_after = also_after.len(), "packet on another queue, in stream order");
        let packet = Marker {
            signal: done.clone(),
            queue: queue.clone(),
            index,
        };
        // An earlier gate was covered by the marker (or already complete).
        op.st.gate = Some(Gate {
            signal: done,
            after: before,
            on_engine: false,
            completed_by: Some(packet.clone()),
        });
        op.finish();
        Ok(packet)
    }

    /// A marker after the stream's work so far, or none if it has none outstanding: what
    /// another queue waits for to run after this stream's work (as an event record would, but
    /// without becoming the stream's record).
    pub fn marker_after_work_so_far(&self, device: &DeviceStreams) -> HipResult<Option<Marker>> {
        let mut op = self.begin(device, None)?;
        let marker = if op.deps.is_empty() && self.idle(&op.st) {
            None
        } else {
            Some(op.marker()?)
        };
        op.finish();
        Ok(marker)
    }

    /// `hipStreamWaitEvent` for several dependencies at once: later work of this stream waits
    /// for every one of `deps` (barrier-AND packets on this stream's queue).
    pub fn wait_for_all(&self, device: &DeviceStreams, deps: Vec<Dep>) -> HipResult {
        let mut op = self.begin(device, None)?;
        for dep in deps {
            op.deps.push(dep);
        }
        if !op.deps.is_empty() {
            op.queue_after_waits()?;
        }
        op.finish();
        Ok(())
    }

    /// Waits on the host until all work enqueued so far (and, on the null stream or a blocking
    /// stream, what legacy ordering adds) is complete. For operations that are synchronous
    /// with respect to the host, like copies from pageable memory; such a copy reports a fault
    /// the stream owes, instead of copying.
    pub fn host_fence(&self, device: &DeviceStreams) -> HipResult {
        self.take_stream_report()?;
        let marker = {
            let mut op = self.begin(device, None)?;
            let marker = if op.deps.is_empty() && self.idle(&op.st) {
                None
            } else {
                Some(op.marker()?)
            };
            op.finish();
            marker
        };
        let Some(marker) = marker else {
            return Ok(());
        };
        if let Err(doom) = marker
            .signal
            .signal()
            .wait_zero(device.timestamp_hz, || marker.lost())
        {
            contain(doom);
            // The marker may be stranded behind another stream's lost work on a shared queue
            // while this stream's own work still completes: then wait for that.
            self.settle(device);
            return self.take_stream_report();
        }
        Ok(())
    }

    /// Waits until every operation enqueued so far has completed. Reports a fault that made the
    /// stream lose work, once (see "Faults").
    ///
    /// An idle stream answers from host state: when no operation was enqueued since a wait
    /// saw all of its work complete, and no fault became known anywhere since (a fault may
    /// make the stream owe a report or leave a failed queue), there is nothing to wait for and
    /// nothing to look at but the report it may owe.
    #[inline(always)]
    pub fn synchronize(&self, device: &DeviceStreams) -> HipResult {
        if self.settled_ops.load(Ordering::Acquire) == self.ops.load(Ordering::Acquire)
            && self.settled_faults.load(Ordering::Acquire) == queue::faults_seen()
        {
            return self.take_stream_report();
        }
        self.settle(device);
        self.take_stream_report()
    }

    /// Before a blocking stream answers a query or a synchronisation: AMD's runtime has it
    /// wait for the null stream's work first, as before work enqueued on it (a marker after
    /// the null stream's last command), so a blocking stream is not done while earlier
    /// null-stream work is not (hip-tests check this). So does this, with a marker, when the
    /// null stream may have work the stream has not waited for; the stream's last marker then
    /// answers for both (and a thread polling the stream reads that one signal).
    pub fn wait_for_null_first(&self, device: &DeviceStreams) -> HipResult {
        if !self.is_blocking() || self.capturing.load(Ordering::Relaxed) {
            return Ok(());
        }
        let null = &device.null;
        let null_ops = null.ops.load(Ordering::Acquire);
        if null_ops == self.seen_null.load(Ordering::Acquire)
            || null_ops == null.settled_ops.load(Ordering::Acquire)
        {
            return Ok(());
        }
        self.record(device).map(drop)
    }

    /// `hipStreamQuery`: Ok if all work is complete, `NotReady` if not, or a fault the stream
    /// owes.
    pub fn query(&self, device: &DeviceStreams) -> HipResult {
        self.take_stream_report()?;
        self.wait_for_null_first(device)?;
        let doom = {
            let mut st = self.state.lock();
            let ops = self.ops.load(Ordering::Acquire);
            if let Some(marker) = Self::last_marker(&st, ops).filter(|m| !m.signal.is_zero()) {
                // All of the stream's work is before its last marker: that one signal answers
                // (a thread polling the stream keeps reading the same one, see `lost`).
                marker.lost()
            } else if !self.idle(&st) {
                self.lost(&st)
            } else {
                if st.gate.as_ref().is_some_and(|g| g.signal.is_zero()) {
                    st.gate = None;
                }
                self.sweep(&mut st);
                self.leave_if_failed(&mut st, device);
                return Ok(());
            }
        };
        if let Some(doom) = doom {
            contain(doom);
            self.take_stream_report()?;
        }
        Err(HipError::NOT_READY)
    }

    /// Whether work enqueued on this stream has yet to complete (work that never can is
    /// contained, as `query` does, and no longer counts). Takes no report: the stream's own
    /// calls still owe its faults.
    pub fn busy(&self) -> bool {
        let doom = {
            let st = self.state.lock();
            if self.idle(&st) {
                return false;
            }
            self.lost(&st)
        };
        if let Some(doom) = doom {
            contain(doom);
        }
        true
    }

    /// Waits until all work enqueued so far has completed or can never complete; in the
    /// latter case the fault is contained (and owed, see "Faults").
    fn settle(&self, device: &DeviceStreams) {
        // Read before anything is waited for: a fault found meanwhile moves the count on, so
        // the host-side answer is not armed past it.
        let faults = queue::faults_seen();
        let (pending, gate, ops, last_marker) = {
            let st = self.state.lock();
            // Under the lock: every operation counted here has published its work.
            let ops = self.ops.load(Ordering::Acquire);
            (
                st.pending.clone(),
                st.gate.as_ref().map(|g| g.signal.clone()),
                ops,
                Self::last_marker(&st, ops),
            )
        };
        // Between blocked slices: the stream as it is now (other threads may have added work
        // behind a fault, or given the stream's work up and replaced its counter).
        let interrupted = || {
            let st = self.state.lock();
            if st.pending.handle() != pending.handle() {
                return Some(None);
            }
            self.lost(&st).map(Some)
        };
        let hz = device.timestamp_hz;
        let block = self.sync_policy() == SyncPolicy::BlockingSync;
        let mut result = pending.signal().wait_zero_with(hz, block, interrupted);
        if let (Ok(()), Some(signal)) = (&result, &gate) {
            result = signal.signal().wait_zero(hz, interrupted);
        }
        if let (Ok(()), Some(marker)) = (&result, &last_marker) {
            result = marker
                .signal
                .signal()
                .wait_zero(hz, || marker.lost().map(Some));
        }
        match result {
            Ok(()) => {
                let mut st = self.state.lock();
                if let (Some(done), Some(current)) = (&gate, &st.gate) {
                    if done.handle() == current.signal.handle() {
                        st.gate = None;
                    }
                }
                self.sweep(&mut st);
                self.leave_if_failed(&mut st, device);
                self.settled_faults.store(faults, Ordering::Release);
                self.settled_ops.store(ops, Ordering::Release);
            }
            Err(Some(doom)) => contain(doom),
            // Given up by another thread, which contained the fault.
            Err(None) => {}
        }
    }

    /// Takes the fault this stream owes its own calls, if any.
    #[inline(always)]
    fn take_stream_report(&self) -> HipResult {
        self.owed.take_stream().map_or(Ok(()), Err)
    }

    /// Takes the fault this stream owes device-wide calls, if any.
    fn take_device_report(&self) -> HipResult {
        self.owed.take_device().map_or(Ok(()), Err)
    }

    /// All enqueued work is done, no published packet still names a pooled signal and no
    /// fault is left for a device-wide call to report: the stream may be dropped.
    /// A destroyed stream whose work is done gives up its queue now, rather than when the
    /// last reference goes: a thread's launch cache (`launch.rs`) may hold the stream until
    /// that thread launches elsewhere or exits, and the queue policies count a queue's load by
    /// the streams holding it. Any later work for the stream is refused.
    pub(in crate::runtime) fn retire(&self) {
        let queue = {
            let mut st = self.state.lock();
            st.retired = true;
            // Work that raced in since the stream was found quiescent keeps the queue until
            // the stream goes.
            if self.idle(&st) {
                st.queue.take()
            } else {
                None
            }
        };
        // Dropped without the stream's lock: the last reference destroys the queue.
        drop(queue);
    }

    fn is_quiescent(&self) -> bool {
        let st = self.state.lock();
        self.idle(&st)
            && st.held.iter().all(|h| h.signal.is_zero())
            && st.tail.as_ref().is_none_or(|t| t.1.signal.is_zero())
            && !self.owed.owes_device()
    }

    // ---- faults ----

    /// Why some of this stream's work can never complete, if so: a counted packet, or the
    /// marker its out-of-queue work waits for.
    ///
    /// While counted packets are outstanding only they are checked: a lost marker of the
    /// gate is on the stream's queue, so either those packets are behind it (and lost too),
    /// or it is found once they complete. A thread polling the stream thus reads the same one
    /// signal every time unless a fault is found (see `Queue::walk`).
    fn lost(&self, st: &State) -> Option<Doom> {
        if !st.pending.is_zero() {
            let queue = st.queue.as_ref()?;
            let doom = queue.doomed_at(st.last)?;
            // A queue stuck behind a barrier still runs what is ahead of that barrier: the
            // work is given up only once that is done, so that nothing of it runs after the
            // fault was reported (or after a device-wide wait, or a hipFree, that trusted
            // the report).
            if let Some(stranded) = queue.stranded_completions(st.last, st.pending.handle()) {
                if st.pending.signal().load() > stranded as i64 {
                    return None;
                }
            } else if st.pending.is_zero() {
                // Read after the fault became visible (see `Marker::lost`).
                return None;
            }
            // Nor while out-of-queue work a barrier waits for still runs.
            return (!Self::out_of_queue_running(st)).then_some(doom);
        }
        let gate = st.gate.as_ref().filter(|g| !g.signal.is_zero())?;
        if let Some(packet) = &gate.completed_by {
            return packet.lost();
        }
        gate.after.as_ref()?.lost()
    }

    /// Out-of-queue work of the stream (a host task, a copy) that a published barrier waits
    /// for, and that will still run: its marker is complete, or will be. A fault leaves it
    /// running (the barrier that waits for it may never be processed), so it must be done
    /// before the stream reports the fault and drops its record of it.
    fn out_of_queue_running(st: &State) -> bool {
        st.held.iter().any(|held| {
            held.gate.as_ref().is_some_and(|after| {
                !held.signal.is_zero() && after.as_ref().is_none_or(|m| m.lost().is_none())
            })
        })
    }

    /// After a fault was found somewhere: gives up the queue and owes the fault if this stream
    /// lost work, else leaves a failed queue once nothing of the stream is left on it.
    fn after_fault(&self, device: &DeviceStreams) {
        let mut st = self.state.lock();
        let wedged = match self.lost(&st) {
            Some(doom) => self.abandon(&mut st, device, doom),
            None => {
                self.leave_if_failed(&mut st, device);
                Vec::new()
            }
        };
        drop(st);
        for job in wedged {
            tracing::warn!(
                stream = %self.kind,
                "a copy queued behind the fault is let go so that its copy engine goes on; what it copies is undefined"
            );
            job.release();
        }
    }

    /// Leaves the stream's queue if it failed or is stuck (nothing more would run there) and
    /// none of the stream's counted packets is still on it. A stream whose earlier work is
    /// still running ahead of the stuck barrier stays until its next synchronize or query.
    fn leave_if_failed(&self, st: &mut State, device: &DeviceStreams) {
        let Some(queue) = &st.queue else { return };
        if !st.pending.is_zero() {
            return;
        }
        let Some(doom) = queue.known_fault() else {
            return;
        };
        device.policy.retire(queue);
        tracing::info!(
            stream = %self.kind,
            queue = queue.id,
            origin = doom.origin,
            "the stream leaves a failed queue; its next work gets a new one"
        );
        st.queue = None;
        // Markers that never completed there are never reused.
        for held in std::mem::take(&mut st.held) {
            if held.signal.is_zero() {
                st.held.push_back(held);
            } else {
                held.leak();
            }
        }
        if st.tail.as_ref().is_some_and(|t| !t.1.signal.is_zero()) {
            if let Some((_, tail)) = st.tail.take() {
                tail.signal.leak();
            }
        }
    }

    /// Gives up the stream's work after a fault: retires its queue (the policy stops handing
    /// it out; the stream's next operation gets a new one), leaks every pooled signal a stuck
    /// packet may still name, and owes the fault to the stream's next call and the next
    /// device-wide call. Returns the copy-engine jobs that wait for a lost marker, for the
    /// caller to release once the lock is dropped.
    fn abandon(&self, st: &mut State, device: &DeviceStreams, doom: Doom) -> Vec<Wedged> {
        let error = device_assert::fault_error(doom);
        let queue = st.queue.take();
        if let Some(queue) = &queue {
            device.policy.retire(queue);
        }
        let mut wedged = Vec::new();
        for mut held in st.held.drain(..) {
            // A job an engine runs in order holds up every later copy there, of any stream.
            if let Some(after) = held.engine_waits.as_ref().filter(|m| m.lost().is_some()) {
                wedged.push(Wedged(after.signal.clone()));
                if let Some(done) = held.engine_done.take() {
                    device.released.lock().push(done);
                }
            }
            held.leak();
        }
        // Out-of-queue work that will still finish stays the stream's gate, so that its next
        // work waits for it. So does a copy-engine job that waits for a lost marker: it is let
        // go (only this stream's own packets, on the queue given up now, wait for the job
        // itself; see `tail_dep`). A host task that waits for a lost marker never runs.
        if let Some(Gate {
            signal,
            after,
            on_engine,
            completed_by,
        }) = st.gate.take()
        {
            let lost = after.as_ref().is_some_and(|m| m.lost().is_some())
                || completed_by.as_ref().is_some_and(|m| m.lost().is_some());
            if let Some(after) = after {
                if lost && on_engine {
                    wedged.push(Wedged(after.signal));
                } else {
                    // Still named by its packet or by the work: never reused.
                    after.signal.leak();
                }
            }
            if lost && !on_engine {
                signal.leak();
                if let Some(packet) = completed_by {
                    // A reference to `signal`, which a stuck packet still names.
                    packet.signal.leak();
                }
            } else {
                st.gate = Some(Gate {
                    signal,
                    after: None,
                    on_engine,
                    completed_by,
                });
            }
        }
        if let Some((_, tail)) = st.tail.take() {
            tail.signal.leak();
        }
        match self.signals.get(0) {
            Ok(fresh) => std::mem::replace(&mut st.pending, fresh).leak(),
            Err(e) => {
                tracing::warn!(error = %e, "no new completion counter after a fault; the old one is reused");
                st.pending.signal().store(0);
            }
        }
        st.counted = 0;
        st.last = 0;
        self.owed.owe(error);
        let queue_id = queue.as_ref().map_or(doom.origin, |q| q.id);
        let why = device.api.describe(doom.status);
        if queue_id == doom.origin {
            tracing::error!(
                "a packet failed on device {} (queue {queue_id}): {why}; stream {} lost its work there and reports {error:?}",
                device.index,
                self.kind
            );
        } else {
            tracing::error!(
                "stream {} on device {} lost its work on queue {queue_id}: it waits, directly or through other streams, for work of queue {} which failed: {why}; reported as {error:?}",
                self.kind,
                device.index,
                doom.origin
            );
        }
        wedged
    }

    // ---- building blocks (all called with the stream lock held) ----

    /// What an operation on this stream must wait for under legacy null-stream semantics.
    #[inline(always)]
    fn legacy_deps(&self, device: &DeviceStreams, deps: &mut DepList) -> HipResult<LegacyMarks> {
        if !self.legacy_wait_needed(device) {
            return Ok(LegacyMarks::default());
        }
        self.gather_legacy_deps(device, deps)
    }

    /// Whether legacy ordering may make this stream's next operation wait: not for a
    /// non-blocking stream, a null stream while no blocking stream exists, or a blocking
    /// stream that has seen all of the null stream's work (every launch on an idle stream).
    /// A few loads, no call.
    #[inline(always)]
    fn legacy_wait_needed(&self, device: &DeviceStreams) -> bool {
        match self.kind {
            StreamKind::Null => device.blocking.load(Ordering::Acquire) != 0,
            _ => {
                self.is_blocking()
                    && device.null.ops.load(Ordering::Acquire)
                        != self.seen_null.load(Ordering::Acquire)
            }
        }
    }

    #[inline(never)]
    fn gather_legacy_deps(
        &self,
        device: &DeviceStreams,
        deps: &mut DepList,
    ) -> HipResult<LegacyMarks> {
        let mut legacy = LegacyMarks::default();
        let streams = device;
        if self.kind == StreamKind::Null {
            if streams.blocking.load(Ordering::Acquire) == 0 {
                return Ok(legacy);
            }
            for stream in streams.unseen_streams() {
                let (ops, dep) = stream.tail_dep(device)?;
                if let Some(dep) = dep {
                    deps.push(dep);
                }
                legacy.streams.push((stream, ops));
            }
        } else if self.is_blocking() {
            let null = &streams.null;
            if null.ops.load(Ordering::Acquire) != self.seen_null.load(Ordering::Acquire) {
                let (ops, dep) = null.tail_dep(device)?;
                if let Some(dep) = dep {
                    deps.push(dep);
                }
                legacy.null_ops = Some(ops);
            }
        }
        Ok(legacy)
    }

    /// A signal that reads 0 once all this stream's operations so far are complete (`None` if
    /// they already are), and the `ops` count it covers. Takes this stream's lock.
    fn tail_dep(&self, device: &DeviceStreams) -> HipResult<(u64, Option<Dep>)> {
        let mut st = self.state.lock();
        let ops = self.ops.load(Ordering::Acquire);
        if self.idle(&st) {
            return Ok((ops, None));
        }
        if let Some((at, marker)) = &st.tail {
            if *at == ops {
                return Ok((ops, Some(Dep::on(marker.clone()))));
            }
        }
        // Always a marker, also when only out-of-queue work is outstanding: other streams
        // wait for this queue's packets, never for a gate itself (see `Wedged`).
        let queue = self.queue(&mut st, device)?;
        let marker = self.marker(&mut st, &queue, &mut DepList::default())?;
        st.tail = Some((ops, marker.clone()));
        Ok((ops, Some(Dep::on(marker))))
    }

    /// The stream's marker, if it is the stream's last operation (an event recorded last, or
    /// the marker another stream waits for), given `ops`, the operation count now. Once the
    /// work before it is done it completes on its own, but later than that work (a copy's
    /// gate is seen by the packet processor only when it looks): a wait or query that says
    /// the stream is done must see it complete too, since an event recorded on the stream
    /// is then complete (CUDA's contract, and AMD's runtime waits for its last command).
    fn last_marker(st: &State, ops: u64) -> Option<Marker> {
        st.tail
            .as_ref()
            .filter(|(covers, _)| *covers == ops)
            .map(|(_, marker)| marker.clone())
    }

    /// True when nothing enqueued is still running (markers aside: they complete on their own
    /// right after the work before them).
    fn idle(&self, st: &State) -> bool {
        st.pending.signal().load() == 0 && st.gate.as_ref().is_none_or(|g| g.signal.is_zero())
    }

    /// The stream's queue, assigned by the policy at first use.
    #[inline(always)]
    fn queue(&self, st: &mut State, device: &DeviceStreams) -> HipResult<Arc<Queue>> {
        if let Some(queue) = &st.queue {
            return Ok(queue.clone());
        }
        self.assign_queue(st, device)
    }

    #[inline(never)]
    fn assign_queue(&self, st: &mut State, device: &DeviceStreams) -> HipResult<Arc<Queue>> {
        if st.retired {
            // Only a call racing with the stream's hipStreamDestroy on another thread gets
            // here: it found the stream before the handle died.
            tracing::warn!(stream = %self.kind, "work for a stream destroyed meanwhile: refused");
            return Err(HipError::INVALID_HANDLE);
        }
        let queue = device.policy.queue_for(
            &device.queues,
            &QueueRequest {
                stream: &self.kind,
                priority: self.priority,
                cu_mask: self.cu_mask.as_deref(),
            },
        )?;
        st.queue = Some(queue.clone());
        Ok(queue)
    }

    /// Makes the stream's next packet wait for `deps` and for its gate: counted barrier-AND
    /// packets, up to five dependencies each. Dependencies already complete are dropped; a
    /// wait for another queue's marker is recorded on this queue (see `hsa/queue.rs`).
    #[inline(always)]
    fn wait_in_queue(&self, st: &mut State, queue: &Arc<Queue>, deps: &mut DepList) {
        // The common launch: nothing to wait for, and nothing to set up to find that out.
        if st.gate.is_none() && deps.is_empty() {
            return;
        }
        self.publish_waits(st, queue, deps);
    }

    #[inline(never)]
    fn publish_waits(&self, st: &mut State, queue: &Arc<Queue>, deps: &mut DepList) {
        // (signal, the packet completing it, the gate's marker and whether it is a job on an
        // engine, whether it is the gate).
        type Entry = (PooledSignal, Option<Marker>, Option<(Marker, bool)>, bool);
        // The gate's marker is on this queue, or on one the stream left with it complete; a
        // gate completed by a packet of another queue is a cross-queue wait like any other.
        let gate = st.gate.take().map(|g| {
            let is_out_of_queue = g.completed_by.is_none();
            (
                g.signal,
                g.completed_by,
                g.after.map(|m| (m, g.on_engine)),
                is_out_of_queue,
            )
        });
        let mut all = gate
            .into_iter()
            .chain(deps.drain().map(|d| (d.signal, d.producer, None, false)))
            .filter(|(signal, _, _, _)| !signal.is_zero())
            .peekable();
        while all.peek().is_some() {
            let mut batch: [Option<Entry>; BARRIER_DEPS] = Default::default();
            let mut handles = [hsa_signal_t::default(); BARRIER_DEPS];
            for (slot, entry) in batch.iter_mut().zip(handles.iter_mut()) {
                let Some(next) = all.next() else { break };
                *entry = next.0.handle();
                *slot = Some(next);
            }
            let completion = st.count_packet();
            st.last = queue.publish(&barrier_and(&handles, completion));
            let (release_at, at) = (st.counted, st.last);
            for (signal, producer, after, out_of_queue) in batch.into_iter().flatten() {
                if let Some(producer) = producer.filter(|p| !Arc::ptr_eq(&p.queue, queue)) {
                    queue.add_blocker(at, &producer);
                }
                let engine_done = after
                    .as_ref()
                    .is_some_and(|(_, on_engine)| *on_engine)
                    .then(|| signal.clone());
                st.held.push_back(Held {
                    gate: out_of_queue.then(|| after.as_ref().map(|(m, _)| m.clone())),
                    ..Held::of(release_at, signal, false)
                });
                if let Some((after, on_engine)) = after {
                    st.held.push_back(Held {
                        engine_waits: on_engine.then(|| after.clone()),
                        engine_done,
                        ..Held::of(release_at, after.signal, false)
                    });
                }
            }
        }
    }

    /// Publishes a marker after `deps`, the gate and all earlier packets.
    fn marker(&self, st: &mut State, queue: &Arc<Queue>, deps: &mut DepList) -> HipResult<Marker> {
        self.wait_in_queue(st, queue, deps);
        let signal = self.signals.get(1)?;
        let index = queue.publish(&barrier_and(&[], signal.handle()));
        // Complete once the next counted packet is (the barrier bit orders them).
        st.held
            .push_back(Held::of(st.counted + 1, signal.clone(), true));
        tracing::trace!(target: "hipshim::packet", stream = %self.kind, queue = queue.id, marker = ?signal, "marker");
        Ok(Marker {
            signal,
            queue: queue.clone(),
            index,
        })
    }

    /// Returns pooled signals whose packets are known complete to the pool.
    #[inline(always)]
    fn sweep(&self, st: &mut State) {
        if !st.held.is_empty() {
            self.release_held(st);
        }
    }

    /// [`Stream::sweep`] for the launch path: while what is held stays incomplete, once per
    /// [`LAUNCH_SWEEP_INTERVAL`] counted packets rather than at every launch. A sweep reads
    /// signals through the HSA runtime, two calls per launch for as long as, say, an event's
    /// marker waits behind the stream's kernels (and hsasim's deterministic mode takes such
    /// repeated reads of one signal for a polling loop, and runs queued work in the launch).
    /// Signals go back to the pool a few launches later at most; every other operation sweeps
    /// as before.
    #[inline(always)]
    fn sweep_now_and_then(&self, st: &mut State) {
        if !st.held.is_empty() && st.counted >= st.next_launch_sweep {
            self.release_held(st);
            st.next_launch_sweep = st.counted + LAUNCH_SWEEP_INTERVAL;
        }
    }

    #[inline(never)]
    fn release_held(&self, st: &mut State) {
        let completed = st
            .counted
            .saturating_sub(st.pending.signal().load().max(0) as u64);
        while st.held.front().is_some_and(|h| {
            h.release_at <= completed || (h.completes_itself && h.signal.is_zero())
        }) {
            st.held.pop_front();
        }
    }
}

/// One operation on a stream, from [`Stream::begin`] to [`Operation::finish`]: the stream's
/// lock, what the operation must wait for, and the legacy-ordering marks to record once it is
/// published. A launch that must wait (`Stream::submit_counted`) reads top to bottom through it:
///
/// ```text
/// let mut op = stream.begin(device, None)?;     // waits gathered, stream locked
/// let queue = op.queue_after_waits()?;           // barrier-AND packets for them published
/// let completion = op.st.count_packet();         // the packet's completion signal
/// let mut slots = queue.reserve(1);              // slot and kernarg slot (hsa/queue.rs)
/// ...write kernargs into slots.kernarg(slot), build the packet...
/// slots.write(&packet);                          // body, then header with release
/// op.st.last = slots.ring();                     // doorbell once
/// op.finish();                                   // counted; stream unlocked
/// ```
///
/// A launch with nothing to wait for does the same steps under the stream's lock without
/// building an `Operation`.
pub struct Operation<'s> {
    stream: &'s Stream,
    device: &'s DeviceStreams,
    st: parking_lot::MutexGuard<'s, State>,
    /// What the operation must wait for and has not yet published a wait for.
    deps: DepList,
    legacy: LegacyMarks,
}

impl Operation<'_> {
    /// The stream's queue (assigned by the policy at first use), with a barrier-AND wait for
    /// each of the operation's dependencies, and for the stream's out-of-queue work, already
    /// published on it: whatever is published next runs after them.
    #[inline(always)]
    pub fn queue_after_waits(&mut self) -> HipResult<Arc<Queue>> {
        let queue = self.stream.queue(&mut self.st, self.device)?;
        self.stream
            .wait_in_queue(&mut self.st, &queue, &mut self.deps);
        Ok(queue)
    }

    /// Publishes a marker after the operation's dependencies and all earlier work.
    fn marker(&mut self) -> HipResult<Marker> {
        let queue = self.stream.queue(&mut self.st, self.device)?;
        self.stream.marker(&mut self.st, &queue, &mut self.deps)
    }

    /// Counts the operation, unlocks the stream, and only then records what legacy ordering
    /// waited for: a concurrent operation that reads these marks takes this stream's lock
    /// after us, so it is ordered behind the wait.
    #[inline(always)]
    pub fn finish(self) {
        let Operation {
            stream,
            device,
            st,
            legacy,
            deps,
        } = self;
        deps.discard();
        stream.count_op(&st);
        drop(st);
        if legacy.null_ops.is_none() && legacy.streams.capacity() == 0 && !stream.is_blocking() {
            // Nothing to record, and nothing to drop: no call.
            std::mem::forget(legacy);
            return;
        }
        Self::record_legacy(stream, device, legacy);
    }

    /// What [`Operation::finish`] records for legacy ordering.
    #[inline(never)]
    fn record_legacy(stream: &Stream, device: &DeviceStreams, legacy: LegacyMarks) {
        if let Some(ops) = legacy.null_ops {
            stream.seen_null.fetch_max(ops, Ordering::AcqRel);
        }
        if stream.kind == StreamKind::Null {
            if !legacy.streams.is_empty() {
                for (other, ops) in legacy.streams {
                    other.seen_by_null.fetch_max(ops, Ordering::AcqRel);
                }
                device.prune_unseen();
            }
        } else if stream.is_blocking() {
            device.note_unseen(stream);
        }
    }
}

/// Called by whichever call first finds that something it waits for can never complete:
/// every stream of every device checks whether it lost work to the fault, and each one that
/// did gives up its queue and owes the fault (see "Faults"). So every stream reports what it
/// lost, whichever call looked first.
pub fn contain(doom: Doom) {
    queue::note_fault();
    tracing::debug!(?doom, "a fault was found; checking every stream");
    for device in every_device() {
        device.after_fault();
    }
}

/// The streams of every device, handed down once by the runtime when its devices are open:
/// a fault found while waiting ([`contain`]) and a thread's exit (its per-thread streams) have
/// no caller to hand them down.
static EVERY_DEVICE: std::sync::OnceLock<Vec<&'static DeviceStreams>> = std::sync::OnceLock::new();

/// Called once by the runtime with every device's streams, in ordinal order.
pub fn watch_devices(devices: Vec<&'static DeviceStreams>) {
    let _ = EVERY_DEVICE.set(devices);
}

/// Every device's streams (none before the runtime has opened its devices).
pub fn every_device() -> &'static [&'static DeviceStreams] {
    EVERY_DEVICE.get().map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_is_owed_once_to_each_kind_of_call_and_the_first_one_sticks() {
        let mut owed = Owed::default();
        owed.owe(HipError::ILLEGAL_ADDRESS);
        owed.owe(HipError::LAUNCH_FAILURE);
        assert_eq!(owed.stream.take(), Some(HipError::ILLEGAL_ADDRESS));
        assert_eq!(owed.device.take(), Some(HipError::ILLEGAL_ADDRESS));
        assert!(owed.stream.is_none() && owed.device.is_none());
    }
}
