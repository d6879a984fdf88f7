//! The hardware queue slots on the virtual time line (`HSASIM_TIME=virtual`).
//!
//! Under virtual time a packet may start only while its queue holds an HQD slot in virtual
//! time; when that is comes from [`hsasim_sched::Timeline`], a pure function of the runlist and
//! the virtual times it changed at, so threaded and deterministic runs agree. The functional
//! run does not wait for slots at all (the host-time scheduler of `sched.rs` gates nothing
//! under virtual time): its turns follow the host's threads, and a queue holding a slot while
//! its finished packet waits for an earlier entry of an unmapped queue to commit would wait
//! for ever.
//!
//! The runlist is this process's queues, or, attached to a device service, every attached
//! process's queues as the service's table lists them: the process that changes the runlist
//! puts the update on the shared time line ([`hsasim_sched::VirtualRunlist`]) and the others
//! adopt it at their next submission. So processes take turns in virtual time as they would
//! on one GPU; each still places its dispatches on compute units of its own model (see the
//! guide's limits).

use hsasim_sched::{Device, Mapped, Member, Params, Timeline, TimelineCounters};
use hsasim_vtime::DeviceModel;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// The slots of this process's queues on the virtual time line.
pub struct VirtualSlots {
    inner: Mutex<Slots>,
}

struct Slots {
    timeline: Timeline,
    /// Queue address to (pid, queue id).
    queues: HashMap<u64, (u32, u64)>,
    /// The runlist without a device service.
    members: Vec<Member>,
    next_seq: u64,
    pid: u32,
    /// The device service whose runlist this one is, and the update last adopted from it.
    shared: Option<Arc<Device>>,
    seen: u64,
}

/// The scheduler's parameters the model's tables give: the HQDs the driver leaves to user
/// queues, its VMIDs, its costs.
pub fn params_of(model: &DeviceModel) -> Params {
    Params {
        slots: (model.hqd.pipes * model.hqd.queues_per_pipe)
            .saturating_sub(model.sched.driver_queues)
            .max(1),
        pipes: model.hqd.pipes,
        max_procs: model.vmids,
        quantum_ns: model.sched.quantum_ns,
        map_ns: model.sched.map_ns,
        unmap_ns: model.sched.unmap_ns,
        update_ns: model.sched.update_ns,
        ..Params::default()
    }
    .clamped()
}

impl VirtualSlots {
    /// Where a process joins a device service's time line: at its runlist's last update (a
    /// process of a long-lived service would otherwise wait for that update with its first
    /// packet). None without a service.
    pub fn joins_at(&self) -> Option<u64> {
        let inner = self.inner.lock();
        let device = inner.shared.as_ref()?;
        let open_ns = device.lock().virtual_runlist.open_ns;
        Some(open_ns)
    }

    /// Slots with `params`; `shared`: the device service whose runlist all attached processes
    /// share.
    pub fn new(params: Params, shared: Option<Arc<Device>>) -> VirtualSlots {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        VirtualSlots {
            inner: Mutex::new(Slots {
                timeline: Timeline::new(params),
                queues: HashMap::new(),
                members: Vec::new(),
                next_seq: 0,
                pid,
                shared,
                seen: 0,
            }),
        }
    }

    /// Queue `queue_id` (its `amd_queue_t` at `address`) joined the runlist at virtual time
    /// `at_ns`; entries numbered `after_seq` and later see the new runlist. Returns when the
    /// update ends.
    pub fn queue_created(
        &self,
        address: u64,
        queue_id: u64,
        priority: u32,
        at_ns: u64,
        after_seq: u64,
    ) -> u64 {
        let mut s = self.inner.lock();
        let pid = s.pid;
        s.queues.insert(address, (pid, queue_id));
        let seq = s.next_seq;
        s.next_seq += 1;
        s.members.push(Member {
            pid,
            queue_id,
            priority,
            proc_seq: 0,
            seq,
        });
        s.update(at_ns, after_seq, None)
    }

    /// The queue at `address` left the runlist (destroyed). Returns when the update ends.
    pub fn queue_removed(&self, address: u64, at_ns: u64, after_seq: u64) -> u64 {
        let mut s = self.inner.lock();
        let Some((pid, queue_id)) = s.queues.remove(&address) else {
            return at_ns;
        };
        s.members.retain(|m| m.queue_id != queue_id);
        s.update(at_ns, after_seq, Some((pid, queue_id)))
    }

