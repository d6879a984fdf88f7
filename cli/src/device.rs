//! `hipshim device start|stop|status`: the device service several processes share one
//! simulated GPU's hardware queue scheduler and device memory through.
//!
//! `start` runs this program again as `hipshim device serve` in a session of its own, which
//! creates the shared segment (`/dev/shm/hsasim-device-NAME`) and the device memory
//! (`/dev/shm/hsasim-device-NAME.mem`), runs the scheduler and removes the queues and frees
//! the memory of processes that died; `start` returns once it is up. Programs attach with
//! `HSASIM_DEVICE_SERVICE=NAME`. Their queues' rings and indices are in the device memory
//! and their doorbells in the segment, where the service reads them to see which queues have
//! work, and `status` prints them as a KFD HQD dump would; each process still executes its
//! own packets on its own packet processors.

use crate::format::OutputFormat;
use amdhip64::trace::schema;
use hsasim_sched::{event_json, Device, Params};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const DEFAULT_NAME: &str = "default";

#[derive(clap::Subcommand)]
pub enum DeviceCommand {
    /// Start a device service (returns once it runs).
    Start(StartArgs),
    /// Stop a device service; attached processes' next packet fails.
    Stop(NameArg),
    /// The service's scheduler parameters, counters and runlist.
    Status(StatusArgs),
    /// Run the service in the foreground (what `start` runs).
    #[command(hide = true)]
    Serve(StartArgs),
}

#[derive(clap::Args, Clone, Debug)]
pub struct NameArg {
    /// The device's name (HSASIM_DEVICE_SERVICE=NAME attaches to it).
    #[arg(long, default_value = DEFAULT_NAME)]
    pub name: String,
}

/// The scheduler's parameters (defaults: see `hsasim_sched::Params`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SchedArgs {
    /// Hardware queue slots (HQDs) for user queues.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub slots: Option<u32>,
    /// Pipes the slots are split across.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub pipes: Option<u32>,
    /// Processes mapped at once (KFD's max_proc_per_quantum: hws_max_conc_proc capped by
    /// the VMIDs KFD owns, 8 by default).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_procs: Option<u32>,
    /// Time slice of an oversubscribed runlist, in microseconds.
    #[arg(long, value_name = "US")]
    pub quantum_us: Option<u64>,
    /// Cost of mapping a queue into a slot, in microseconds.
    #[arg(long, value_name = "US")]
    pub map_us: Option<u64>,
    /// Cost of unmapping (preempting) a queue, in microseconds.
    #[arg(long, value_name = "US")]
    pub unmap_us: Option<u64>,
    /// Cost of a runlist update, in microseconds.
    #[arg(long, value_name = "US")]
    pub update_us: Option<u64>,
    /// Runlist updates one at a time, each unmapping every queue (1, KFD's way) or all
    /// pending changes at once (0).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub serial_updates: Option<u32>,
    /// Time slices pass over queues with no work (1; a what-if).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub skip_idle: Option<u32>,
    /// Compute units the dispatches of all attached processes share: a dispatch holds up to
    /// one per workgroup while it runs and waits while none is free (0, the default: not
    /// modelled, every dispatch runs as if alone).
    #[arg(long, value_name = "CUS", value_parser = clap::value_parser!(u32).range(0..=4096))]
    pub cu_budget: Option<u32>,
}

impl SchedArgs {
    pub fn params(&self) -> Params {
        let d = Params::default();
        Params {
            slots: self.slots.unwrap_or(d.slots),
            pipes: self.pipes.unwrap_or(d.pipes),
            max_procs: self.max_procs.unwrap_or(d.max_procs),
            quantum_ns: self.quantum_us.map_or(d.quantum_ns, |us| us * 1000),
            map_ns: self.map_us.map_or(d.map_ns, |us| us * 1000),
            unmap_ns: self.unmap_us.map_or(d.unmap_ns, |us| us * 1000),
            update_ns: self.update_us.map_or(d.update_ns, |us| us * 1000),
            serial_updates: self.serial_updates.unwrap_or(d.serial_updates),
            skip_idle: self.skip_idle.unwrap_or(d.skip_idle),
            cu_budget: self.cu_budget.unwrap_or(d.cu_budget),
        }
        .clamped()
    }

