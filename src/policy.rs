//! Which HSA queue serves a stream. The policy is the experiment this project exists for:
//! it is consulted when a stream first needs a queue (lazily, at its first packet) and when a
//! failed queue is retired. Every stream→queue decision is made here and logged here
//! (`HIPSHIM_LOG=hipshim=info`), so tracing has one place to look.
//!
//! Policies (`HIPSHIM_QUEUE_POLICY`):
//! - `dedicated`: every stream gets a queue of its own, created at its first packet;
//! - `pool:N` (default `pool:4`, as AMD's runtime with `GPU_MAX_HW_QUEUES=4`): up to N queues
//!   per priority level, created on demand; a stream takes an idle queue if there is one, else a
//!   new one while fewer than N exist, else the queue serving the fewest streams;
//!   `pool:N:rr` hands the N queues out in turn instead;
//! - `single`: all streams of a device share one queue (priorities cannot apply).
//!
//! Whatever the policy, a stream with a CU mask gets a private queue with that mask, and a
//! queue's priority is the stream priority (`hsa_amd_queue_set_priority`).
//!
//! When a queue cannot be made (`hsa_queue_create` fails, typically at the device's queue
//! limit), whatever the policy, the stream shares one of the device's working queues instead
//! (see [`choose_fallback`]), a CU-masked stream too: its work runs without the mask, with a
//! warning, rather than not at all (AMD's runtime instead refuses such a stream at
//! `hipExtStreamCreateWithCUMask`; hipshim only makes queues at a stream's first packet).
//! Only a device left with no working queue refuses the work, with `hipErrorOutOfMemory`.

use crate::config::{PolicySpec, PoolStrategy};
use crate::error::{HipError, HipResult};
use crate::hsa::queue::{Queue, QueueFactory};
use crate::hsa::HsaError;
use hsa_abi::*;
use parking_lot::{Mutex, MutexGuard};
use std::fmt;
use std::sync::{Arc, Weak};

/// HIP stream priority as the API takes it, clamped to AMD's three levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    High,
    Normal,
    Low,
}

impl Priority {
    /// `hipDeviceGetStreamPriorityRange`: AMD reports least = 1 (low), greatest = -1 (high);
    /// lower numbers are more urgent.
    pub const LEAST: i32 = 1;
    pub const GREATEST: i32 = -1;

    /// Clamps like AMD's runtime: at or below -1 is high, at or above 1 is low.
    pub fn from_hip(value: i32) -> Priority {
        match value {
            i32::MIN..=-1 => Priority::High,
            0 => Priority::Normal,
            _ => Priority::Low,
        }
    }

    pub fn to_hip(self) -> i32 {
        match self {
            Priority::High => -1,
            Priority::Normal => 0,
            Priority::Low => 1,
        }
    }

    fn hsa(self) -> u32 {
        match self {
            Priority::High => HSA_AMD_QUEUE_PRIORITY_HIGH,
            Priority::Normal => HSA_AMD_QUEUE_PRIORITY_NORMAL,
            Priority::Low => HSA_AMD_QUEUE_PRIORITY_LOW,
        }
    }

    fn index(self) -> usize {
        match self {
            Priority::High => 0,
            Priority::Normal => 1,
            Priority::Low => 2,
        }
    }
}

/// What a stream asks of its queue.
#[derive(Clone, Copy)]
pub struct QueueRequest<'a> {
    /// The stream's label for the log (its handle, or `null`/`per-thread`).
    pub stream: &'a dyn fmt::Display,
    pub priority: Priority,
    pub cu_mask: Option<&'a [u32]>,
}

/// Which queue of a pool an assignment takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolChoice {
    Reuse(usize),
    Create,
}

/// The pool decision, a pure function of the queues' loads (streams currently assigned to
/// each, in creation order), the pool size and, for round-robin, the running cursor.
pub fn choose_pool_queue(
    loads: &[usize],
    size: usize,
    strategy: PoolStrategy,
    cursor: &mut usize,
) -> PoolChoice {
    let size = size.max(1);
    match strategy {
        PoolStrategy::LeastLoaded => {
            if let Some(idle) = loads.iter().position(|&l| l == 0) {
                PoolChoice::Reuse(idle)
            } else if loads.len() < size {
                PoolChoice::Create
            } else {
                let least = (0..loads.len()).min_by_key(|&i| loads[i]).unwrap_or(0);
                PoolChoice::Reuse(least)
            }
        }
        PoolStrategy::RoundRobin => {
            let slot = *cursor % size;
            *cursor = cursor.wrapping_add(1);
            if slot < loads.len() {
                PoolChoice::Reuse(slot)
            } else {
                PoolChoice::Create
            }
        }
    }
}

