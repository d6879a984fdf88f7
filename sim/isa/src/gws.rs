//! The Global Wave Sync unit of a cooperative queue: 64 barrier resources shared by every
//! wave of the dispatches the queue runs, which `ds_gws_init` and `ds_gws_barrier` use.
//!
//! ## How hsasim reads the manual (CDNA2/CDNA3 ISA, DS_GWS_INIT / DS_GWS_BARRIER)
//! The resource is `offset[5:0] + M0[21:16]` (mod 64) and the value is the data VGPR of the
//! first active lane (lane 0 when EXEC is 0). A barrier resource holds a count: a phase
//! releases when count + 1 waves have arrived, all of them together. `ds_gws_init` sets the
//! count; the last wave to arrive reloads it from its own value, so the next phase expects
//! what the barrier instruction says (`__ockl_grid_sync` passes "workgroups - 1" to both,
//! and AMD's CLR runs `ds_gws_init(workgroups - 1)` in a dispatch of its own before every
//! cooperative launch).
//!
//! One addition, for runtimes that do not initialise the unit: a resource that no
//! `ds_gws_init` has set since the queue was created counts each phase from the value of
//! the first wave to arrive in it. A runtime that does initialise sees the manual's
//! behaviour exactly.
//!
//! The state lives with the queue (the hardware's lives with the queue's GWS allocation)
//! so an initialisation dispatch prepares the next one. Arrivals left by a dispatch that
//! stopped on an error are dropped when the next cooperative dispatch starts.

use crate::api::DispatchError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Barrier resources of one GWS unit (the resource id has 6 bits).
pub const GWS_RESOURCES: usize = 64;

/// What a `ds_gws_*` instruction asks of the unit; the scheduler carries it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GwsRequest {
    pub op: GwsOp,
    pub resource: u8,
    pub value: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GwsOp {
    #[default]
    Init,
    Barrier,
}

#[derive(Clone, Copy, Default)]
struct Resource {
    /// Set by `ds_gws_init`: `count` is the manual's counter.
    initialised: bool,
    /// Waves this phase waits for, minus one.
    count: u32,
    /// The current phase has arrivals (an uninitialised resource fixed `count` with the first).
    open: bool,
    arrived: u32,
}

/// One queue's GWS unit. Dispatches on it run one at a time.
pub struct Gws {
    state: Mutex<GwsState>,
    /// Notified when a phase releases, a worker finishes or the dispatch stops.
    changed: Condvar,
    /// Phase number of each resource, read without the lock by waves checking whether the
    /// phase they wait in has released.
    generation: [AtomicU64; GWS_RESOURCES],
    busy: AtomicBool,
}

pub(crate) struct GwsState {
    resources: [Resource; GWS_RESOURCES],
    /// Host workers of the running dispatch that still have work.
    pub(crate) working: usize,
    /// Workers asleep with nothing to run but waves waiting here, counted only while no
    /// phase has released since they looked (a release may have woken their waves).
    pub(crate) idle: usize,
    /// Bumped by every release.
    pub(crate) epoch: u64,
}

/// The outcome of a wave's arrival.
pub(crate) enum Arrival {
    /// It was the last one: the phase released and the wave goes on.
    Released,
    /// It waits until the resource's generation moves past this one.
    Wait(u64),
}

impl Default for Gws {
    fn default() -> Self {
        Gws::new()
    }
}

impl Gws {
    pub fn new() -> Gws {
        Gws {
            state: Mutex::new(GwsState {
                resources: [Resource::default(); GWS_RESOURCES],
                working: 0,
                idle: 0,
                epoch: 0,
            }),
            changed: Condvar::new(),
            generation: std::array::from_fn(|_| AtomicU64::new(0)),
            busy: AtomicBool::new(false),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, GwsState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Claims the unit for one dispatch run by `workers` host threads; an error if another
    /// dispatch holds it (a queue runs one packet at a time, so only misuse gets here).
    pub(crate) fn begin(&self, workers: usize) -> Result<GwsSession<'_>, DispatchError> {
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(DispatchError::InvalidDispatch(
                "the queue's GWS unit is in use by another dispatch".into(),
            ));
        }
        let mut s = self.lock();
        for r in &mut s.resources {
            r.arrived = 0;
            r.open = false;
        }
        s.working = workers;
        s.idle = 0;
        Ok(GwsSession(self))
    }

    pub(crate) fn generation(&self, resource: u8) -> u64 {
        self.generation[resource as usize % GWS_RESOURCES].load(Ordering::Acquire)
    }

    pub(crate) fn init(&self, resource: u8, value: u32) {
        let mut s = self.lock();
        s.resources[resource as usize % GWS_RESOURCES] = Resource {
            initialised: true,
            count: value,
            open: false,
            arrived: 0,
        };
    }

    pub(crate) fn arrive(&self, resource: u8, value: u32) -> Arrival {
        let r_id = resource as usize % GWS_RESOURCES;
        let mut s = self.lock();
        let r = &mut s.resources[r_id];
        if !r.open && !r.initialised {
            r.count = value;
        }
        r.open = true;
        r.arrived += 1;
        if r.arrived <= r.count {
            return Arrival::Wait(self.generation[r_id].load(Ordering::Acquire));
        }
        r.arrived = 0;
        r.open = false;
        if r.initialised {
            r.count = value;
        }
        self.generation[r_id].fetch_add(1, Ordering::AcqRel);
        s.epoch += 1;
        s.idle = 0;
        drop(s);
        self.changed.notify_all();
        Arrival::Released
    }

    /// (arrived, expected) of the resource's open phase, for error messages.
    pub(crate) fn phase(&self, resource: u8) -> (u32, u64) {
        let s = self.lock();
        let r = &s.resources[resource as usize % GWS_RESOURCES];
        (r.arrived, r.count as u64 + 1)
    }

    /// Waits for a change (release, stop, a worker finishing), at most `limit`.
    pub(crate) fn wait<'a>(
        &'a self,
        guard: MutexGuard<'a, GwsState>,
        limit: Duration,
    ) -> MutexGuard<'a, GwsState> {
        match self.changed.wait_timeout(guard, limit) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }

    pub(crate) fn notify(&self) {
        self.changed.notify_all();
    }
}

/// The unit held by one dispatch; dropping it frees the unit.
pub(crate) struct GwsSession<'a>(pub(crate) &'a Gws);

impl Drop for GwsSession<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}
