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

use crate::error::HipResult;
use crate::hsa::queue::Queue;
use crate::runtime::device::{runtime_error, Device};
use hsa_abi::*;
use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;

/// How a pool picks among its queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolStrategy {
    /// An idle queue, else a new one while the pool is not full, else the least-loaded.
    LeastLoaded,
    /// Queue `k mod N` for the k-th assignment.
    RoundRobin,
}

/// The configured policy (parsed from `HIPSHIM_QUEUE_POLICY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    Dedicated,
    Single,
    Pool { size: u32, strategy: PoolStrategy },
}

impl PolicySpec {
    pub const DEFAULT_POOL: u32 = 4;
    pub const MAX_POOL: u32 = 1024;
    /// The accepted forms, for the message about a malformed value.
    pub const ACCEPTED: &'static str =
        "dedicated | single | pool | pool:N | pool:N:rr | pool:N:ll (N from 1 to 1024)";

    /// A least-loaded pool of `size` queues per priority.
    pub const fn pool(size: u32) -> PolicySpec {
        PolicySpec::Pool {
            size,
            strategy: PoolStrategy::LeastLoaded,
        }
    }

    /// Parses a policy; a pool without a size gets `default_pool`. `None` if malformed.
    pub fn parse(text: &str, default_pool: u32) -> Option<PolicySpec> {
        let text = text.trim().to_ascii_lowercase();
        let mut parts = text.split(':');
        match parts.next()? {
            "dedicated" if parts.next().is_none() => Some(PolicySpec::Dedicated),
            "single" if parts.next().is_none() => Some(PolicySpec::Single),
            "pool" => {
                let (mut size, mut strategy) = (None, None);
                for part in parts {
                    match part {
                        "rr" if strategy.is_none() => strategy = Some(PoolStrategy::RoundRobin),
                        "ll" if strategy.is_none() => strategy = Some(PoolStrategy::LeastLoaded),
                        n if size.is_none() && strategy.is_none() => {
                            let n: u32 = n.parse().ok()?;
                            if !(1..=Self::MAX_POOL).contains(&n) {
                                return None;
                            }
                            size = Some(n);
                        }
                        _ => return None,
                    }
                }
                Some(PolicySpec::Pool {
                    size: size.unwrap_or(default_pool),
                    strategy: strategy.unwrap_or(PoolStrategy::LeastLoaded),
                })
            }
            _ => None,
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Dedicated => f.write_str("dedicated"),
            PolicySpec::Single => f.write_str("single"),
            PolicySpec::Pool {
                size,
                strategy: PoolStrategy::LeastLoaded,
            } => write!(f, "pool:{size}"),
            PolicySpec::Pool {
                size,
                strategy: PoolStrategy::RoundRobin,
            } => write!(f, "pool:{size}:rr"),
        }
    }
}

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

pub struct QueuePolicy {
    pub spec: PolicySpec,
    queue_size: u32,
    /// Queues the policy shares between streams. Locked only while assigning (which may
    /// create a queue: milliseconds on ROCr, once per queue); never on the launch path.
    shared: Mutex<Shared>,
}

#[derive(Default)]
struct Shared {
    single: Option<Arc<Queue>>,
    /// Pool queues per priority level (high, normal, low), in creation order.
    pools: [Vec<Arc<Queue>>; 3],
    cursors: [usize; 3],
}

impl QueuePolicy {
    pub fn new(spec: PolicySpec, queue_size: u32) -> QueuePolicy {
        QueuePolicy {
            spec,
            queue_size,
            shared: Mutex::new(Shared::default()),
        }
    }

    /// The queue a stream of `device` should use (the stream keeps the `Arc` while it uses
    /// the queue; the number of such holders is the queue's load).
    pub fn queue_for(&self, device: &Device, request: &QueueRequest) -> HipResult<Arc<Queue>> {
        if let Some(mask) = request.cu_mask {
            let queue = self.create(
                device,
                request.priority,
                Some(mask),
                "private queue for a CU-masked stream",
            )?;
            self.log(
                device,
                request,
                &queue,
                "private queue for a CU-masked stream",
            );
            return Ok(queue);
        }
        match self.spec {
            PolicySpec::Dedicated => {
                let queue = self.create(device, request.priority, None, "dedicated queue")?;
                self.log(device, request, &queue, "dedicated queue");
                Ok(queue)
            }
            PolicySpec::Single => {
                let mut shared = self.shared.lock();
                if let Some(queue) = &shared.single {
                    let queue = queue.clone();
                    drop(shared);
                    self.log(device, request, &queue, "the device's single queue");
                    return Ok(queue);
                }
                let queue =
                    self.create(device, Priority::Normal, None, "the device's single queue")?;
                shared.single = Some(queue.clone());
                drop(shared);
                self.log(
                    device,
                    request,
                    &queue,
                    "the device's single queue (created)",
                );
                Ok(queue)
            }
            PolicySpec::Pool { size, strategy } => {
                let level = request.priority.index();
                let mut shared = self.shared.lock();
                let shared = &mut *shared;
                let pool = &mut shared.pools[level];
                let loads: Vec<usize> = pool.iter().map(|q| Arc::strong_count(q) - 1).collect();
                let choice =
                    choose_pool_queue(&loads, size as usize, strategy, &mut shared.cursors[level]);
                let (queue, reason) = match choice {
                    PoolChoice::Reuse(i) => (pool[i].clone(), "shared pool queue"),
                    PoolChoice::Create => {
                        let queue =
                            self.create(device, request.priority, None, "new pool queue")?;
                        pool.push(queue.clone());
                        (queue, "new pool queue")
                    }
                };
                let load = Arc::strong_count(&queue) - 1;
                if crate::trace::recording() {
                    crate::trace::record::stream_assigned(
                        request.stream,
                        queue.id,
                        device.index as u32,
                        reason,
                    );
                }
                tracing::info!(
                    target: "hipshim::policy",
                    device = device.index,
                    stream = %request.stream,
                    queue = queue.id,
                    policy = %self.spec,
                    priority = ?request.priority,
                    streams_on_queue = load,
                    "stream assigned to queue: {reason}"
                );
                Ok(queue)
            }
        }
    }

