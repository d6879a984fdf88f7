mod common;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
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