/// A queue a stream could share when no new queue can be made, as the fallback weighs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub priority: Priority,
    /// The queue has a CU mask (it was made for a CU-masked stream).
    pub masked: bool,
    /// Streams currently on the queue.
    pub load: usize,
}

/// The fallback decision, a pure function of the usable queues (in creation order): an
/// unmasked queue before a masked one (a mask would restrict the stream's work to some CUs),
/// then one of the stream's priority, then the least-loaded, then the oldest. `None` if there
/// is no queue to share.
pub fn choose_fallback(candidates: &[Candidate], priority: Priority) -> Option<usize> {
    (0..candidates.len()).min_by_key(|&i| {
        let c = candidates[i];
        (c.masked, c.priority != priority, c.load)
    })
}

pub struct QueuePolicy {
    pub spec: PolicySpec,
    queue_size: u32,
    /// Queues a graph launch may spread branches over, the launching stream's included
    /// (`HIPSHIM_GRAPH_QUEUES`; see [`QueuePolicy::graph_branch_queues`]); 0: graph launches
    /// publish no prebuilt packets (see `runtime/graph/exec`).
    pub graph_queues: u32,
    /// The queues the policy made. Locked only while assigning (which may
    /// create a queue: milliseconds on ROCr, once per queue); never on the launch path.
    shared: Mutex<Shared>,
}

#[derive(Default)]
struct Shared {
    single: Option<Arc<Queue>>,
    /// Pool queues per priority level (high, normal, low), in creation order.
    pools: [Vec<Arc<Queue>>; 3],
    cursors: [usize; 3],
    /// The queues graph launches put branches on besides the launching stream's (made at the
    /// first launch that wants them, shared by every graph of the device).
    graph: Vec<Arc<Queue>>,
    /// Every queue the policy made and has not retired, private ones included, in creation
    /// order: what a stream shares when no new queue can be made. Weak, so a private queue
    /// still goes away with its stream.
    known: Vec<Known>,
    /// Queues retired and perhaps still alive (held by a stream's last work, an event, another
    /// queue's wait): their settled waits are dropped at each retirement.
    retired: Vec<Weak<Queue>>,
    /// A fallback was logged at warn since the device last made a queue; later ones are
    /// logged at info (over the queue limit, every new stream falls back).
    fallback_warned: bool,
}

struct Known {
    queue: Weak<Queue>,
    priority: Priority,
    masked: bool,
}

impl Shared {
    /// Streams on `queue`: the holders of an `Arc` other than the policy itself (the single
    /// queue and pool queues are also held here).
    fn load(&self, queue: &Arc<Queue>) -> usize {
        let kept = self.single.iter().chain(self.pools.iter().flatten());
        let kept = kept.filter(|q| Arc::ptr_eq(q, queue)).count();
        Arc::strong_count(queue).saturating_sub(kept)
    }

    fn track(&mut self, queue: &Arc<Queue>, priority: Priority, masked: bool) {
        self.known.retain(|k| k.queue.strong_count() > 0);
        self.known.push(Known {
            queue: Arc::downgrade(queue),
            priority,
            masked,
        });
        self.fallback_warned = false;
    }

    fn forget(&mut self, queue: &Arc<Queue>) {
        if self.single.as_ref().is_some_and(|q| Arc::ptr_eq(q, queue)) {
            self.single = None;
        }
        for pool in &mut self.pools {
            pool.retain(|q| !Arc::ptr_eq(q, queue));
        }
        self.graph.retain(|q| !Arc::ptr_eq(q, queue));
        self.known.retain(|k| {
            k.queue.strong_count() > 0 && !std::ptr::eq(k.queue.as_ptr(), Arc::as_ptr(queue))
        });
    }

    /// Retires queues whose error callback fired though no stream has synchronised with the
    /// failure yet: work given to them would never run.
    fn forget_failed(&mut self) {
        let failed: Vec<Arc<Queue>> = self
            .known
            .iter()
            .filter_map(|k| k.queue.upgrade())
            .filter(|q| q.error().is_some())
            .collect();
        for queue in &failed {
            tracing::debug!(target: "hipshim::policy", queue = queue.id, "failed queue retired");
            self.forget(queue);
        }
    }
}

impl QueuePolicy {
    pub fn new(spec: PolicySpec, queue_size: u32) -> QueuePolicy {
        QueuePolicy {
            spec,
            queue_size,
            graph_queues: 1,
            shared: Mutex::new(Shared::default()),
        }
    }