    /// The queue at `address` got priority `priority`. Returns when the update ends.
    pub fn queue_priority(&self, address: u64, priority: u32, at_ns: u64, after_seq: u64) -> u64 {
        let mut s = self.inner.lock();
        let Some(&(_, queue_id)) = s.queues.get(&address) else {
            return at_ns;
        };
        let mut changed = false;
        for m in s.members.iter_mut().filter(|m| m.queue_id == queue_id) {
            changed |= m.priority != priority;
            m.priority = priority;
        }
        if changed {
            s.update(at_ns, after_seq, None)
        } else {
            at_ns
        }
    }

    /// Adopts the runlist another process of the device service put in place since the last
    /// look; entries numbered `after_seq` and later see it.
    pub fn sync(&self, after_seq: u64) {
        let mut s = self.inner.lock();
        let Some(device) = s.shared.clone() else {
            return;
        };
        let t = device.lock();
        let v = t.virtual_runlist;
        if v.generation != s.seen {
            let members = t.members();
            drop(t);
            s.timeline.adopt(v.begin_ns, v.open_ns, members, after_seq);
            s.seen = v.generation;
        }
    }

    /// When a packet of the queue at `address`, ready at `ready_ns` and numbered `seq`, starts:
    /// once its queue holds a slot.
    pub fn start(&self, address: u64, ready_ns: u64, seq: u64) -> u64 {
        let mut s = self.inner.lock();
        match s.queues.get(&address).copied() {
            Some((pid, queue_id)) => s.timeline.start(pid, queue_id, ready_ns, seq).at_ns,
            None => ready_ns,
        }
    }

    /// [`VirtualSlots::start`] as a guess, not counted.
    pub fn peek_start(&self, address: u64, ready_ns: u64, seq: u64) -> u64 {
        let s = self.inner.lock();
        match s.queues.get(&address).copied() {
            Some((pid, queue_id)) => s.timeline.peek_start(pid, queue_id, ready_ns, seq),
            None => ready_ns,
        }
    }

    /// No packet from entry `min_seq` on is ready before `horizon_ns`: the runlists before
    /// then are forgotten (their slots stay for traces).
    pub fn retire_before(&self, horizon_ns: u64, min_seq: u64) {
        self.inner
            .lock()
            .timeline
            .retire_before(horizon_ns, min_seq);
    }

    pub fn counters(&self) -> TimelineCounters {
        self.inner.lock().timeline.counters()
    }

    pub fn params(&self) -> Params {
        self.inner.lock().timeline.params()
    }

    /// The slots held up to `until_ns` (every queue of the runlist, this process's or not).
    pub fn mapped(&self, until_ns: u64) -> Vec<Mapped> {
        self.inner.lock().timeline.mapped(until_ns)
    }
}

impl Slots {
    /// A runlist change at `at_ns` by this process: `gone` is a queue leaving that the
    /// service's table may still list. Returns when the update ends.
    fn update(&mut self, at_ns: u64, after_seq: u64, gone: Option<(u32, u64)>) -> u64 {
        let Some(device) = self.shared.clone() else {
            let members = self.members.clone();
            return self.timeline.change(at_ns, members, after_seq);
        };
        // Under the table's lock: the update is placed after the last one any process made,
        // and the runlist it carries is the one every process adopts with it.
        let mut t = device.lock();
        let v = t.virtual_runlist;
        if v.generation != self.seen {
            let before: Vec<Member> = t.members();
            self.timeline
                .adopt(v.begin_ns, v.open_ns, before, after_seq);
        }
        let members: Vec<Member> = t
            .members()
            .into_iter()
            .filter(|m| Some((m.pid, m.queue_id)) != gone)
            .collect();
        let open = self.timeline.change(at_ns, members, after_seq);
        let begin = self.timeline.last_update().map_or(at_ns, |u| u.0);
        t.virtual_runlist = hsasim_sched::VirtualRunlist {
            generation: v.generation + 1,
            begin_ns: begin,
            open_ns: open,
        };
        self.seen = v.generation + 1;
        open
    }
}
