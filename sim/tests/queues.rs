mod common;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

#[test]
fn queue_layout_and_argument_checks() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    // SAFETY: a live queue.
    let (base, size, doorbell) =
        unsafe { ((*q).base_address as u64, (*q).size, (*q).doorbell_signal) };
    assert_eq!(base % 64, 0);
    assert_eq!(size, 64);
    // SAFETY: the doorbell handle is an amd_signal_t address.
    assert_eq!(
        unsafe { (*(doorbell.handle as *const amd_signal_t)).kind },
        AMD_SIGNAL_KIND_DOORBELL
    );
    let mut bad = std::ptr::null_mut();
    for size in [0, 100, 1 << 30] {
        // SAFETY: out-pointer to a local.
        let s = unsafe {
            hsa_queue_create(
                gpu(),
                size,
                HSA_QUEUE_TYPE_MULTI,
                None,
                std::ptr::null_mut(),
                0,
                0,
                &mut bad,
            )
        };
        assert_eq!(s, status::ERROR_INVALID_ARGUMENT, "size {size}");
    }
    // SAFETY: as above.
    let s = unsafe {
        hsa_queue_create(
            cpu(),
            64,
            HSA_QUEUE_TYPE_MULTI,
            None,
            std::ptr::null_mut(),
            0,
            0,
            &mut bad,
        )
    };
    assert_eq!(s, status::ERROR_INVALID_AGENT);
    assert_eq!(hsa_queue_add_write_index_relaxed(q, 3), 0);
    assert_eq!(hsa_queue_cas_write_index_scacq_screl(q, 3, 5), 3);
    assert_eq!(hsa_queue_load_write_index_scacquire(q), 5);
    hsa_queue_store_write_index_relaxed(q, 0);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    assert_eq!(hsa_queue_destroy(q), status::ERROR_INVALID_QUEUE);
}

#[test]
fn barrier_packet_decrements_completion_and_resets_header() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    let done = signal(1);
    // SAFETY: a live queue and a 64-byte packet.
    let idx = unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    while hsa_queue_load_read_index_scacquire(q) <= idx {
        std::thread::yield_now();
    }
    // SAFETY: slot 0 of the live ring.
    let header = unsafe { *((*q).base_address as *const u16) };
    assert_eq!(PacketHeader(header).packet_type(), HSA_PACKET_TYPE_INVALID);
    hsa_queue_destroy(q);
    hsa_signal_destroy(done);
}

#[test]
fn full_queue_producer_waits_for_room_until_processor_drains() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    let gate = signal(1);
    let done = signal(100);
    // The first packet blocks the queue; 63 more fill it.
    // SAFETY (publish calls): live queue, 64-byte packets.
    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[gate], done)) };
    for _ in 0..63 {
        unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
    }
    assert_eq!(hsa_queue_load_read_index_relaxed(q), 0);
    let qa = q as usize;
    // This producer must wait for room: the ring is full.
    let producer = std::thread::spawn(move || {
        let q = qa as *mut hsa_queue_t;
        for _ in 0..36 {
            unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(
        hsa_signal_load_relaxed(done),
        100,
        "nothing ran while the gate was closed"
    );
    hsa_signal_store_screlease(gate, 0);
    producer.join().unwrap();
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    // hsasim moves the read index past a packet just after writing its completion signal (a
    // packet processor of the hardware moves it first), so a waiter may see the signal a
    // moment before the index.
    let t = std::time::Instant::now();
    while hsa_queue_load_read_index_scacquire(q) < 100 && t.elapsed().as_secs() < 10 {
        std::thread::yield_now();
    }
    assert_eq!(hsa_queue_load_read_index_scacquire(q), 100);
    hsa_queue_destroy(q);
}

#[test]
fn barrier_and_waits_for_signal_from_other_queue_and_host() {
    let _h = Hsa::init();
    let q1 = queue(64, None, std::ptr::null_mut());
    let q2 = queue(64, None, std::ptr::null_mut());
    let host = signal(1);
    let first = signal(1);
    let second = signal(1);
    // q1: waits for the host; q2: waits for q1's packet and for the host.
    unsafe { publish(q1, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[host], first)) };
    unsafe {
        publish(
            q2,
            barrier(HSA_PACKET_TYPE_BARRIER_AND, &[first, host], second),
        )
    };
    assert_eq!(
        wait_eq(second, 0, 20_000_000),
        1,
        "blocked until the host signals"
    );
    hsa_signal_store_screlease(host, 0);
    assert_eq!(wait_eq(second, 0, 10 * SECOND), 0);
    assert_eq!(hsa_signal_load_acquire(first), 0);
    hsa_queue_destroy(q1);
    hsa_queue_destroy(q2);
}

#[test]
fn barrier_or_completes_when_any_dependency_is_zero() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    let a = signal(1);
    let b = signal(1);
    let done = signal(1);
    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_OR, &[a, b], done)) };
    assert_eq!(wait_eq(done, 0, 20_000_000), 1);
    hsa_signal_store_screlease(b, 0);
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    assert_eq!(hsa_signal_load_relaxed(a), 1);
    hsa_queue_destroy(q);
}

