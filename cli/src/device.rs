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
    Status(NameArg),
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
            let device = Device::open(&args.name)?;
            print!("{}", status_text(&device));
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

/// What `device status` prints.
pub fn status_text(device: &Device) -> String {
    use std::fmt::Write as _;
    let table = device.lock();
    let p = table.params;
    let c = table.counters;
    let (procs, queues) = table.population();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "device {} (service pid {}{})",
        device.name().unwrap_or("?"),
        device.service_pid(),
        if device.service_alive() { "" } else { ", gone" }
    );
    let _ = writeln!(
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
    );
    let _ = writeln!(
        out,
        "runlist: {procs} processes, {queues} queues{}",
        if table.oversubscribed() {
            " (oversubscribed)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "counters: slots_in_use={} max_slots_in_use={} runlist_updates={} oversubscribed_updates={} maps={} unmaps={} time_slices={} packets={} waits={} processes_reaped={} queues_registered={} queues_reaped={} work_from_doorbells={}",
        c.slots_in_use,
        c.max_slots_in_use,
        c.runlist_updates,
        c.oversubscribed_updates,
        c.maps,
        c.unmaps,
        c.time_slices,
        c.packets_started,
        c.waits,
        c.processes_reaped,
        c.queues_registered,
        c.queues_reaped,
        c.work_from_doorbells
    );
    drop(table);
    let m = device.memory();
    let mc = m.counters;
    let _ = writeln!(
        out,
        "memory: size={} used={} free={} base={:#x} allocations={} allocated={} freed={} reaped={} reaped_bytes={} refused={} ipc_attaches={} ipc_signals={}",
        m.size,
        m.used,
        m.size - m.used,
        m.base,
        m.allocations().len() - m.queue_memory().0,
        mc.allocations,
        mc.frees,
        mc.reaped,
        mc.reaped_bytes,
        mc.refused,
        mc.attaches,
        m.signals.iter().filter(|s| s.serial != 0).count()
    );
    let cu = device.cu_status();
    let _ = writeln!(
        out,
        "compute units: cu_budget={} cu_in_use={} cu_max_in_use={} cu_waits={} cu_reaped={}{}",
        cu.budget,
        cu.in_use,
        cu.max_in_use,
        cu.waits,
        cu.reaped,
        if cu.budget == 0 {
            " (not modelled)"
        } else {
            ""
        }
    );
    let (rings, ring_bytes) = m.queue_memory();
    let _ = writeln!(
        out,
        "queues: rings={rings} ring_bytes={ring_bytes} doorbells={} rings_allocated={} rings_freed={} rings_reaped={} ring_reaped_bytes={}",
        device.doorbells_in_use(),
        mc.queue_allocations,
        mc.queue_frees,
        mc.queue_reaped,
        mc.queue_reaped_bytes
    );
    drop(m);
    let table = device.lock();
    let mut rows: Vec<_> = table.live_queues().map(|(i, q)| (i, *q)).collect();
    drop(table);
    if queues > 0 {
        // Per queue, as a KFD HQD dump shows a hardware queue: the read and write indices
        // (CP_HQD_PQ_RPTR, _WPTR), the doorbell's value and where the ring is
        // (CP_HQD_PQ_BASE, its size), read from the device memory and the segment now.
        let _ = writeln!(
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
        );
        rows.sort_by_key(|(_, q)| (q.pid, q.queue_id));
        for (index, q) in rows {
            let hqd = match device.ring_state(index, &q.hqd) {
                Some((read, write, doorbell)) => [
                    read.to_string(),
                    write.to_string(),
                    doorbell.to_string(),
                    format!("{:#x}", q.hqd.ring_base),
                    q.hqd.ring_bytes.to_string(),
                ],
                None => std::array::from_fn(|_| "-".to_string()),
            };
            let (slot, pipe) = if q.slot >= 0 {
                (q.slot.to_string(), p.pipe_of(q.slot as u32).to_string())
            } else {
                ("-".into(), "-".into())
            };
            let [rptr, wptr, db_value, ring, ring_bytes] = hqd;
            let _ = writeln!(
                out,
                "{:>8} {:>9} {:>#9x} {:>8} {:>10} {:>5} {:>5} {rptr:>8} {wptr:>8} {db_value:>8} {ring:>16} {ring_bytes:>10}  {}",
                q.pid,
                q.queue_id,
                q.doorbell_offset,
                q.priority,
                q.state().label(),
                slot,
                pipe,
                if q.busy != 0 {
                    "running"
                } else if q.pending != 0 {
                    "ready"
                } else {
                    "idle"
                }
            );
        }
    }
    out
}