    /// The policy with graph launches spread over up to `queues` queues.
    pub fn with_graph_queues(mut self, queues: u32) -> QueuePolicy {
        self.graph_queues = queues;
        self
    }

    /// The queues a graph launch puts independent branches on besides the launching stream's
    /// own: `wanted` (at most `graph_queues - 1`) normal-priority queues of the device, made
    /// as launches first want them and shared by every graph launch (fewer if the device
    /// cannot make that many; a failed queue is replaced). Empty when graph launches use the
    /// stream's queue only.
    pub fn graph_branch_queues(&self, factory: &QueueFactory, wanted: usize) -> Vec<Arc<Queue>> {
        let wanted = wanted.min(self.graph_queues.saturating_sub(1) as usize);
        if wanted == 0 {
            return Vec::new();
        }
        let mut shared = self.shared.lock();
        shared.graph.retain(|q| q.error().is_none());
        while shared.graph.len() < wanted {
            match self.create(factory, Priority::Normal, None, "graph branch queue") {
                Ok(queue) => {
                    shared.track(&queue, Priority::Normal, false);
                    shared.graph.push(queue);
                }
                Err(error) => {
                    tracing::warn!(target: "hipshim::policy", device = factory.device, %error, made = shared.graph.len(), wanted, "no more graph branch queues; graph launches use fewer");
                    break;
                }
            }
        }
        shared.graph[..wanted.min(shared.graph.len())].to_vec()
    }

    /// The queue a stream should use; `factory` makes the queues of the stream's device (the
    /// stream keeps the `Arc` while it uses the queue; the number of such holders is the
    /// queue's load).
    ///
    /// When no new queue can be made (`hsa_queue_create` fails, as at the device's queue
    /// limit) the stream shares an existing queue instead ([`choose_fallback`]), CU-masked
    /// streams included (their mask is then not applied); only a device with no working queue
    /// at all is an error (`hipErrorOutOfMemory`). A failed queue is never handed out.
    pub fn queue_for(
        &self,
        factory: &QueueFactory,
        request: &QueueRequest,
    ) -> HipResult<Arc<Queue>> {
        let private = match (request.cu_mask, self.spec) {
            (Some(_), _) => Some("private queue for a CU-masked stream"),
            (None, PolicySpec::Dedicated) => Some("dedicated queue"),
            _ => None,
        };
        // Queues are made under the lock, private ones too: a creation that fails at the
        // limit must see every queue made before it, or it could find none to share while
        // another thread is still making one.
        let mut shared = self.shared.lock();
        if let Some(reason) = private {
            return match self.create(factory, request.priority, request.cu_mask, reason) {
                Ok(queue) => {
                    shared.track(&queue, request.priority, request.cu_mask.is_some());
                    let load = shared.load(&queue);
                    drop(shared);
                    self.assigned(factory, request, &queue, reason, load, false);
                    Ok(queue)
                }
                Err(error) => self.fall_back(shared, factory, request, error),
            };
        }
        shared.forget_failed();
        let (queue, reason) = if let PolicySpec::Pool { size, strategy } = self.spec {
            let level = request.priority.index();
            let loads: Vec<usize> = shared.pools[level].iter().map(|q| shared.load(q)).collect();
            let cursor = &mut shared.cursors[level];
            match choose_pool_queue(&loads, size as usize, strategy, cursor) {
                PoolChoice::Reuse(i) => (shared.pools[level][i].clone(), "shared pool queue"),
                PoolChoice::Create => {
                    match self.create(factory, request.priority, None, "new pool queue") {
                        Ok(queue) => {
                            shared.pools[level].push(queue.clone());
                            shared.track(&queue, request.priority, false);
                            (queue, "new pool queue")
                        }
                        Err(error) => return self.fall_back(shared, factory, request, error),
                    }
                }
            }
        } else if let Some(queue) = &shared.single {
            (queue.clone(), "the device's single queue")
        } else {
            match self.create(factory, Priority::Normal, None, "the device's single queue") {
                Ok(queue) => {
                    shared.single = Some(queue.clone());
                    shared.track(&queue, Priority::Normal, false);
                    (queue, "the device's single queue (created)")
                }
                Err(error) => return self.fall_back(shared, factory, request, error),
            }
        };
        let load = shared.load(&queue);
        drop(shared);
        self.assigned(factory, request, &queue, reason, load, false);
        Ok(queue)
    }