    fn log(&self, device: &Device, request: &QueueRequest, queue: &Queue, reason: &str) {
        if crate::trace::recording() {
            crate::trace::record::stream_assigned(
                request.stream,
                queue.id,
                device.index as u32,
                reason,
            );
        }
        tracing::info!(
            target: "hipshim::policy",
            device = device.index,
            stream = %request.stream,
            queue = queue.id,
            policy = %self.spec,
            priority = ?request.priority,
            "stream assigned to queue: {reason}"
        );
    }

    fn create(
        &self,
        device: &Device,
        priority: Priority,
        cu_mask: Option<&[u32]>,
        reason: &'static str,
    ) -> HipResult<Arc<Queue>> {
        let queue = Queue::create(
            device.api,
            device.agent,
            device.index as u32,
            self.queue_size,
            device.kernarg_pool,
        )
        .map_err(runtime_error)?;
        // Events read completion timestamps from marker packets; without profiling ROCr
        // does not write them.
        if let Err(e) = queue.enable_profiling() {
            tracing::warn!(queue = queue.id, error = %e, "queue profiling unavailable; event timings will read 0");
        }
        if priority != Priority::Normal {
            queue.set_priority(priority.hsa()).map_err(runtime_error)?;
        }
        if let Some(mask) = cu_mask {
            queue.set_cu_mask(mask).map_err(runtime_error)?;
        }
        tracing::info!(
            target: "hipshim::policy",
            device = device.index,
            queue = queue.id,
            size = self.queue_size,
            policy = %self.spec,
            ?priority,
            cu_masked = cu_mask.is_some(),
            "queue created: {reason}"
        );
        if crate::trace::recording() {
            crate::trace::record::queue_created(
                queue.id,
                device.index as u32,
                self.queue_size,
                reason,
            );
        }
        Ok(Arc::new(queue))
    }

    /// Stops handing out `queue` (it failed); streams that use it get a new one next time.
    pub fn retire(&self, queue: &Arc<Queue>) {
        let mut shared = self.shared.lock();
        if shared
            .single
            .as_ref()
            .is_some_and(|q| Arc::ptr_eq(q, queue))
        {
            shared.single = None;
        }
        for pool in &mut shared.pools {
            pool.retain(|q| !Arc::ptr_eq(q, queue));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_in_every_accepted_form() {
        assert_eq!(
            PolicySpec::parse("dedicated", 4),
            Some(PolicySpec::Dedicated)
        );
        assert_eq!(PolicySpec::parse(" Single ", 4), Some(PolicySpec::Single));
        assert_eq!(PolicySpec::parse("pool", 6), Some(PolicySpec::pool(6)));
        assert_eq!(PolicySpec::parse("pool:8", 4), Some(PolicySpec::pool(8)));
        assert_eq!(PolicySpec::parse("pool:8:ll", 4), Some(PolicySpec::pool(8)));
        assert_eq!(
            PolicySpec::parse("pool:2:rr", 4),
            Some(PolicySpec::Pool {
                size: 2,
                strategy: PoolStrategy::RoundRobin
            })
        );
        assert_eq!(
            PolicySpec::parse("pool:rr", 3),
            Some(PolicySpec::Pool {
                size: 3,
                strategy: PoolStrategy::RoundRobin
            })
        );
    }

    #[test]
    fn malformed_policies_are_rejected() {
        for bad in [
            "",
            "pool:0",
            "pool:1025",
            "pool:x",
            "pool:4:rr:2",
            "pool:rr:4",
            "single:2",
            "many",
            "dedicated:",
            "pool:4:fifo",
        ] {
            assert_eq!(PolicySpec::parse(bad, 4), None, "{bad:?}");
        }
    }

    #[test]
    fn policies_print_as_they_parse() {
        for text in ["dedicated", "single", "pool:4", "pool:2:rr"] {
            assert_eq!(PolicySpec::parse(text, 4).unwrap().to_string(), text);
        }
    }

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
