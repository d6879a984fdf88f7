//! The model under a fake clock: every test drives `Table::tick` with explicit times, so the
//! outcomes are exact.

use super::*;
use crate::device::Device;
use crate::model::QueueState;

const MS: u64 = 1_000_000;

fn params(f: impl FnOnce(&mut Params)) -> Params {
    let mut p = Params {
        map_ns: 10_000,
        unmap_ns: 20_000,
        update_ns: 100_000,
        quantum_ns: 10 * MS,
        ..Params::default()
    };
    f(&mut p);
    p
}

/// Ticks at every deadline up to `end`; returns the time reached.
fn run(t: &mut Table, mut now: u64, end: u64, events: &mut Vec<Event>) -> u64 {
    loop {
        let (_, next) = t.tick(now, events);
        match next {
            Some(n) if n <= end => now = n.max(now),
            _ => return end,
        }
    }
}

fn mapped(t: &Table) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = t
        .live_queues()
        .filter(|(_, q)| q.state() == QueueState::Mapped)
        .map(|(_, q)| (q.pid, q.queue_id))
        .collect();
    v.sort();
    v
}

fn mapped_pids(t: &Table) -> Vec<u32> {
    let mut p: Vec<u32> = mapped(t).into_iter().map(|(pid, _)| pid).collect();
    p.dedup();
    p
}

/// Registers `queues` queues for each pid (ids 0.., doorbell offsets 8 apart).
fn populate(t: &mut Table, pids: &[u32], queues: u64) -> Vec<usize> {
    let mut idx = Vec::new();
    for &pid in pids {
        for q in 0..queues {
            idx.push(t.register_queue(pid, q, q * 8, 1).unwrap());
        }
    }
    idx
}

#[test]
fn a_runlist_that_fits_maps_every_queue_and_never_slices() {
    let dev = Device::private(params(|_| {})).unwrap();
    let mut t = dev.lock();
    let idx = populate(&mut t, &[100, 200], 4);
    let mut ev = Vec::new();
    let now = run(&mut t, 0, 100 * MS, &mut ev);
    assert_eq!(mapped(&t).len(), 8);
    assert!(idx.iter().all(|&i| t.begin_packet(i, now)));
    assert_eq!(
        t.counters.runlist_updates, 8,
        "one update per queue, serialised"
    );
    assert_eq!(t.counters.time_slices, 0);
    assert_eq!(t.counters.oversubscribed, 0);
    assert_eq!(t.counters.slots_in_use, 8);
    // All eight were registered before the first update, so each update maps all eight and
    // the next one unmaps them again.
    assert_eq!(t.counters.unmaps, 7 * 8);
    assert_eq!(t.counters.maps, 8 * 8);
    let _ = run(&mut t, now, 200 * MS, &mut ev);
    assert_eq!(t.counters.time_slices, 0);
    // Slots spread over the pipes: 8 queues on 4 pipes, 2 each.
    let mut per_pipe = [0; 4];
    for (_, q) in t.live_queues() {
        per_pipe[t.params.pipe_of(q.slot as u32) as usize] += 1;
    }
    assert_eq!(per_pipe, [2, 2, 2, 2]);
}

#[test]
fn updates_applied_together_without_serialisation() {
    let dev = Device::private(params(|p| p.serial_updates = 0)).unwrap();
    let mut t = dev.lock();
    populate(&mut t, &[100, 200], 4);
    let mut ev = Vec::new();
    run(&mut t, 0, 100 * MS, &mut ev);
    assert_eq!(t.counters.runlist_updates, 1);
    assert_eq!(t.counters.unmaps, 0);
    assert_eq!(t.counters.maps, 8);
    assert_eq!(mapped(&t).len(), 8);
}

#[test]
fn more_processes_than_the_limit_take_turns_of_one_quantum() {
    let dev = Device::private(params(|p| p.max_procs = 2)).unwrap();
    let mut t = dev.lock();
    populate(&mut t, &[1, 2, 3], 1);
    let mut ev = Vec::new();
    // Past the three serialised updates (each well under 1 ms).
    let mut now = run(&mut t, 0, MS, &mut ev);
    assert_eq!(t.counters.oversubscribed, 1);
    assert_eq!(mapped_pids(&t), [1, 2]);
    let mut seen = vec![mapped_pids(&t)];
    for _ in 0..3 {
        now = run(&mut t, now, now + 10 * MS, &mut ev);
        seen.push(mapped_pids(&t));
        assert!(mapped_pids(&t).len() <= 2);
    }
    // A window of two processes slides round the runlist.
    assert_eq!(seen, [vec![1, 2], vec![1, 3], vec![2, 3], vec![1, 2]]);
    assert_eq!(t.counters.time_slices, 3);
}