    /// No new queue could be made for `request`: shares the best existing working queue of the
    /// device, or fails with `hipErrorOutOfMemory` if there is none.
    fn fall_back(
        &self,
        mut shared: MutexGuard<'_, Shared>,
        factory: &QueueFactory,
        request: &QueueRequest,
        error: HsaError,
    ) -> HipResult<Arc<Queue>> {
        let why = format!(
            "{} failed: {}",
            error.call,
            factory.api.describe(error.status)
        );
        shared.forget_failed();
        let usable: Vec<(Arc<Queue>, Priority, bool)> = shared
            .known
            .iter()
            .filter_map(|k| Some((k.queue.upgrade()?, k.priority, k.masked)))
            .collect();
        let candidates: Vec<Candidate> = usable
            .iter()
            .map(|(queue, priority, masked)| Candidate {
                priority: *priority,
                masked: *masked,
                // Less the `Arc` just upgraded.
                load: shared.load(queue).saturating_sub(1),
            })
            .collect();
        let Some(chosen) = choose_fallback(&candidates, request.priority) else {
            drop(shared);
            tracing::error!(
                target: "hipshim::policy",
                device = factory.device,
                stream = %request.stream,
                policy = %self.spec,
                "no HSA queue for the stream: {why}, and the device has no working queue to \
                 share; its work is refused (hipErrorOutOfMemory)"
            );
            return Err(HipError::OUT_OF_MEMORY);
        };
        let (queue, priority, masked) = usable[chosen].clone();
        drop(usable);
        let load = shared.load(&queue);
        let first = !std::mem::replace(&mut shared.fallback_warned, true);
        drop(shared);
        let mut reason = format!("fallback: no new queue ({why}); sharing an existing one");
        if request.cu_mask.is_some() {
            reason.push_str("; the stream's CU mask is NOT applied");
        } else if masked {
            reason.push_str("; that queue's CU mask restricts the stream");
        }
        if priority != request.priority {
            reason.push_str(&format!("; that queue has {priority:?} priority"));
        }
        // A CU mask not honoured is news for every stream; plain sharing only once per
        // episode of the limit, or a program over it would warn once per stream.
        let warn = first || request.cu_mask.is_some();
        self.assigned(factory, request, &queue, &reason, load, warn);
        Ok(queue)
    }

    /// Logs (at info, or at warn for a fallback worth telling) and records one assignment.
    fn assigned(
        &self,
        factory: &QueueFactory,
        request: &QueueRequest,
        queue: &Queue,
        reason: &str,
        load: usize,
        warn: bool,
    ) {
        if crate::trace::recording() {
            crate::trace::record::stream_assigned(request.stream, queue.id, factory.device, reason);
        }
        macro_rules! log {
            ($level:ident) => {
                tracing::$level!(
                    target: "hipshim::policy",
                    device = factory.device,
                    stream = %request.stream,
                    queue = queue.id,
                    policy = %self.spec,
                    priority = ?request.priority,
                    streams_on_queue = load,
                    "stream assigned to queue: {reason}"
                )
            };
        }
        if warn {
            log!(warn);
        } else {
            log!(info);
        }
    }

    fn create(
        &self,
        factory: &QueueFactory,
        priority: Priority,
        cu_mask: Option<&[u32]>,
        reason: &'static str,
    ) -> Result<Arc<Queue>, HsaError> {
        let hsa_priority = (priority != Priority::Normal).then(|| priority.hsa());
        let queue = factory.create(self.queue_size, hsa_priority, cu_mask)?;
        tracing::info!(
            target: "hipshim::policy",
            device = factory.device,
            queue = queue.id,
            size = self.queue_size,
            policy = %self.spec,
            ?priority,
            cu_masked = cu_mask.is_some(),
            "queue created: {reason}"
        );
        if crate::trace::recording() {
            crate::trace::record::queue_created(queue.id, factory.device, self.queue_size, reason);
        }
        Ok(Arc::new(queue))
    }

