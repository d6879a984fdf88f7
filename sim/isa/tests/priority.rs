//! Queue priority among concurrent dispatches (src/arbiter.rs): a worker of a lower-priority
//! dispatch claims no new workgroups while a higher-priority dispatch of the same device has
//! unclaimed ones, and a higher dispatch stuck inside its workgroups does not hold a lower one
//! back for ever. Each test uses a device number of its own, so tests running at once in this
//! binary do not compete with each other.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, waiting_workers, ExecConfig, GfxModel, QueuePriority};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const MODEL: GfxModel = GfxModel::Gfx942;
const WG: u16 = 64;

fn kernels() -> &'static Loaded {
    static LOADED: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();
    LOADED.get_or_init(|| Loaded::new(&compile(&kernel_source("priority.hip"), MODEL, 5)))
}

/// One host worker, so that a dispatch whose workgroup 0 waits has all the others unclaimed.
fn one_worker(device: u32, priority: QueuePriority) -> ExecConfig {
    ExecConfig {
        worker_threads: 1,
        device,
        priority,
        timeout: Some(Duration::from_secs(120)),
        ..ExecConfig::BASE
    }
}

/// Device words the kernels and the test share.
fn words(n: usize, value: u32) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(value)).collect()
}

fn addr(w: &[AtomicU32]) -> u64 {
    w.as_ptr() as u64
}

/// A dispatch of `kernel` over `groups` workgroups with the given pointer arguments.
struct Launch {
    dispatch: hsasim_isa::Dispatch,
    _packet: Box<hsa_abi::hsa_kernel_dispatch_packet_t>,
    _kernargs: Kernargs,
}

fn launch(kernel: &str, groups: u32, args: &[u64], mem: &Ranges) -> Launch {
    let lo = kernels();
    mem.add(lo.image.addr(), lo.image.len as u64);
    let mut ka = Kernargs::new();
    for (k, a) in args.iter().enumerate() {
        ka.put(8 * k, *a);
    }
    let grid = [groups * WG as u32, 1, 1];
    ka.put_hidden_v5(8 * args.len(), grid, [WG, 1, 1]);
    mem.add(ka.addr(), 512);
    let kd = lo.symbol(&format!("{kernel}.kd"));
    let (dispatch, packet) = packet(MODEL, kd, ka.addr(), grid, [WG, 1, 1], 0, mem);
    Launch {
        dispatch,
        _packet: packet,
        _kernargs: ka,
    }
}

/// Waits (polling) until `done()` holds; a minute without it fails the test.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < give_up, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_high_priority_dispatch_claims_all_its_workgroups_before_a_low_one_claims_more() {
    const DEVICE: u32 = 3;
    const GROUPS: usize = 32;
    let mem = Ranges::default();
    // gate and started, for the low dispatch and the high one; the shared ticket counter.
    let (low_flags, high_flags, counter) = (words(2, 0), words(2, 0), words(1, 0));
    let (low_tickets, high_tickets) = (words(GROUPS, u32::MAX), words(GROUPS, u32::MAX));
    for w in [
        &low_flags,
        &high_flags,
        &counter,
        &low_tickets,
        &high_tickets,
    ] {
        mem.add_slice(w);
    }
    let ticketed = |flags: &[AtomicU32], tickets: &[AtomicU32]| {
        let args = [
            addr(flags),
            addr(&flags[1..]),
            addr(&counter),
            addr(tickets),
        ];
        launch("ticketed", GROUPS as u32, &args, &mem)
    };
    let low = ticketed(&low_flags, &low_tickets);
    let high = ticketed(&high_flags, &high_tickets);
    let all_written = |t: &[AtomicU32]| t.iter().all(|x| x.load(Ordering::Relaxed) != u32::MAX);
    std::thread::scope(|s| {
        // The low dispatch runs first, its workgroup 0 held at its gate; then the high one,
        // held likewise with 31 workgroups unclaimed.
        let low_run =
            s.spawn(|| run_dispatch(&low.dispatch, &mem, &one_worker(DEVICE, QueuePriority::Low)));
        wait_for("the low dispatch to start", || {
            low_flags[1].load(Ordering::Acquire) != 0
        });
        let high_run = s.spawn(|| {
            run_dispatch(
                &high.dispatch,
                &mem,
                &one_worker(DEVICE, QueuePriority::High),
            )
        });
        wait_for("the high dispatch to start", || {
            high_flags[1].load(Ordering::Acquire) != 0
        });
        // The low worker finishes workgroup 0 and comes for more: it must wait. (Without
        // arbitration it runs all its workgroups instead.)
        low_flags[0].store(1, Ordering::Release);
        wait_for("the low worker to wait or finish", || {
            waiting_workers(DEVICE) > 0 || all_written(&low_tickets)
        });
        high_flags[0].store(1, Ordering::Release);
        high_run.join().unwrap().expect("the high dispatch runs");
        low_run.join().unwrap().expect("the low dispatch runs");
    });
    let tickets =
        |t: &[AtomicU32]| -> Vec<u32> { t.iter().map(|x| x.load(Ordering::Relaxed)).collect() };
    let (low, high) = (tickets(&low_tickets), tickets(&high_tickets));
    assert_eq!(low[0], 0, "low workgroup 0 started first: {low:?}");
    // The low worker goes on once the high dispatch has claimed its last workgroup and its
    // worker has left the host thread (the one slot a dispatch of one worker has).
    let first_low_after_gate = *low[1..].iter().min().unwrap();
    let high_after = high.iter().filter(|&&t| t > first_low_after_gate).count();
    assert!(
        high_after == 0,
        "{high_after} high-priority workgroups started after the low dispatch went on \
         (tickets: low {low:?}, high {high:?})"
    );
    assert_eq!(waiting_workers(DEVICE), 0);
}

/// A high-priority dispatch whose workgroups wait for a flag a low-priority one sets: with
/// `groups` more than its worker, the rest stay unclaimed while the first spins, and the low
/// dispatch must still run (after the stall); with one workgroup nothing holds it back.
fn spin_handoff(device: u32, groups: u32) {
    let mem = Ranges::default();
    // The flag, and where the high dispatch says it has started.
    let flag = words(2, 0);
    mem.add_slice(&flag);
    let high = launch("wait_flag", groups, &[addr(&flag), addr(&flag[1..])], &mem);
    let low = launch("set_flag", 1, &[addr(&flag)], &mem);
    std::thread::scope(|s| {
        let high_run = s.spawn(|| {
            run_dispatch(
                &high.dispatch,
                &mem,
                &one_worker(device, QueuePriority::High),
            )
        });
        wait_for("the high dispatch to start", || {
            flag[1].load(Ordering::Acquire) != 0
        });
        run_dispatch(&low.dispatch, &mem, &one_worker(device, QueuePriority::Low))
            .expect("the low dispatch runs");
        high_run.join().unwrap().expect("the high dispatch runs");
    });
    assert_eq!(flag[0].load(Ordering::Relaxed), 1);
    assert_eq!(waiting_workers(device), 0);
}

#[test]
fn a_stuck_high_priority_dispatch_does_not_hold_a_low_one_back_for_ever() {
    spin_handoff(4, 4);
}

#[test]
fn a_high_priority_dispatch_with_every_workgroup_claimed_holds_nobody_back() {
    spin_handoff(5, 1);
}