#[test]
fn more_queues_than_slots_take_turns_by_process() {
    let dev = Device::private(params(|p| {
        p.slots = 6;
        p.pipes = 2;
    }))
    .unwrap();
    let mut t = dev.lock();
    populate(&mut t, &[1, 2], 4);
    let mut ev = Vec::new();
    let mut now = run(&mut t, 0, 2 * MS, &mut ev);
    assert_eq!(t.counters.oversubscribed, 1);
    assert_eq!(mapped_pids(&t), [1]);
    now = run(&mut t, now, now + 10 * MS, &mut ev);
    assert_eq!(mapped_pids(&t), [2]);
    assert!(t.counters.max_slots_in_use <= 6);
    let _ = now;
}

#[test]
fn a_process_with_more_queues_than_slots_rotates_its_queues() {
    let dev = Device::private(params(|p| {
        p.slots = 2;
        p.pipes = 1;
    }))
    .unwrap();
    let mut t = dev.lock();
    populate(&mut t, &[1], 3);
    let mut ev = Vec::new();
    let mut now = run(&mut t, 0, 2 * MS, &mut ev);
    let mut turns = vec![mapped(&t)];
    for _ in 0..2 {
        now = run(&mut t, now, now + 10 * MS, &mut ev);
        turns.push(mapped(&t));
    }
    assert!(turns.iter().all(|m| m.len() == 2), "{turns:?}");
    let all: std::collections::BTreeSet<u64> = turns.iter().flatten().map(|&(_, q)| q).collect();
    assert_eq!(all.len(), 3, "every queue got a turn: {turns:?}");
}

#[test]
fn a_busy_queue_keeps_its_slot_until_its_packet_ends() {
    let dev = Device::private(params(|p| p.max_procs = 1)).unwrap();
    let mut t = dev.lock();
    let idx = populate(&mut t, &[1, 2], 1);
    let mut ev = Vec::new();
    let now = run(&mut t, 0, MS, &mut ev);
    assert_eq!(mapped_pids(&t), [1]);
    assert!(t.begin_packet(idx[0], now));
    assert!(!t.begin_packet(idx[1], now), "process 2 has no slot yet");
    let waiting_since = now;
    // Process 2's turn comes while process 1's kernel runs: no preemption inside a packet.
    let now = run(&mut t, now, now + 15 * MS, &mut ev);
    assert_eq!(mapped_pids(&t), [1]);
    assert!(t.queues[idx[0]].evict != 0, "told to leave");
    assert!(t.end_packet(idx[0], now), "end_packet says it has to go");
    assert!(!t.begin_packet(idx[0], now), "no new packet once evicted");
    let now = run(&mut t, now, now + MS, &mut ev);
    assert_eq!(mapped_pids(&t), [2]);
    assert!(t.begin_packet(idx[1], now));
    assert!(t.counters.waits >= 2);
    // Process 1 ran 15 ms and never waited for its first packet; process 2 waited 16 ms.
    let one = t.ledger(1).unwrap();
    assert_eq!((one.busy_ns, one.wait_ns, one.packets), (15 * MS, 0, 1));
    let two = t.ledger(2).unwrap();
    assert_eq!((two.busy_ns, two.wait_ns), (0, now - waiting_since));
    assert_eq!(two.run_share(), 0.0);
    assert_eq!(one.run_share(), 1.0);
}

#[test]
fn priority_orders_the_runlist() {
    let dev = Device::private(params(|p| p.max_procs = 1)).unwrap();
    let mut t = dev.lock();
    t.register_queue(1, 0, 0, 1).unwrap();
    t.register_queue(2, 0, 0, 2).unwrap();
    let mut ev = Vec::new();
    run(&mut t, 0, MS, &mut ev);
    assert_eq!(mapped_pids(&t), [2], "the high-priority process goes first");
}

