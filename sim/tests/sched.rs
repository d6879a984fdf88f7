//! The hardware scheduler model in one process (`HSASIM_SCHED=1`): queues beyond the slots
//! still complete their work, by turns; ids and doorbell offsets follow
//! `HSASIM_QUEUE_ID_BASE`; with the model off nothing is registered anywhere.
//!
//! hsasim reads its configuration once, at `hsa_init`, so each case runs this test binary
//! again as a child process (the `child` test) with its environment, in threaded and
//! deterministic mode.
mod common;
use common::*;
use std::process::Command;

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
