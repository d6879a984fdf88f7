//! The hardware queue scheduler in front of the packet processors (off unless configured).
//!
//! With `HSASIM_SCHED=1` this process gets a scheduler of its own (a private
//! [`hsasim_sched::Device`] and a thread that runs it); with `HSASIM_DEVICE_SERVICE=NAME` it
//! attaches to the one a device service runs (`hipshim device start --name NAME`), shared with
//! every other attached process. Either way each queue registers in the runlist with its pid,
//! queue id, doorbell offset and priority, and its packet processor starts a packet only while
//! the queue holds a hardware slot ([`QueueSlot::begin`]). The model is `hsasim_sched::model`.
//!
//! Off (the default), queues have no [`QueueSlot`] and the packet processor's only extra work
//! is testing that `Option`.
//!
//! What is shared with a device service is the scheduling, the device memory
//! ([`crate::device_memory`]), IPC signals ([`crate::ipc_signal`]) and the queues: each
//! queue's `amd_queue_t` block and ring are in the device memory and its doorbell is the
//! segment's doorbell cell of its runlist entry, which records where they are
//! ([`hsasim_sched::Hqd`]), so the service decides from the ring whether the queue has work.
//! Each process still executes its own packets on its own packet processors (their
//! kernarguments, code objects and host memory live in that process).

use crate::config::Config;
use crate::error::{HsaError, HsaResult};
use hsasim_sched::{event_json, now_ns, Device, Params};
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a packet processor waiting for a slot sleeps before it checks again that the
/// device service is still there.
const SLOT_WAIT: Duration = Duration::from_millis(50);

pub struct Scheduler {
    device: Arc<Device>,
    /// Runs the model in this process (private scheduler, threaded mode).
    thread: Mutex<Option<JoinHandle<()>>>,
    stopping: Arc<AtomicBool>,
    /// Deterministic mode with a private scheduler: no thread, the model runs when a packet
    /// asks for a slot.
    inline: bool,
    pid: u32,
    /// The log of map/unmap events (private scheduler, `HSASIM_SCHED_LOG`).
    log: Option<Arc<Mutex<std::fs::File>>>,
}

impl Scheduler {
    /// The scheduler `config` asks for, if any. Attaching to a device service that is not
    /// running is an error (`hsa_init` fails and says why).
    pub fn start(config: &Config) -> HsaResult<Option<Arc<Scheduler>>> {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        if let Some(name) = &config.device_service {
            let device = Device::open(name)
                .and_then(|d| {
                    if d.service_alive() {
                        Ok(d)
                    } else {
                        Err(format!(
                            "device service {name} (pid {}) is gone; start it again with `hipshim device start --name {name}`",
                            d.service_pid()
                        ))
                    }
                })
                .map_err(|why| {
                    tracing::error!(target: "hsasim", "HSASIM_DEVICE_SERVICE={name}: {why}");
                    eprintln!("hsasim: HSASIM_DEVICE_SERVICE={name}: {why}");
                    HsaError::GENERIC
                })?;
            let params = device.lock().params;
            tracing::info!(target: "hsasim::sched", name, service_pid = device.service_pid(), ?params, "attached to the device service");
            return Ok(Some(Arc::new(Scheduler {
                device: Arc::new(device),
                thread: Mutex::new(None),
                stopping: Arc::new(AtomicBool::new(false)),
                inline: false,
                pid,
                log: None,
            })));
        }
        let Some(params) = config.sched else {
            return Ok(None);
        };
        let device = Arc::new(Device::private(params).map_err(|e| {
            eprintln!("hsasim: cannot map the scheduler's table: {e}");
            HsaError::OUT_OF_RESOURCES
        })?);
        let log = match &config.sched_log {
            None => None,
            Some(path) => Some(Arc::new(Mutex::new(std::fs::File::create(path).map_err(
                |e| {
                    eprintln!("hsasim: HSASIM_SCHED_LOG={}: {e}", path.display());
                    HsaError::GENERIC
                },
            )?))),
        };
        let sched = Arc::new(Scheduler {
            device: device.clone(),
            thread: Mutex::new(None),
            stopping: Arc::new(AtomicBool::new(false)),
            inline: !config.threaded,
            pid,
            log: log.clone(),
        });
        tracing::info!(target: "hsasim::sched", ?params, "hardware scheduler model on (private)");
        if config.threaded {
            let stopping = sched.stopping.clone();
            let handle = std::thread::Builder::new()
                .name("hsasim-sched".into())
                .spawn(move || {
                    let params = device.lock().params;
                    device.run(false, &|| stopping.load(Ordering::SeqCst), &mut |events| {
                        write_events(log.as_deref(), events, &params)
                    });
                })
                .map_err(|_| HsaError::OUT_OF_RESOURCES)?;
            *sched.thread.lock() = Some(handle);
        }
        Ok(Some(sched))
    }