#[test]
fn skipping_idle_queues_gives_the_slots_to_work() {
    for skip in [0, 1] {
        let dev = Device::private(params(|p| {
            p.max_procs = 1;
            p.skip_idle = skip;
        }))
        .unwrap();
        let mut t = dev.lock();
        let idx = populate(&mut t, &[1, 2, 3], 1);
        let mut ev = Vec::new();
        let mut now = run(&mut t, 0, MS, &mut ev);
        // Only process 3 has work.
        t.begin_packet(idx[2], now);
        let mut waited_turns = 0;
        for _ in 0..4 {
            now = run(&mut t, now, now + 10 * MS, &mut ev);
            if mapped_pids(&t) != [3] {
                waited_turns += 1;
            }
        }
        if skip == 1 {
            assert_eq!(waited_turns, 0);
        } else {
            assert!(
                waited_turns >= 2,
                "idle processes take turns: {waited_turns}"
            );
        }
    }
}

#[test]
fn a_removed_process_frees_its_slots_and_ends_oversubscription() {
    let dev = Device::private(params(|p| p.max_procs = 1)).unwrap();
    let mut t = dev.lock();
    populate(&mut t, &[1, 2], 2);
    let mut ev = Vec::new();
    let now = run(&mut t, 0, MS, &mut ev);
    assert_eq!(t.counters.oversubscribed, 1);
    assert_eq!(t.remove_process(1).len(), 2);
    run(&mut t, now, now + MS, &mut ev);
    assert_eq!(t.counters.oversubscribed, 0);
    assert_eq!(mapped_pids(&t), [2]);
    assert_eq!(t.population(), (1, 2));
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::RunlistUpdate {
            oversubscribed: false,
            processes: 1,
            ..
        }
    )));
}

#[test]
fn events_serialise_as_json_lines() {
    let p = Params::default();
    let line = event_json(
        &Event::Map {
            at_ns: 5,
            pid: 7,
            queue_id: 3,
            slot: 9,
        },
        &p,
    );
    assert_eq!(
        line,
        r#"{"ev":"map","ts_ns":5,"pid":7,"queue_id":3,"slot":9,"pipe":1}"#
    );
}

