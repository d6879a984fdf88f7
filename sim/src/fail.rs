//! Failing HSA calls on purpose (`HSASIM_FAIL`): chosen calls return the status ROCr returns
//! when that resource runs out, so a client's error paths can be tested without a machine
//! that runs out of it.
//!
//! Which calls fail is decided per call, in the order the failure points are reached: the
//! calls before `after` never fail, at most `count` fail, and each other one fails with
//! probability `p`, drawn from the call's number and `seed` (the same program making the
//! same calls in the same order fails the same calls on every run). Every failure is logged
//! (target `hsasim`, level warn: `HSASIM_LOG=warn`) naming the point and the call's number.

use crate::error::{HsaError, HsaResult};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A kind of HSA call that `HSASIM_FAIL` can make fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailPoint {
    /// `hsa_queue_create`: `OUT_OF_RESOURCES`, as ROCr when KFD refuses a queue.
    QueueCreate,
    /// `hsa_amd_memory_pool_allocate`, `hsa_memory_allocate`: `OUT_OF_RESOURCES`, as ROCr
    /// when the driver cannot back the allocation.
    PoolAllocate,
    /// `hsa_signal_create`, `hsa_amd_signal_create`: `OUT_OF_RESOURCES`.
    SignalCreate,
    /// `hsa_amd_memory_async_copy` (and `_on_engine`, `_rect`): `OUT_OF_RESOURCES`, as ROCr
    /// when it cannot get a blit queue or command space.
    AsyncCopy,
    /// `hsa_executable_load_agent_code_object`: `OUT_OF_RESOURCES`, as ROCr when it cannot
    /// allocate the code object's segments.
    ExecutableLoad,
    /// A new signal a CPU may wait on gets no interrupt event, as when the process's KFD
    /// events are all in use: ROCr then makes a polling signal, no error.
    InterruptSignal,
}

impl FailPoint {
    const ALL: [FailPoint; 6] = [
        FailPoint::QueueCreate,
        FailPoint::PoolAllocate,
        FailPoint::SignalCreate,
        FailPoint::AsyncCopy,
        FailPoint::ExecutableLoad,
        FailPoint::InterruptSignal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FailPoint::QueueCreate => "queue_create",
            FailPoint::PoolAllocate => "pool_allocate",
            FailPoint::SignalCreate => "signal_create",
            FailPoint::AsyncCopy => "async_copy",
            FailPoint::ExecutableLoad => "executable_load",
            FailPoint::InterruptSignal => "interrupt_signal",
        }
    }

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// What `HSASIM_FAIL` asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct FailPlan {
    /// [`FailPoint::bit`]s of the points that may fail.
    points: u32,
    /// Probability that an eligible call fails.
    pub p: f64,
    pub seed: u64,
    /// Calls at the chosen points that never fail, first.
    pub after: u64,
    /// Most failures made.
    pub count: u64,
}

/// The plan in `HSASIM_FAIL`'s own syntax, every part spelt out (for `hipshim info`).
impl std::fmt::Display for FailPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let points: Vec<&str> = FailPoint::ALL
            .iter()
            .filter(|point| self.points & point.bit() != 0)
            .map(|point| point.name())
            .collect();
        write!(
            f,
            "{}:p={}:seed={}:after={}",
            points.join(","),
            self.p,
            self.seed,
            self.after
        )?;
        if self.count != u64::MAX {
            write!(f, ":count={}", self.count)?;
        }
        Ok(())
    }
}

