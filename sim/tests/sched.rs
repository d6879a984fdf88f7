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
    }
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
            let c = sched.counters();
            assert_eq!(c.oversubscribed, 1, "{c:?}");
            assert!(c.max_slots_in_use <= 1, "{c:?}");
            assert!(c.runlist_updates >= 3, "{c:?}");
            assert!(c.time_slices >= 2, "three queues each had a turn: {c:?}");
            assert_eq!(c.packets_started, 6, "{c:?}");
            for q in queues {
                hsa_queue_destroy(q);
            }
            assert!(sched.runlist().is_empty());
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