#[test]
fn a_named_segment_is_shared_and_its_lock_survives_a_dead_owner() {
    let name = format!("unit-{}", std::process::id());
    let service = Device::create(&name, params(|_| {}), 1 << 20).unwrap();
    assert!(Device::create(&name, Params::default(), 1 << 20)
        .unwrap_err()
        .contains("already running"));
    let client = Device::open(&name).unwrap();
    let i = client.lock().register_queue(42, 5, 40, 1).unwrap();
    assert_eq!(service.lock().queues[i].queue_id, 5);
    // A lock left held by a process that no longer exists is taken over.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    service
        .block_for_tests()
        .lock
        .store(dead, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(client.lock().population(), (1, 1));

    // The device memory: one table seen by both; a dead process's allocations are freed by
    // the service's reaping step (and their pages zeroed), a live one's stay.
    let a = client.memory().allocate(8192, dead).unwrap();
    let b = client.memory().allocate(4096, std::process::id()).unwrap();
    use std::os::unix::fs::FileExt;
    let file = client.memory_file().unwrap();
    file.write_all_at(b"bytes", a.offset).unwrap();
    assert_eq!(service.memory().used, 12288);
    service
        .block_for_tests()
        .mem_lock
        .store(dead, std::sync::atomic::Ordering::SeqCst);
    service.step(crate::now_ns(), true);
    let t = service.memory();
    assert_eq!((t.used, t.counters.reaped), (4096, 1));
    assert_eq!(t.allocations(), [b]);
    drop(t);
    let mut back = [1u8; 5];
    file.read_exact_at(&mut back, a.offset).unwrap();
    assert_eq!(back, [0; 5], "the dead process's pages are gone");
    drop(client);
    drop(service);
    assert!(Device::open(&name).unwrap_err().contains("not running"));
    assert!(!crate::device::memory_path(&name).exists());
}

#[test]
fn a_ring_has_work_once_reserved_and_rung_past_the_read_index() {
    use crate::model::ring_has_work;
    assert!(!ring_has_work(0, 0, 0), "a fresh queue");
    assert!(ring_has_work(0, 1, 0), "packet 0 published and rung");
    assert!(!ring_has_work(1, 1, 0), "packet 0 consumed");
    assert!(
        !ring_has_work(4, 6, 3),
        "rung for packet 3 only: 4 and 5 not yet"
    );
    assert!(ring_has_work(4, 6, 5));
    assert!(!ring_has_work(0, 1, -1), "never rung");
}

/// The scheduler learns of work from the ring, not from the process: with idle queues
/// skipped, a turn goes to the process whose doorbell was rung although no packet processor
/// asked for a slot, and the wait counts from the doorbell.
#[test]
fn observed_rings_decide_readiness_and_start_the_wait() {
    let dev = Device::private(params(|p| {
        p.max_procs = 1;
        p.skip_idle = 1;
        p.serial_updates = 0;
    }))
    .unwrap();
    let mut t = dev.lock();
    let hqd = |n: u64| crate::model::Hqd {
        ring_base: 0x6000_0000_0000 + n * 0x10000,
        ring_bytes: 0x4000,
        read_index_addr: 0x6000_0000_0000 + n * 0x10000 + 0x80,
        write_index_addr: 0x6000_0000_0000 + n * 0x10000 + 0x38,
    };
    let a = t.register_hardware_queue(1, 0, 0, 1, hqd(0)).unwrap();
    let b = t.register_hardware_queue(2, 0, 0, 1, hqd(1)).unwrap();
    assert_eq!(t.queues[b].hqd, hqd(1));
    let mut events = Vec::new();
    // Nothing anywhere: the first process gets the first turn.
    t.tick(0, &mut events);
    let now = run(&mut t, 0, MS, &mut events);
    assert_eq!(mapped_pids(&t), [1]);
    // Process 2's doorbell rang; its processor has not asked yet.
    assert!(!t.observe_ring(a, false, now));
    assert!(t.observe_ring(b, true, now));
    assert!(!t.observe_ring(b, true, now), "seen once");
    assert_eq!(t.counters.work_from_doorbells, 1);
    assert_eq!((t.queues[b].pending, t.queues[b].waiting), (1, 1));
    assert_eq!(t.counters.waits, 1);
    // Turns go round the processes with work only (without the observation, neither would
    // have any and the turns would alternate).
    for quanta in [2, 3, 4] {
        let _ = run(&mut t, now, now + quanta * 10 * MS, &mut events);
        assert_eq!(mapped_pids(&t), [2], "the turn goes to the queue with work");
    }
    let later = now + 40 * MS;
    assert!(t.begin_packet(b, later));
    assert_eq!(
        t.ledger(2).unwrap().wait_ns,
        later - now,
        "waited from the doorbell"
    );
    // Its ring ran empty while a packet runs: still busy, so still ready.
    t.observe_ring(b, false, later);
    assert_eq!(t.queues[b].pending, 1);
    t.end_packet(b, later + 1);
    t.observe_ring(b, false, later + 1);
    assert_eq!(t.queues[b].pending, 0);
}

/// The segment's doorbell array and the queues' descriptors in the device memory, seen from
/// another handle (a status reader), and reclaimed with a dead process.
#[test]
fn doorbells_and_rings_are_in_the_segment_and_go_with_a_dead_process() {
    use crate::memory::Use;
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::Ordering;
    let name = format!("unit-db-{}", std::process::id());
    let service = Device::create(&name, params(|_| {}), 1 << 20).unwrap();
    let client = Device::open(&name).unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    // The queue of a process that has since died: block and ring in the device memory.
    let block = client
        .memory()
        .allocate_for(4096 + 16384, dead, Use::Queue)
        .unwrap();
    let base = client.memory().base;
    let hqd = crate::model::Hqd {
        ring_base: base + block.offset + 4096,
        ring_bytes: 16384,
        read_index_addr: base + block.offset + 0x80,
        write_index_addr: base + block.offset + 0x38,
    };
    let i = client
        .lock()
        .register_hardware_queue(dead, 3, 24, 1, hqd)
        .unwrap();
    let file = client.memory_file().unwrap();
    file.write_all_at(&7u64.to_le_bytes(), block.offset + 0x38)
        .unwrap();
    file.write_all_at(&5u64.to_le_bytes(), block.offset + 0x80)
        .unwrap();
    let cell = cell_of(&client, i);
    cell[0].store(hsa_doorbell_kind(), Ordering::Release);
    cell[1].store(6, Ordering::Release);
    let (start, len) = service.doorbell_cells();
    assert_eq!(len, 64 * crate::model::MAX_QUEUES as u64);
    assert_ne!(
        start,
        client.doorbell_cells().0,
        "each process maps the segment"
    );
    assert_eq!(service.doorbell_value(i), 6);
    assert_eq!(service.doorbells_in_use(), 1);
    assert_eq!(service.ring_state(i, &hqd), Some((5, 7, 6)));
    assert_eq!(service.read_device_u64(base - 8), None);
    assert_eq!(service.read_device_u64(base + 3), None);
    // Without reaping the service reads the descriptor: packets 5 and 6 wait.
    service.step(crate::now_ns(), false);
    assert_eq!(service.lock().queues[i].pending, 1);
    assert_eq!(service.lock().counters.work_from_doorbells, 1);
    // Reaping: the queue, its doorbell and its memory go.
    service.step(crate::now_ns(), true);
    assert_eq!(service.lock().population(), (0, 0));
    assert_eq!(service.lock().counters.queues_reaped, 1);
    assert_eq!(service.doorbells_in_use(), 0);
    assert_eq!(cell[1].load(Ordering::Acquire), 0);
    let m = service.memory();
    assert_eq!(
        (m.used, m.counters.queue_reaped, m.counters.reaped),
        (0, 1, 0)
    );
    assert_eq!(m.counters.queue_reaped_bytes, 4096 + 16384);
    drop(m);
    // Queue memory is never an IPC attachment.
    let q = client
        .memory()
        .allocate_for(4096, std::process::id(), Use::Queue)
        .unwrap();
    assert_eq!(
        client.memory().attach(q.offset, q.serial, 99),
        Err(crate::memory::MemError::NotFound)
    );
    // A live process's queue leaves with its doorbell.
    let j = client
        .lock()
        .register_hardware_queue(std::process::id(), 4, 32, 1, hqd)
        .unwrap();
    cell_of(&client, j)[0].store(hsa_doorbell_kind(), Ordering::Release);
    client.unregister_queue(j, std::process::id(), 5);
    assert_eq!(service.doorbells_in_use(), 1, "not that queue: kept");
    client.unregister_queue(j, std::process::id(), 4);
    assert_eq!(service.doorbells_in_use(), 0);
}

/// ROCr's `AMD_SIGNAL_KIND_DOORBELL` (-1): any kind but 0 marks a cell in use.
fn hsa_doorbell_kind() -> i64 {
    -1
}

fn cell_of(d: &Device, i: usize) -> &[std::sync::atomic::AtomicI64; 8] {
    // SAFETY: the doorbell cell of entry `i` in `d`'s mapping: 64 aligned bytes.
    unsafe { &*d.doorbell_cell(i).cast() }
}

/// The compute-unit budget: a dispatch takes what is free (up to what it wants), another
/// waits until units come back, and the service takes back what a dead process held.
#[test]
fn dispatches_share_the_compute_unit_budget_and_a_dead_holder_gives_it_back() {
    let name = format!("unit-cu-{}", std::process::id());
    let service = Device::create(&name, params(|p| p.cu_budget = 3), 1 << 20).unwrap();
    let off = Device::private(params(|_| {})).unwrap();
    assert_eq!(
        off.take_compute_units(1, 4, &|| false),
        None,
        "not modelled"
    );
    let client = Device::open(&name).unwrap();
    // Live processes (the reaping step below keeps them): init and this one.
    let me = std::process::id();
    let a = client.take_compute_units(1, 2, &|| false).unwrap();
    let b = client.take_compute_units(me, 8, &|| false).unwrap();
    assert_eq!((a.units, b.units), (2, 1), "b gets what is left");
    assert_eq!(
        client.take_compute_units(me, 1, &|| true),
        None,
        "none free: it would wait, and gives up"
    );
    let waiter = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| client.take_compute_units(me, 2, &|| false).unwrap());
        while service.cu_status().waits < 2 {
            std::thread::yield_now();
        }
        service.give_back_compute_units(a);
        waiter.join().unwrap()
    });
    assert_eq!(waiter.units, 2);
    let s = service.cu_status();
    assert_eq!((s.budget, s.in_use, s.max_in_use, s.waits), (3, 3, 3, 2));
    // A process that died holding its units: the service's reaping step takes them back.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    client.give_back_compute_units(b);
    let d = client.take_compute_units(dead, 1, &|| false).unwrap();
    assert_eq!(d.units, 1);
    service.step(crate::now_ns(), true);
    let s = service.cu_status();
    assert_eq!((s.in_use, s.reaped), (2, 1));
    assert_eq!(
        client.release_compute_units_of(me),
        2,
        "a shut-down returns the rest"
    );
    assert_eq!(service.cu_status().in_use, 0);
}