static ERRORS: Mutex<Vec<(u32, usize)>> = Mutex::new(Vec::new());
static CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn on_error(status: hsa_status_t, q: *mut hsa_queue_t, _data: *mut c_void) {
    ERRORS.lock().unwrap().push((status, q as usize));
    CALLS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn garbage_kernel_object_reaches_error_callback_while_other_queue_keeps_working() {
    let _h = Hsa::init();
    let bad = queue(64, Some(on_error), std::ptr::null_mut());
    let good = queue(64, Some(on_error), std::ptr::null_mut());
    let completion = signal(1);
    let packet = hsa_kernel_dispatch_packet_t {
        header: packet_header(
            HSA_PACKET_TYPE_KERNEL_DISPATCH,
            true,
            HSA_FENCE_SCOPE_SYSTEM,
            HSA_FENCE_SCOPE_SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: 64,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object: 0x1234_5678,
        completion_signal: completion,
        ..Default::default()
    };
    unsafe { publish(bad, packet) };
    let t = std::time::Instant::now();
    while !ERRORS.lock().unwrap().iter().any(|e| e.1 == bad as usize) {
        hsa_signal_load_relaxed(completion);
        assert!(t.elapsed().as_secs() < 10, "error callback never came");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (st, _) = *ERRORS
        .lock()
        .unwrap()
        .iter()
        .find(|e| e.1 == bad as usize)
        .unwrap();
    assert_ne!(st, status::SUCCESS);
    assert_eq!(
        hsa_signal_load_relaxed(completion),
        1,
        "failed dispatch leaves its signal alone"
    );
    // A packet behind the failure never runs; the other queue still works.
    let after = signal(1);
    unsafe { publish(bad, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], after)) };
    let ok = signal(1);
    unsafe { publish(good, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], ok)) };
    assert_eq!(wait_eq(ok, 0, 10 * SECOND), 0);
    assert_eq!(wait_eq(after, 0, 20_000_000), 1);
    assert_eq!(hsa_queue_destroy(bad), status::SUCCESS);
    hsa_queue_destroy(good);
}

#[test]
fn vendor_packet_type_is_rejected_through_error_callback() {
    let _h = Hsa::init();
    let q = queue(64, Some(on_error), std::ptr::null_mut());
    let mut p = barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], hsa_signal_t::default());
    p.header = packet_header(HSA_PACKET_TYPE_VENDOR_SPECIFIC, false, 0, 0);
    unsafe { publish(q, p) };
    let t = std::time::Instant::now();
    loop {
        hsa_queue_load_read_index_relaxed(q);
        if let Some(e) = ERRORS.lock().unwrap().iter().find(|e| e.1 == q as usize) {
            assert_eq!(e.0, status::ERROR_INVALID_PACKET_FORMAT);
            break;
        }
        assert!(t.elapsed().as_secs() < 10);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    hsa_queue_destroy(q);
}

fn barrier_value(
    signal: hsa_signal_t,
    value: i64,
    mask: i64,
    cond: u32,
    completion: hsa_signal_t,
) -> hsa_amd_barrier_value_packet_t {
    hsa_amd_barrier_value_packet_t {
        header: packet_header(
            HSA_PACKET_TYPE_VENDOR_SPECIFIC,
            true,
            HSA_FENCE_SCOPE_SYSTEM,
            HSA_FENCE_SCOPE_SYSTEM,
        ),
        amd_format: HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
        signal,
        value,
        mask,
        cond,
        completion_signal: completion,
        ..Default::default()
    }
}

/// Waits briefly and says whether `done` is still 1 (the packet still holds its queue).
fn still_waiting(done: hsa_signal_t) -> bool {
    wait_eq(done, 0, 20_000_000) == 1
}

#[test]
fn barrier_value_packet_waits_for_its_signal_under_the_mask() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    let s = signal(0);
    let done = signal(1);
    let after = signal(1);
    // Waits until the low byte is >= 5; the high bits are masked away.
    // SAFETY (publish calls in these tests): live queues, 64-byte packets.
    unsafe { publish(q, barrier_value(s, 5, 0xff, HSA_SIGNAL_CONDITION_GTE, done)) };
    unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], after)) };
    assert!(still_waiting(done));
    hsa_signal_store_screlease(s, 0x7700);
    assert!(still_waiting(done), "masked-away bits do not satisfy it");
    assert_eq!(hsa_signal_load_acquire(after), 1, "later packets wait");
    hsa_signal_store_screlease(s, 0x7706);
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    assert_eq!(wait_eq(after, 0, 10 * SECOND), 0);
    hsa_queue_destroy(q);
}