    /// Stops handing out `queue` (it failed); streams that use it get a new one next time.
    pub fn retire(&self, queue: &Arc<Queue>) {
        let alive: Vec<Arc<Queue>> = {
            let mut shared = self.shared.lock();
            shared.forget(queue);
            shared.retired.retain(|q| q.strong_count() > 0);
            if !shared
                .retired
                .iter()
                .any(|q| q.as_ptr() == Arc::as_ptr(queue))
            {
                shared.retired.push(Arc::downgrade(queue));
            }
            let known = shared.known.iter().map(|k| &k.queue);
            known
                .chain(&shared.retired)
                .filter_map(Weak::upgrade)
                .collect()
        };
        // Each wait a queue records holds the queue it waits for: waits that completed are
        // dropped here, in every queue still alive, so that retired queues do not keep one
        // another alive (see `Queue::forget_settled_waits`).
        for q in &alive {
            q.forget_settled_waits();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_loaded_prefers_idle_then_new_then_least_loaded() {
        let mut cursor = 0;
        let ll = PoolStrategy::LeastLoaded;
        assert_eq!(
            choose_pool_queue(&[], 2, ll, &mut cursor),
            PoolChoice::Create
        );
        assert_eq!(
            choose_pool_queue(&[1], 2, ll, &mut cursor),
            PoolChoice::Create
        );
        assert_eq!(
            choose_pool_queue(&[1, 0], 2, ll, &mut cursor),
            PoolChoice::Reuse(1)
        );
        assert_eq!(
            choose_pool_queue(&[3, 2], 2, ll, &mut cursor),
            PoolChoice::Reuse(1)
        );
        assert_eq!(
            choose_pool_queue(&[2, 2], 2, ll, &mut cursor),
            PoolChoice::Reuse(0)
        );
        // An idle queue is reused even when the pool is not full.
        assert_eq!(
            choose_pool_queue(&[0], 4, ll, &mut cursor),
            PoolChoice::Reuse(0)
        );
    }

    #[test]
    fn round_robin_cycles_through_the_pool() {
        let mut cursor = 0;
        let rr = PoolStrategy::RoundRobin;
        assert_eq!(
            choose_pool_queue(&[], 3, rr, &mut cursor),
            PoolChoice::Create
        );
        assert_eq!(
            choose_pool_queue(&[1], 3, rr, &mut cursor),
            PoolChoice::Create
        );
        assert_eq!(
            choose_pool_queue(&[1, 1], 3, rr, &mut cursor),
            PoolChoice::Create
        );
        assert_eq!(
            choose_pool_queue(&[1, 1, 1], 3, rr, &mut cursor),
            PoolChoice::Reuse(0)
        );
        // Round-robin ignores load: queue 1 is next even though queue 2 is idle.
        assert_eq!(
            choose_pool_queue(&[2, 1, 0], 3, rr, &mut cursor),
            PoolChoice::Reuse(1)
        );
        assert_eq!(
            choose_pool_queue(&[2, 2, 0], 3, rr, &mut cursor),
            PoolChoice::Reuse(2)
        );
    }

    #[test]
    fn a_pool_of_one_behaves_like_single() {
        let mut cursor = 0;
        for strategy in [PoolStrategy::LeastLoaded, PoolStrategy::RoundRobin] {
            assert_eq!(
                choose_pool_queue(&[5], 1, strategy, &mut cursor),
                PoolChoice::Reuse(0)
            );
        }
    }

    #[test]
    fn the_fallback_prefers_unmasked_then_same_priority_then_least_loaded() {
        let c = |priority, masked, load| Candidate {
            priority,
            masked,
            load,
        };
        let (high, normal) = (Priority::High, Priority::Normal);
        assert_eq!(choose_fallback(&[], normal), None);
        assert_eq!(
            choose_fallback(&[c(normal, false, 3), c(normal, false, 1)], normal),
            Some(1)
        );
        // Equal loads: the oldest.
        assert_eq!(
            choose_fallback(&[c(normal, false, 2), c(normal, false, 2)], normal),
            Some(0)
        );
        // The stream's priority before a lighter load.
        assert_eq!(
            choose_fallback(&[c(high, false, 0), c(normal, false, 9)], normal),
            Some(1)
        );
        // Any priority when none matches.
        assert_eq!(
            choose_fallback(&[c(high, false, 4), c(Priority::Low, false, 1)], normal),
            Some(1)
        );
        // A CU-masked queue only when nothing else is left.
        assert_eq!(
            choose_fallback(&[c(normal, true, 0), c(high, false, 7)], normal),
            Some(1)
        );
        assert_eq!(choose_fallback(&[c(high, true, 1)], normal), Some(0));
    }

    #[test]
    fn priorities_clamp_like_amd() {
        assert_eq!(Priority::from_hip(-7), Priority::High);
        assert_eq!(Priority::from_hip(-1), Priority::High);
        assert_eq!(Priority::from_hip(0), Priority::Normal);
        assert_eq!(Priority::from_hip(1), Priority::Low);
        assert_eq!(Priority::from_hip(9), Priority::Low);
        assert_eq!(Priority::from_hip(Priority::GREATEST).to_hip(), -1);
        assert_eq!(Priority::from_hip(Priority::LEAST).to_hip(), 1);
    }
}
