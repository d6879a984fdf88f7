//! The hardware scheduler model in one process (`HSASIM_SCHED=1`): queues beyond the slots
//! still complete their work, by turns; ids and doorbell offsets follow
//! `HSASIM_QUEUE_ID_BASE`; with the model off nothing is registered anywhere; attached to a
//! device service, a queue's block and ring are in the service's memory and its doorbell in
//! the segment, where another mapping reads its indices.
//!
//! hsasim reads its configuration once, at `hsa_init`, so each case runs this test binary
//! again as a child process (the `child` test) with its environment, in threaded and
//! deterministic mode.
mod common;
use common::*;
use std::process::Command;
use std::sync::atomic::Ordering;

const CASE: &str = "HSASIM_SCHED_TEST_CASE";

fn run_child(case: &str, env: &[(&str, &str)]) {
    run_child_output(case, env);
}

/// [`run_child`], returning each mode's standard output (threaded, then deterministic).
fn run_child_output(case: &str, env: &[(&str, &str)]) -> Vec<String> {
    let mut outputs = Vec::new();
    for threads in ["1", "0"] {
        let exe = std::env::current_exe().expect("test executable path");
        let mut cmd = Command::new(exe);
        cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
            .env(CASE, case)
            .env("HSASIM_THREADS", threads)
            .env_remove("HSASIM_SCHED")
            .env_remove("HSASIM_DEVICE_SERVICE")
            .env_remove("HSASIM_QUEUE_ID_BASE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run the child");
        assert!(
            out.status.success(),
            "case {case}, HSASIM_THREADS={threads}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    outputs
}

/// The `NAME=VALUE` a child printed.
fn printed(output: &str, name: &str) -> u64 {
    let key = format!("{name}=");
    output
        .lines()
        .find_map(|l| l.split_once(&key))
        .and_then(|(_, v)| {
            let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or_else(|| panic!("no {name} in {output}"))
}

/// Under virtual time three queues on one HQD slot take turns of a quantum on the virtual
/// time line: the last queue's packets start two turns (two quanta and two switches, an
/// unmap and a map each) after the runlist is in place, where with a slot for every queue
/// they start once submitted, a few microseconds after it (the host's submissions and the
/// doorbell's latency, well under 20 µs); and a run says so the same in threaded and
/// deterministic mode.
#[test]
fn oversubscription_lengthens_the_virtual_makespan_by_the_modelled_turns() {
    let (quantum_us, map_us, unmap_us) = (1000u64, 20u64, 50u64);
    let (q, m, u) = (
        quantum_us.to_string(),
        map_us.to_string(),
        unmap_us.to_string(),
    );
    let run = |slots: &str| {
        run_child_output(
            "makespan",
            &[
                ("HSASIM_TIME", "virtual"),
                ("HSASIM_SCHED", "1"),
                ("HSASIM_SCHED_SLOTS", slots),
                ("HSASIM_SCHED_PIPES", "1"),
                ("HSASIM_SCHED_QUANTUM_US", &q),
                ("HSASIM_SCHED_MAP_US", &m),
                ("HSASIM_SCHED_UNMAP_US", &u),
            ],
        )
        .iter()
        .map(|out| printed(out, "makespan_ns"))
        .collect::<Vec<u64>>()
    };
    let fits = run("3");
    let over = run("1");
    assert_eq!(
        fits[0], fits[1],
        "threaded and deterministic agree: {fits:?}"
    );
    assert_eq!(
        over[0], over[1],
        "threaded and deterministic agree: {over:?}"
    );
    eprintln!(
        "virtual makespan: {} ns with a slot per queue, {} ns with one slot",
        fits[0], over[0]
    );
    let turns = 2 * (quantum_us + map_us + unmap_us) * 1_000;
    let later = over[0].saturating_sub(fits[0]);
    assert!(
        (turns - 20_000..=turns).contains(&later),
        "two turns later ({turns} ns, less the submissions): {over:?} vs {fits:?}"
    );
}

#[test]
fn queues_beyond_the_slots_take_turns_and_all_complete() {
    run_child(
        "turns",
        &[
            ("HSASIM_SCHED", "1"),
            ("HSASIM_SCHED_SLOTS", "1"),
            ("HSASIM_SCHED_PIPES", "1"),
            ("HSASIM_SCHED_QUANTUM_US", "1000"),
            ("HSASIM_QUEUE_ID_BASE", "100"),
        ],
    );
}

/// This test process plays the device service (it creates the segment, as `hipshim device
/// serve` does) for a child that creates a queue, runs barrier packets on it and destroys
/// it, in both modes.
#[test]
fn a_services_queues_live_in_its_memory_and_segment() {
    let name = format!("schedtest-{}", std::process::id());
    let device = hsasim_sched::Device::create(&name, Default::default(), 4 << 20).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        // The service's scheduler maps the child's queue.
        scope.spawn(|| device.run(true, &|| done.load(Ordering::SeqCst), &mut |_| {}));
        let outcome =
            std::panic::catch_unwind(|| run_child("service", &[("HSASIM_DEVICE_SERVICE", &name)]));
        done.store(true, Ordering::SeqCst);
        device.kick();
        outcome
    });
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    let m = device.memory();
    assert_eq!(m.counters.queue_allocations, 2, "one queue a run");
    assert_eq!(m.counters.queue_frees, 2, "hsa_queue_destroy freed it");
    assert_eq!((m.used, m.counters.allocations), (0, 0));
    drop(m);
    assert_eq!(device.doorbells_in_use(), 0);
    assert_eq!(device.lock().population(), (0, 0));
}

/// Two processes attached to one device service with one HQD slot, on the virtual clock: they
/// take turns on one virtual time line, so the second to create its queue starts its packets a
/// turn after the first (each alone would start at once), the same in threaded and
/// deterministic mode. The first process waits for the runlist update the second one's queue
/// caused (the runlist became oversubscribed), then has the first turn.
#[test]
fn processes_of_a_device_service_take_turns_on_one_virtual_time_line() {
    let quantum_us = 1000u64;
    let params = hsasim_sched::Params {
        slots: 1,
        pipes: 1,
        quantum_ns: quantum_us * 1000,
        ..Default::default()
    };
    let pairs = ["1", "0"].map(|threads| {
        // A service of its own each time: a time line starts with its service.
        let name = format!("schedvt-{}-{threads}", std::process::id());
        let device = hsasim_sched::Device::create(&name, params, 4 << 20).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        let outcome = std::thread::scope(|scope| {
            scope.spawn(|| device.run(true, &|| done.load(Ordering::SeqCst), &mut |_| {}));
            let outcome = std::panic::catch_unwind(|| two_processes(&name, threads));
            done.store(true, Ordering::SeqCst);
            device.kick();
            outcome
        });
        outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    eprintln!("virtual makespans of the two processes (threaded, deterministic): {pairs:?}");
    assert_eq!(pairs[0], pairs[1], "threaded and deterministic agree");
    let [first, second] = pairs[0];
    let update = params.unmap_ns + params.update_ns + params.map_ns;
    let next_turn = quantum_us * 1000 + params.unmap_ns + params.map_ns;
    assert!(
        (update..update + 50_000).contains(&first),
        "the first process starts once the runlist is in place: {pairs:?}"
    );
    assert!(
        (next_turn..next_turn + 50_000).contains(&second),
        "the second waits for the next turn: {pairs:?}"
    );
}

/// Runs two children of case `shared_turns` on the device service `name`: the second creates
/// its queue once the first has; both submit once both have. Their makespans, in that order.
fn two_processes(name: &str, threads: &str) -> [u64; 2] {
    let dir = std::env::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().expect("test executable path");
    let children: Vec<_> = (0..2)
        .map(|k: u32| {
            Command::new(&exe)
                .args(["--exact", "child", "--nocapture", "--test-threads=1"])
                .env(CASE, "shared_turns")
                .env("HSASIM_SCHED_TEST_INDEX", k.to_string())
                .env("HSASIM_THREADS", threads)
                .env("HSASIM_TIME", "virtual")
                .env("HSASIM_DEVICE_SERVICE", name)
                .env("HSASIM_SCHED_TEST_DIR", &dir)
                .env_remove("HSASIM_SCHED")
                .env_remove("HSASIM_QUEUE_ID_BASE")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start a child")
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::fs::read_dir(&dir).unwrap().count() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the children never got ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::write(dir.join("go"), b"").unwrap();
    let spans: Vec<u64> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "HSASIM_THREADS={threads}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            printed(&stdout, "makespan_ns")
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    [spans[0], spans[1]]
}

/// Under virtual time priorities order the runlist: of two queues on one slot, the one given
/// a high priority has the first turn after the update its priority caused, though created
/// second; without it the first-created goes first. Threaded and deterministic.
#[test]
fn a_high_priority_queue_has_the_first_turn_in_virtual_time() {
    for prioritise in ["0", "1"] {
        run_child(
            "priority",
            &[
                ("HSASIM_TIME", "virtual"),
                ("HSASIM_SCHED", "1"),
                ("HSASIM_SCHED_SLOTS", "1"),
                ("HSASIM_SCHED_PIPES", "1"),
                ("HSASIM_SCHED_QUANTUM_US", "1000"),
                ("HSASIM_SCHED_TEST_PRIORITY", prioritise),
            ],
        );
    }
}

#[test]
fn without_the_model_no_scheduler_exists() {
    run_child("off", &[]);
}

/// The child side; does nothing when run as an ordinary test.
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let _h = Hsa::init();
    let rt = hsasim::system::rt().unwrap();
    match case.as_str() {
        "turns" => {
            let queues: Vec<_> = (0..3)
                .map(|_| queue(64, None, std::ptr::null_mut()))
                .collect();
            // SAFETY: live queues.
            let ids: Vec<u64> = queues.iter().map(|&q| unsafe { (*q).id }).collect();
            assert_eq!(ids, [100, 101, 102]);
            let sched = rt.sched.as_ref().expect("the scheduler model is on");
            let mut runlist = sched.runlist();
            runlist.sort_by_key(|q| q.queue_id);
            let seen: Vec<(u64, u64)> = runlist
                .iter()
                .map(|q| (q.queue_id, q.doorbell_offset))
                .collect();
            assert_eq!(seen, [(100, 800), (101, 808), (102, 816)]);
            let done = signal(6);
            for &q in &queues {
                for _ in 0..2 {
                    // SAFETY (publish): live queue, 64-byte packet.
                    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
                }
            }
            assert_eq!(wait_eq(done, 0, 20 * SECOND), 0, "every packet ran");
            match rt.vtime.as_ref() {
                // Under virtual time the turns are taken on the virtual time line.
                Some(v) => {
                    let c = v.slots().expect("virtual slots").counters();
                    assert_eq!(c.oversubscribed, 1, "{c:?}");
                    assert!(c.max_slots_in_use <= 1, "{c:?}");
                    assert!(c.runlist_updates >= 3, "{c:?}");
                    assert!(c.time_slices >= 2, "three queues each had a turn: {c:?}");
                    assert_eq!(c.packets_started, 6, "{c:?}");
                }
                None => {
                    let c = sched.counters();
                    assert_eq!(c.oversubscribed, 1, "{c:?}");
                    assert!(c.max_slots_in_use <= 1, "{c:?}");
                    assert!(c.runlist_updates >= 3, "{c:?}");
                    assert!(c.time_slices >= 2, "three queues each had a turn: {c:?}");
                    assert_eq!(c.packets_started, 6, "{c:?}");
                }
            }
            for q in queues {
                hsa_queue_destroy(q);
            }
            assert!(sched.runlist().is_empty());
        }
        "makespan" | "shared_turns" => {
            let shared = case == "shared_turns";
            let wait_for = |path: std::path::PathBuf| {
                while !path.exists() {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            };
            let dir = std::env::var("HSASIM_SCHED_TEST_DIR").map(std::path::PathBuf::from);
            let index = std::env::var("HSASIM_SCHED_TEST_INDEX").unwrap_or_default();
            if let (true, "1", Ok(dir)) = (shared, index.as_str(), &dir) {
                // The order the processes join the runlist in is the order of their turns.
                wait_for(dir.join("ready.0"));
            }
            let queues: Vec<_> = (0..if shared { 1 } else { 3 })
                .map(|_| queue(64, None, std::ptr::null_mut()))
                .collect();
            if let (true, Ok(dir)) = (shared, &dir) {
                // Both processes have their queue before either submits.
                std::fs::write(dir.join(format!("ready.{index}")), b"").unwrap();
                wait_for(dir.join("go"));
            }
            let now = || {
                let mut t = 0u64;
                assert_eq!(
                    // SAFETY: TIMESTAMP is a u64 attribute; the out-pointer is valid.
                    unsafe {
                        hsa_system_get_info(system_info::TIMESTAMP, (&mut t as *mut u64).cast())
                    },
                    status::SUCCESS
                );
                t
            };
            let from = now();
            let done = signal(2 * queues.len() as i64);
            for &q in &queues {
                for _ in 0..2 {
                    // SAFETY (publish): live queue, 64-byte packet.
                    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
                }
            }
            assert_eq!(wait_eq(done, 0, 20 * SECOND), 0, "every packet ran");
            println!("makespan_ns={}", now() - from);
            if let (true, Ok(dir)) = (shared, &dir) {
                // Neither leaves the runlist (an update) before both ran their packets.
                std::fs::write(dir.join(format!("done.{index}")), b"").unwrap();
                wait_for(dir.join(if index == "0" { "done.1" } else { "done.0" }));
            }
            for q in queues {
                hsa_queue_destroy(q);
            }
        }
        "priority" => {
            let prioritise = std::env::var("HSASIM_SCHED_TEST_PRIORITY").as_deref() == Ok("1");
            let (first, second) = (
                queue(64, None, std::ptr::null_mut()),
                queue(64, None, std::ptr::null_mut()),
            );
            if prioritise {
                assert_eq!(
                    hsa_amd_queue_set_priority(second, HSA_AMD_QUEUE_PRIORITY_HIGH),
                    status::SUCCESS
                );
            }
            let (a, b) = (signal(1), signal(1));
            // SAFETY (publish): live queues, 64-byte packets.
            unsafe {
                publish(first, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], a));
                publish(second, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], b));
            }
            for s in [a, b] {
                assert_eq!(wait_eq(s, 0, 20 * SECOND), 0, "the packet ran");
            }
            let at = |s| rt.signals.get(s).unwrap().virtual_time();
            let (a_at, b_at) = (at(a), at(b));
            eprintln!("priority {prioritise}: first queue done at {a_at}, second at {b_at}");
            let (early, late) = if prioritise {
                (b_at, a_at)
            } else {
                (a_at, b_at)
            };
            assert!(
                late >= early + 1_000_000,
                "a turn apart, the {} queue first: {a_at} {b_at}",
                if prioritise {
                    "high-priority"
                } else {
                    "first-created"
                }
            );
            for q in [first, second] {
                hsa_queue_destroy(q);
            }
        }
        "service" => {
            const K: u64 = 3;
            let name = std::env::var("HSASIM_DEVICE_SERVICE").unwrap();
            let sched = rt.sched.as_ref().expect("attached");
            let q = queue(64, None, std::ptr::null_mut());
            // SAFETY: a live queue.
            let (ring, doorbell) = unsafe { ((*q).base_address as u64, (*q).doorbell_signal) };
            let base = hsasim_sched::memory::DEFAULT_BASE;
            assert!(
                (base..base + (4 << 20)).contains(&ring),
                "the ring is in the device memory: {ring:#x}"
            );
            assert!(
                (base..base + (4 << 20)).contains(&(q as u64)),
                "so is the queue's block: {q:p}"
            );
            let (cells, len) = sched.service().unwrap().doorbell_cells();
            assert!(
                (cells..cells + len).contains(&doorbell.handle),
                "the doorbell is a cell of the segment"
            );
            let runlist = sched.runlist();
            let entry = runlist
                .iter()
                .find(|e| e.pid == std::process::id())
                .unwrap();
            assert_eq!(entry.hqd.ring_base, ring);
            assert_eq!(entry.hqd.ring_bytes, 64 * 64);
            assert_eq!(
                doorbell.handle,
                cells + 64 * ((doorbell.handle - cells) / 64)
            );
            let done = signal(K as i64);
            for _ in 0..K {
                // SAFETY (publish): live queue, 64-byte packet.
                unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
            }
            assert_eq!(wait_eq(done, 0, 20 * SECOND), 0, "every packet ran");
            // The index entry points find a queue whose block is outside the slab.
            assert_eq!(hsa_queue_load_write_index_scacquire(q), K);
            // The read index moves just after the last completion signal.
            while hsa_queue_load_read_index_scacquire(q) < K {
                std::thread::yield_now();
            }
            // What the service sees through a mapping of its own.
            let other = hsasim_sched::Device::open(&name).unwrap();
            let t = other.lock();
            let (index, e) = t
                .live_queues()
                .find(|(_, e)| e.pid == std::process::id())
                .map(|(i, e)| (i, *e))
                .unwrap();
            drop(t);
            assert_eq!(other.ring_state(index, &e.hqd), Some((K, K, K as i64 - 1)));
            assert_eq!(other.doorbells_in_use(), 1);
            hsa_queue_destroy(q);
            assert!(sched.runlist().is_empty());
            // Its handle reads as no queue (its memory is out of the CPU's reach again).
            assert_eq!(hsa_queue_load_write_index_relaxed(q), 0);
            assert_eq!(
                hsa_signal_load_relaxed(doorbell),
                0,
                "nor is its doorbell a signal"
            );
            assert_eq!(
                other.doorbells_in_use(),
                0,
                "the doorbell went with the queue"
            );
            assert_eq!(other.memory().queue_memory(), (0, 0));
        }
        "off" => {
            let q = queue(64, None, std::ptr::null_mut());
            // SAFETY: a live queue.
            assert_eq!(unsafe { (*q).id }, 0);
            assert!(rt.sched.is_none());
            hsa_queue_destroy(q);
        }
        other => panic!("unknown case {other}"),
    }
}