#[test]
fn barrier_value_packet_on_memory_reads_the_value_where_a_signal_keeps_it() {
    let _h = Hsa::init();
    let q = queue(64, None, std::ptr::null_mut());
    let words = pool_alloc(host_visible_pool(), 4096).unwrap() as *mut u64;
    // SAFETY (this test's accesses of `words`): 4096 bytes of host-visible memory.
    unsafe { words.write_volatile(0) };
    unsafe { words.add(1).write_volatile(0) };
    // The handle is where an amd_signal_t would start for its value to be `words[1]`.
    let at = |i: usize| hsa_signal_t {
        handle: words as u64 + 8 * i as u64 - 8,
    };
    let (eq, ne, lt, gte) = (signal(1), signal(1), signal(1), signal(1));
    unsafe { publish(q, barrier_value(at(1), 3, -1, HSA_SIGNAL_CONDITION_EQ, eq)) };
    unsafe { publish(q, barrier_value(at(1), 3, -1, HSA_SIGNAL_CONDITION_NE, ne)) };
    // Unsigned: u64::MAX is not below 4.
    unsafe { publish(q, barrier_value(at(1), 4, -1, HSA_SIGNAL_CONDITION_LT, lt)) };
    // The upper 32 bits only, compared unsigned: 0x8000_0000 there is >= 0x7fff_ffff.
    let upper = 0xffff_ffff_0000_0000u64 as i64;
    unsafe {
        publish(
            q,
            barrier_value(
                at(1),
                0x7fff_ffff << 32,
                upper,
                HSA_SIGNAL_CONDITION_GTE,
                gte,
            ),
        )
    };
    assert!(still_waiting(eq));
    unsafe { AtomicU64::from_ptr(words.add(1)).store(3, Ordering::Release) };
    assert_eq!(wait_eq(eq, 0, 10 * SECOND), 0);
    assert!(
        still_waiting(ne),
        "NE holds only once the value moves off 3"
    );
    unsafe { AtomicU64::from_ptr(words.add(1)).store(u64::MAX, Ordering::Release) };
    assert_eq!(wait_eq(ne, 0, 10 * SECOND), 0);
    assert!(
        still_waiting(lt),
        "compared unsigned, u64::MAX is not below 4"
    );
    unsafe { AtomicU64::from_ptr(words.add(1)).store(2, Ordering::Release) };
    assert_eq!(wait_eq(lt, 0, 10 * SECOND), 0);
    assert!(still_waiting(gte));
    unsafe { AtomicU64::from_ptr(words.add(1)).store(0x8000_0000_0000_0001, Ordering::Release) };
    assert_eq!(wait_eq(gte, 0, 10 * SECOND), 0);
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    assert_eq!(hsa_amd_memory_pool_free(words.cast()), status::SUCCESS);
}

#[test]
fn barrier_value_packets_that_cannot_be_run_fail_their_queue() {
    let _h = Hsa::init();
    let words = pool_alloc(host_visible_pool(), 4096).unwrap() as u64;
    let stack_value = 0u64;
    let bad = [
        // An AMD format other than barrier-value.
        {
            let mut p = barrier_value(signal(0), 0, -1, HSA_SIGNAL_CONDITION_EQ, signal(1));
            p.amd_format = 7;
            (p, status::ERROR_INVALID_PACKET_FORMAT)
        },
        // A condition that is not one.
        (
            barrier_value(signal(0), 0, -1, 9, signal(1)),
            status::ERROR_INVALID_PACKET_FORMAT,
        ),
        // Memory the device does not reach (the host stack).
        (
            barrier_value(
                hsa_signal_t {
                    handle: &stack_value as *const u64 as u64 - 8,
                },
                0,
                -1,
                HSA_SIGNAL_CONDITION_EQ,
                signal(1),
            ),
            status::ERROR_INVALID_SIGNAL,
        ),
        // A value that is not 8-byte aligned.
        (
            barrier_value(
                hsa_signal_t { handle: words - 4 },
                0,
                -1,
                HSA_SIGNAL_CONDITION_EQ,
                signal(1),
            ),
            status::ERROR_INVALID_SIGNAL,
        ),
    ];
    for (i, (packet, want)) in bad.into_iter().enumerate() {
        let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, packet) };
        assert_eq!(queue_error(q), want, "bad packet {i}");
        hsa_queue_destroy(q);
    }
    assert_eq!(
        hsa_amd_memory_pool_free(words as *mut c_void),
        status::SUCCESS
    );
}