    /// Adds a queue to the runlist (`hqd`: where its ring, indices and doorbell are, for a
    /// queue of a device service).
    pub fn register(
        self: &Arc<Self>,
        queue_id: u64,
        doorbell_offset: u64,
        priority: u32,
        hqd: hsasim_sched::Hqd,
    ) -> HsaResult<QueueSlot> {
        let index = self
            .device
            .lock()
            .register_hardware_queue(self.pid, queue_id, doorbell_offset, priority, hqd)
            .map_err(|full| {
                tracing::error!(target: "hsasim::sched", ?full, "the runlist is full");
                HsaError::OUT_OF_RESOURCES
            })?;
        tracing::info!(target: "hsasim::sched", pid = self.pid, queue_id, doorbell_offset = format_args!("{doorbell_offset:#x}"), priority, "queue added to the runlist");
        self.device.kick();
        Ok(QueueSlot {
            sched: self.clone(),
            index,
            queue_id,
            waiting: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            checked_ns: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Stops the private scheduler thread, or leaves the shared runlist.
    pub fn shut_down(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.device.kick();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
        if self.device.name().is_some() {
            self.device.remove_process(self.pid);
            self.device.release_compute_units_of(self.pid);
            self.device.kick();
        }
    }

    /// The device service's segment, when attached to one (its device memory is there too).
    pub fn service(&self) -> Option<&Arc<Device>> {
        self.device.name().is_some().then_some(&self.device)
    }

    /// What the scheduler has done so far (for a shared one: all processes together).
    pub fn counters(&self) -> hsasim_sched::Counters {
        self.device.lock().counters
    }

    /// The runlist now: every queue of every attached process.
    pub fn runlist(&self) -> Vec<hsasim_sched::QueueEntry> {
        self.device.lock().live_queues().map(|(_, q)| *q).collect()
    }

    pub fn params(&self) -> Params {
        self.device.lock().params
    }

    fn step_inline(&self) {
        if self.inline {
            let (events, _) = self.device.step(now_ns(), false);
            let params = self.device.lock().params;
            write_events(self.log.as_deref(), &events, &params);
        }
    }
}

fn write_events(
    log: Option<&Mutex<std::fs::File>>,
    events: &[hsasim_sched::Event],
    params: &Params,
) {
    for e in events {
        tracing::debug!(target: "hsasim::sched", event = %event_json(e, params));
    }
    if let Some(log) = log {
        let mut f = log.lock();
        for e in events {
            let _ = writeln!(f, "{}", event_json(e, params));
        }
    }
}

/// A queue's place in the runlist.
pub struct QueueSlot {
    sched: Arc<Scheduler>,
    index: usize,
    queue_id: u64,
    /// The last `begin` found no slot.
    waiting: AtomicBool,
    /// The scheduler was told that this queue has work.
    pending: AtomicBool,
    /// When the service was last seen alive (deterministic mode checks it between packets).
    checked_ns: std::sync::atomic::AtomicU64,
}

impl QueueSlot {
    /// Whether the packet at the read index may start now (the queue holds a slot); if so,
    /// [`QueueSlot::end`] must follow when it is done.
    pub fn begin(&self) -> bool {
        self.sched.step_inline();
        self.pending.store(true, Ordering::Relaxed);
        let granted = self.sched.device.lock().begin_packet(self.index, now_ns());
        if !granted && !self.waiting.swap(true, Ordering::Relaxed) {
            self.sched.device.kick();
        }
        if granted {
            self.waiting.store(false, Ordering::Relaxed);
        }
        granted
    }

    pub fn end(&self) {
        if self.sched.device.lock().end_packet(self.index, now_ns()) {
            self.sched.device.kick();
        }
    }

    /// The ring ran empty: the queue stops asking for turns (matters with `skip_idle`).
    pub fn idle(&self) {
        if self.pending.swap(false, Ordering::Relaxed) {
            self.sched.device.lock().set_idle(self.index, now_ns());
            self.waiting.store(false, Ordering::Relaxed);
        }
    }

    /// Whether the device service this queue is scheduled by has gone (looked at no more than
    /// every 100 ms, so a packet pays a clock read; a private scheduler never goes).
    pub fn service_gone(&self) -> bool {
        if self.sched.device.name().is_none() {
            return false;
        }
        // A service that stops in order says so in the segment; one that was killed is found
        // by its pid.
        if self.sched.device.stop_requested() {
            return true;
        }
        let now = now_ns();
        if now.saturating_sub(self.checked_ns.load(Ordering::Relaxed)) < 100_000_000 {
            return false;
        }
        self.checked_ns.store(now, Ordering::Relaxed);
        !self.sched.device.service_alive()
    }

    /// Whether the last packet found no slot.
    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Sleeps until the mapping changes (or a while passes). False if the device service
    /// went away.
    pub fn wait(&self) -> bool {
        let seen = self.sched.device.generation();
        if self.sched.inline {
            std::thread::sleep(Duration::from_micros(200));
            return true;
        }
        if !self.begin_would_wait() {
            return true;
        }
        self.sched.device.wait_change(seen, SLOT_WAIT);
        self.sched.device.service_alive()
    }

    fn begin_would_wait(&self) -> bool {
        let t = self.sched.device.lock();
        let q = &t.queues[self.index];
        !(q.state() == hsasim_sched::QueueState::Mapped && q.evict == 0)
    }

    pub fn set_priority(&self, priority: u32) {
        self.sched.device.lock().set_priority(self.index, priority);
        self.sched.device.kick();
    }

    /// The device service this queue is scheduled by, for messages.
    pub fn service_name(&self) -> &str {
        self.sched.device.name().unwrap_or("(private)")
    }

    /// Where its doorbell's cell is: the device and the runlist index (the cell's index).
    pub fn doorbell_place(&self) -> (&Arc<Device>, usize) {
        (&self.sched.device, self.index)
    }

    /// Compute units for a dispatch of `workgroups` workgroups from the device service's
    /// budget, when it models one (`Ok(None)` when not: the dispatch runs as if alone).
    /// Waits while none is free; `Err` if `give_up()` holds meanwhile.
    pub fn compute_units(
        &self,
        workgroups: u64,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Option<CuLease<'_>>, GaveUp> {
        let device = &self.sched.device;
        if device.cu_budget() == 0 {
            return Ok(None);
        }
        let want = u32::try_from(workgroups).unwrap_or(u32::MAX);
        match device.take_compute_units(self.sched.pid, want, give_up) {
            Some(grant) => Ok(Some(CuLease { device, grant })),
            None => Err(GaveUp),
        }
    }
}

/// A dispatch stopped waiting for compute units ([`QueueSlot::compute_units`]).
#[derive(Debug)]
pub struct GaveUp;

/// Compute units a dispatch holds while it runs ([`QueueSlot::compute_units`]).
pub struct CuLease<'a> {
    device: &'a Device,
    grant: hsasim_sched::CuGrant,
}

impl CuLease<'_> {
    pub fn units(&self) -> u32 {
        self.grant.units
    }
}

impl Drop for CuLease<'_> {
    fn drop(&mut self) {
        self.device.give_back_compute_units(self.grant);
    }
}

impl Drop for QueueSlot {
    fn drop(&mut self) {
        // After this process left a shared runlist (shut-down) the entry may be another
        // process's queue by now: the device checks.
        self.sched
            .device
            .unregister_queue(self.index, self.sched.pid, self.queue_id);
        self.sched.device.kick();
    }
}