    /// The same settings as command-line arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut put = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                out.push(format!("--{flag}={v}"));
            }
        };
        put("slots", self.slots.map(|v| v.to_string()));
        put("pipes", self.pipes.map(|v| v.to_string()));
        put("max-procs", self.max_procs.map(|v| v.to_string()));
        put("quantum-us", self.quantum_us.map(|v| v.to_string()));
        put("map-us", self.map_us.map(|v| v.to_string()));
        put("unmap-us", self.unmap_us.map(|v| v.to_string()));
        put("update-us", self.update_us.map(|v| v.to_string()));
        put("serial-updates", self.serial_updates.map(|v| v.to_string()));
        put("skip-idle", self.skip_idle.map(|v| v.to_string()));
        put("cu-budget", self.cu_budget.map(|v| v.to_string()));
        out
    }
}

#[derive(clap::Args, Clone, Debug)]
pub struct StartArgs {
    #[command(flatten)]
    pub name: NameArg,
    #[command(flatten)]
    pub sched: SchedArgs,
    /// The device memory every attached process allocates from (hsa_amd_memory_pool_allocate
    /// of the GPU's pool, hipMalloc): bytes, or with a K, M or G suffix. A sparse file: pages
    /// cost host memory only once touched.
    #[arg(long, value_name = "BYTES", default_value = "16G", value_parser = parse_bytes)]
    pub memory: u64,
    /// Write every map, unmap, runlist update and time slice to FILE, one JSON object a line
    /// (CLOCK_MONOTONIC ns; `hipshim trace merge --sched FILE` draws them).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

pub fn device(cmd: &DeviceCommand) -> Result<i32, String> {
    match cmd {
        DeviceCommand::Start(args) => start(args).map(|pid| {
            println!("device {} started (service pid {pid})", args.name.name);
            0
        }),
        DeviceCommand::Stop(args) => stop(args).map(|()| 0),
        DeviceCommand::Status(args) => {
            let device = Device::open(&args.name.name)?;
            let report = status(&device);
            match args.format.format {
                OutputFormat::Text => print!("{report}"),
                OutputFormat::Json => {
                    print!("{}", schema::document("device-status", report.to_json()))
                }
                OutputFormat::Csv => return Ok(crate::format::no_csv("device status")),
            }
            Ok(0)
        }
        DeviceCommand::Serve(args) => serve(args).map(|()| 0),
    }
}

/// Starts the service in the background; returns its pid once it is up.
pub fn start(args: &StartArgs) -> Result<u32, String> {
    hsasim_sched::device::check_name(&args.name.name)?;
    if let Ok(d) = Device::open(&args.name.name) {
        if d.service_alive() {
            return Err(format!(
                "device {} is already running (service pid {})",
                args.name.name,
                d.service_pid()
            ));
        }
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(["device", "serve", "--name", &args.name.name])
        .args(args.sched.to_args())
        .arg(format!("--memory={}", args.memory))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(log) = &args.log {
        cmd.arg("--log").arg(log);
    }
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe; the service leaves our session so that a
    // terminal's signals to this one do not stop it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        })
    };
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the service: {e}"))?;
    let pid = child.id();
    // Reap it when it ends, so it does not linger as a zombie of a long-lived caller.
    std::thread::spawn(move || child.wait());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(d) = Device::open(&args.name.name) {
            if d.service_pid() == pid {
                return Ok(pid);
            }
        }
        if !hsasim_sched::process_alive(pid) {
            return Err(format!(
                "the service for {} exited at start; run `hipshim device serve --name {}` to see why",
                args.name.name, args.name.name
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the service for {} did not come up",
                args.name.name
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stops a running service and waits for it to go.
pub fn stop(name: &NameArg) -> Result<(), String> {
    let device = Device::open(&name.name)?;
    let pid = device.service_pid();
    if !device.service_alive() {
        let _ = std::fs::remove_file(hsasim_sched::device::segment_path(&name.name));
        return Err(format!(
            "device {} was not running (its service {pid} had died); removed its segment",
            name.name
        ));
    }
    device.request_stop();
    let deadline = Instant::now() + Duration::from_secs(5);
    while hsasim_sched::process_alive(pid) {
        if Instant::now() > deadline {
            // SAFETY: sending SIGTERM to the service process we started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            return Err(format!(
                "device {}'s service {pid} did not stop in 5 s; sent SIGTERM",
                name.name
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// `16G`, `512M`, `4096`: a size in bytes, whole pages, at least one.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{s:?}: a size is digits with K, M, G or T after")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?}: a size is digits with K, M, G or T after"))?;
    let bytes = n
        .checked_mul(1 << shift)
        .filter(|b| *b <= 1 << 46)
        .ok_or_else(|| format!("{s:?}: at most 64T"))?;
    let page = hsasim_sched::memory::GRANULE;
    if bytes < page || bytes % page != 0 {
        return Err(format!(
            "{s:?}: a whole number of {page}-byte pages, at least one"
        ));
    }
    Ok(bytes)
}

static TERMINATED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_terminate(_: libc::c_int) {
    TERMINATED.store(true, Ordering::SeqCst);
}

fn serve(args: &StartArgs) -> Result<(), String> {
    let params = args.sched.params();
    let device = Device::create(&args.name.name, params, args.memory)?;
    let mut log = match &args.log {
        Some(path) => Some(
            std::fs::File::create(path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?,
        ),
        None => None,
    };
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            on_terminate as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            on_terminate as *const () as libc::sighandler_t,
        );
    }
    device.run(
        true,
        &|| device.stop_requested() || TERMINATED.load(Ordering::SeqCst),
        &mut |events| {
            if let Some(f) = log.as_mut() {
                for e in events {
                    let _ = writeln!(f, "{}", event_json(e, &params));
                }
            }
        },
    );
    // Attached processes see this before the segment goes (a signal ended the loop).
    device.request_stop();
    Ok(())
}

/// `device status --format ...`.
#[derive(clap::Args, Clone, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub name: NameArg,
    #[command(flatten)]
    pub format: crate::format::FormatArg,
}

/// One figure of a `key=value` line; JSON names it with its unit (`size` in bytes is
/// `size_bytes`).
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    pub name: &'static str,
    pub value: u64,
    pub unit: Option<&'static str>,
    /// An address: hexadecimal in the text.
    pub hex: bool,
}

const fn figure(name: &'static str, value: u64) -> Figure {
    Figure {
        name,
        value,
        unit: None,
        hex: false,
    }
}

const fn bytes(name: &'static str, value: u64) -> Figure {
    Figure {
        name,
        value,
        unit: Some("bytes"),
        hex: false,
    }
}

/// One runlist row, as a KFD HQD dump shows a hardware queue; the ring's fields are `None`
/// where the ring could not be read.
#[derive(Clone, Debug)]
pub struct QueueStatus {
    pub pid: u32,
    pub queue_id: u64,
    pub doorbell_offset: u64,
    pub priority: u32,
    pub state: &'static str,
    pub slot: Option<u32>,
    pub pipe: Option<u32>,
    /// (rptr, wptr, doorbell value, ring base, ring bytes).
    pub ring: Option<(u64, u64, i64, u64, u64)>,
    pub work: &'static str,
}

/// What `device status` reports: one model, rendered as text or a `hipshim.device-status`
/// document.
pub struct Status {
    pub name: String,
    pub service_pid: u32,
    pub service_alive: bool,
    pub params: Params,
    pub processes: usize,
    pub queues: usize,
    pub oversubscribed: bool,
    /// The `key=value` lines: counters, memory, compute units, queue memory.
    pub counters: Vec<Figure>,
    pub memory: Vec<Figure>,
    pub compute_units: Vec<Figure>,
    pub queue_memory: Vec<Figure>,
    pub rows: Vec<QueueStatus>,
}

pub fn status(device: &Device) -> Status {
    let table = device.lock();
    let params = table.params;
    let c = table.counters;
    let (processes, queues) = table.population();
    let oversubscribed = table.oversubscribed();
    let mut live: Vec<_> = table.live_queues().map(|(i, q)| (i, *q)).collect();
    drop(table);
    let counters = vec![
        figure("slots_in_use", c.slots_in_use),
        figure("max_slots_in_use", c.max_slots_in_use),
        figure("runlist_updates", c.runlist_updates),
        figure("oversubscribed_updates", c.oversubscribed_updates),
        figure("maps", c.maps),
        figure("unmaps", c.unmaps),
        figure("time_slices", c.time_slices),
        figure("packets", c.packets_started),
        figure("waits", c.waits),
        figure("processes_reaped", c.processes_reaped),
        figure("queues_registered", c.queues_registered),
        figure("queues_reaped", c.queues_reaped),
        figure("work_from_doorbells", c.work_from_doorbells),
    ];
    let m = device.memory();
    let mc = m.counters;
    let (rings, ring_bytes) = m.queue_memory();
    let memory = vec![
        bytes("size", m.size),
        bytes("used", m.used),
        bytes("free", m.size - m.used),
        Figure {
            hex: true,
            ..figure("base", m.base)
        },
        figure(
            "allocations",
            (m.allocations().len() - m.queue_memory().0) as u64,
        ),
        figure("allocated", mc.allocations),
        figure("freed", mc.frees),
        figure("reaped", mc.reaped),
        figure("reaped_bytes", mc.reaped_bytes),
        figure("refused", mc.refused),
        figure("ipc_attaches", mc.attaches),
        figure(
            "ipc_signals",
            m.signals.iter().filter(|s| s.serial != 0).count() as u64,
        ),
    ];
    let queue_memory = vec![
        figure("rings", rings as u64),
        figure("ring_bytes", ring_bytes),
        figure("doorbells", device.doorbells_in_use() as u64),
        figure("rings_allocated", mc.queue_allocations),
        figure("rings_freed", mc.queue_frees),
        figure("rings_reaped", mc.queue_reaped),
        figure("ring_reaped_bytes", mc.queue_reaped_bytes),
    ];
    drop(m);
    let cu = device.cu_status();
    let compute_units = vec![
        figure("cu_budget", cu.budget.into()),
        figure("cu_in_use", cu.in_use.into()),
        figure("cu_max_in_use", cu.max_in_use.into()),
        figure("cu_waits", cu.waits),
        figure("cu_reaped", cu.reaped),
    ];
    live.sort_by_key(|(_, q)| (q.pid, q.queue_id));
    let rows = live
        .into_iter()
        .map(|(index, q)| {
            let slot = u32::try_from(q.slot).ok();
            QueueStatus {
                pid: q.pid,
                queue_id: q.queue_id,
                doorbell_offset: q.doorbell_offset,
                priority: q.priority,
                state: q.state().label(),
                slot,
                pipe: slot.map(|s| params.pipe_of(s)),
                ring: device
                    .ring_state(index, &q.hqd)
                    .map(|(read, write, db)| (read, write, db, q.hqd.ring_base, q.hqd.ring_bytes)),
                work: if q.busy != 0 {
                    "running"
                } else if q.pending != 0 {
                    "ready"
                } else {
                    "idle"
                },
            }
        })
        .collect();
    Status {
        name: device.name().unwrap_or("?").to_string(),
        service_pid: device.service_pid(),
        service_alive: device.service_alive(),
        params,
        processes,
        queues,
        oversubscribed,
        counters,
        memory,
        compute_units,
        queue_memory,
        rows,
    }
}

impl Status {
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let figures = |list: &[Figure]| -> Value {
            let mut map = Map::new();
            for f in list {
                let name = match f.unit {
                    Some(unit) if !f.name.ends_with(unit) => format!("{}_{unit}", f.name),
                    _ => f.name.to_string(),
                };
                map.insert(name, Value::from(f.value));
            }
            Value::Object(map)
        };
        let p = &self.params;
        let queues: Vec<Value> = self
            .rows
            .iter()
            .map(|q| {
                let (rptr, wptr, db_value, ring_base, ring_bytes) = match q.ring {
                    Some((r, w, d, b, n)) => (json!(r), json!(w), json!(d), json!(b), json!(n)),
                    None => (
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                    ),
                };
                json!({
                    "pid": q.pid,
                    "queue_id": q.queue_id,
                    "doorbell_offset": q.doorbell_offset,
                    "priority": q.priority,
                    "state": q.state,
                    "slot": q.slot,
                    "pipe": q.pipe,
                    "rptr": rptr,
                    "wptr": wptr,
                    "doorbell_value": db_value,
                    "ring_base": ring_base,
                    "ring_bytes": ring_bytes,
                    "work": q.work,
                })
            })
            .collect();
        json!({
            "device": self.name,
            "service_pid": self.service_pid,
            "service_alive": self.service_alive,
            "scheduler": {
                "slots": p.slots,
                "pipes": p.pipes,
                "max_procs": p.max_procs,
                "quantum_ns": p.quantum_ns,
                "map_ns": p.map_ns,
                "unmap_ns": p.unmap_ns,
                "update_ns": p.update_ns,
                "serial_updates": p.serial_updates != 0,
                "skip_idle": p.skip_idle != 0,
                "cu_budget": p.cu_budget,
            },
            "runlist": {
                "processes": self.processes,
                "queues": self.queues,
                "oversubscribed": self.oversubscribed,
            },
            "counters": figures(&self.counters),
            "memory": figures(&self.memory),
            "compute_units": figures(&self.compute_units),
            "queue_memory": figures(&self.queue_memory),
            "queues": queues,
        })
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = |out: &mut std::fmt::Formatter<'_>, title: &str, list: &[Figure], tail: &str| {
            let fields: Vec<String> = list
                .iter()
                .map(|f| {
                    if f.hex {
                        format!("{}={:#x}", f.name, f.value)
                    } else {
                        format!("{}={}", f.name, f.value)
                    }
                })
                .collect();
            writeln!(out, "{title}: {}{tail}", fields.join(" "))
        };
        let p = self.params;
        writeln!(
            out,
            "device {} (service pid {}{})",
            self.name,
            self.service_pid,
            if self.service_alive { "" } else { ", gone" }
        )?;
        writeln!(
            out,
            "scheduler: {} slots on {} pipes, {} processes per quantum, quantum {} us, map {} us, unmap {} us, runlist update {} us{}{}",
            p.slots,
            p.pipes,
            p.max_procs,
            p.quantum_ns / 1000,
            p.map_ns / 1000,
            p.unmap_ns / 1000,
            p.update_ns / 1000,
            if p.serial_updates != 0 { ", updates serialised" } else { "" },
            if p.skip_idle != 0 { ", idle queues skipped" } else { "" },
        )?;
        writeln!(
            out,
            "runlist: {} processes, {} queues{}",
            self.processes,
            self.queues,
            if self.oversubscribed {
                " (oversubscribed)"
            } else {
                ""
            }
        )?;
        line(out, "counters", &self.counters, "")?;
        line(out, "memory", &self.memory, "")?;
        let not_modelled = if self.compute_units[0].value == 0 {
            " (not modelled)"
        } else {
            ""
        };
        line(out, "compute units", &self.compute_units, not_modelled)?;
        line(out, "queues", &self.queue_memory, "")?;
        if self.queues > 0 {
            // Per queue, as a KFD HQD dump shows a hardware queue: the read and write indices
            // (CP_HQD_PQ_RPTR, _WPTR), the doorbell's value and where the ring is
            // (CP_HQD_PQ_BASE, its size), read from the device memory and the segment now.
            writeln!(
                out,
                "{:>8} {:>9} {:>9} {:>8} {:>10} {:>5} {:>5} {:>8} {:>8} {:>8} {:>16} {:>10}  work",
                "pid",
                "queue_id",
                "doorbell",
                "priority",
                "state",
                "slot",
                "pipe",
                "rptr",
                "wptr",
                "db_value",
                "ring",
                "ring_bytes"
            )?;
            let dash = |v: Option<u32>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
            for q in &self.rows {
                let [rptr, wptr, db_value, ring, ring_bytes] = match q.ring {
                    Some((read, write, doorbell, base, bytes)) => [
                        read.to_string(),
                        write.to_string(),
                        doorbell.to_string(),
                        format!("{base:#x}"),
                        bytes.to_string(),
                    ],
                    None => std::array::from_fn(|_| "-".to_string()),
                };
                writeln!(
                    out,
                    "{:>8} {:>9} {:>#9x} {:>8} {:>10} {:>5} {:>5} {rptr:>8} {wptr:>8} {db_value:>8} {ring:>16} {ring_bytes:>10}  {}",
                    q.pid,
                    q.queue_id,
                    q.doorbell_offset,
                    q.priority,
                    q.state,
                    dash(q.slot),
                    dash(q.pipe),
                    q.work
                )?;
            }
        }
        Ok(())
    }
}