impl FailPlan {
    /// Parses `POINT[,POINT...][:p=P][:seed=N][:after=K][:count=N]`, POINT one of
    /// `queue_create`, `pool_allocate`, `signal_create`, `async_copy`, `executable_load`,
    /// `interrupt_signal` or `all`; `None` for anything else.
    pub fn parse(spec: &str) -> Option<FailPlan> {
        let mut parts = spec.trim().split(':');
        let mut plan = FailPlan {
            points: 0,
            p: 1.0,
            seed: 0,
            after: 0,
            count: u64::MAX,
        };
        for name in parts.next()?.split(',') {
            let name = name.trim();
            plan.points |= if name == "all" {
                FailPoint::ALL.iter().map(|p| p.bit()).fold(0, |a, b| a | b)
            } else {
                FailPoint::ALL.iter().find(|p| p.name() == name)?.bit()
            };
        }
        for option in parts {
            let (key, value) = option.split_once('=')?;
            let value = value.trim();
            match key.trim() {
                "p" => plan.p = value.parse().ok().filter(|p| (0.0..=1.0).contains(p))?,
                "seed" => plan.seed = value.parse().ok()?,
                "after" => plan.after = value.parse().ok()?,
                "count" => plan.count = value.parse().ok()?,
                _ => return None,
            }
        }
        Some(plan)
    }

    pub fn covers(&self, point: FailPoint) -> bool {
        self.points & point.bit() != 0
    }
}

static ARMED: AtomicBool = AtomicBool::new(false);
static PLAN: Mutex<Option<FailPlan>> = Mutex::new(None);
/// Calls made at the plan's points, and failures made, since it was armed.
static CALLS: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Arms `plan` (from `hsa_init`), or disarms.
pub fn arm(plan: Option<FailPlan>) {
    CALLS.store(0, Ordering::SeqCst);
    FAILED.store(0, Ordering::SeqCst);
    ARMED.store(plan.is_some(), Ordering::SeqCst);
    if let Some(plan) = &plan {
        tracing::warn!(target: "hsasim", ?plan, "HSASIM_FAIL: HSA calls will fail on purpose");
    }
    *PLAN.lock() = plan;
}

/// `Err` with the status ROCr returns for `point` when the armed plan makes this call fail.
#[inline]
pub fn check(point: FailPoint, call: &str) -> HsaResult {
    if !ARMED.load(Ordering::Relaxed) {
        return Ok(());
    }
    if should_fail(point, call) {
        Err(HsaError::OUT_OF_RESOURCES)
    } else {
        Ok(())
    }
}

/// True when the armed plan makes this call at `point` fail (and logs it).
#[cold]
pub fn should_fail(point: FailPoint, call: &str) -> bool {
    if !ARMED.load(Ordering::Relaxed) {
        return false;
    }
    let plan = PLAN.lock();
    let Some(plan) = plan.as_ref().filter(|plan| plan.covers(point)) else {
        return false;
    };
    let n = CALLS.fetch_add(1, Ordering::SeqCst);
    if n < plan.after || FAILED.load(Ordering::SeqCst) >= plan.count {
        return false;
    }
    // splitmix64 of (seed, call number): a uniform draw in [0, 1).
    let mut z = plan.seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let draw = (z >> 11) as f64 / (1u64 << 53) as f64;
    if draw >= plan.p {
        return false;
    }
    let failure = FAILED.fetch_add(1, Ordering::SeqCst) + 1;
    tracing::warn!(target: "hsasim", point = point.name(), call, call_number = n, failure, "HSASIM_FAIL: failing this call on purpose");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_points_and_options() {
        let plan =
            FailPlan::parse("queue_create,async_copy:p=0.25:seed=7:after=3:count=2").unwrap();
        assert!(plan.covers(FailPoint::QueueCreate) && plan.covers(FailPoint::AsyncCopy));
        assert!(!plan.covers(FailPoint::PoolAllocate));
        assert_eq!((plan.p, plan.seed, plan.after, plan.count), (0.25, 7, 3, 2));
        let all = FailPlan::parse("all").unwrap();
        assert!(FailPoint::ALL.iter().all(|&p| all.covers(p)));
        assert_eq!(all.p, 1.0);
        for bad in ["", "queue", "all:p=2", "all:p=x", "all:sed=1", "all:after"] {
            assert_eq!(FailPlan::parse(bad), None, "{bad:?}");
        }
    }
}
