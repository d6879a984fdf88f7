//! Queue reservations (`hsa/queue.rs`) on hsasim: several packets published with one doorbell,
//! a reservation dropped half-written leaves no hole that would stop the queue, and producers
//! that share a queue may ring its doorbell out of order.

use amdhip64::hsa::queue::{barrier_and, Queue};
use amdhip64::hsa::signal::Signal;
use amdhip64::runtime::runtime;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

/// Counts `hipshim::doorbell` events, the log line every doorbell ring emits.
struct DoorbellCounter;

static RINGS: AtomicUsize = AtomicUsize::new(0);

impl Subscriber for DoorbellCounter {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.target() == "hipshim::doorbell" {
            Interest::always()
        } else {
            Interest::never()
        }
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        meta.target() == "hipshim::doorbell"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &Event<'_>) {
        RINGS.fetch_add(1, Ordering::SeqCst);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The tests share the process's one tracing subscriber and count doorbells: one at a time.
static SERIAL: parking_lot::Mutex<()> = parking_lot::const_mutex(());

fn setup() -> (Queue, &'static amdhip64::runtime::device::Device) {
    // Installed before the runtime, whose own logging then leaves it in place.
    let _ = tracing::subscriber::set_global_default(DoorbellCounter);
    let rt = runtime().expect("hipshim runtime on hsasim");
    let device = &rt.devices[0];
    let queue = device
        .queue_factory()
        .create(64, None, None)
        .expect("a queue");
    (queue, device)
}

/// Waits for `signal` to read 0; false if it still does not after `limit` (the queue stalled).
fn completes(signal: &Signal, hz: u64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    signal
        .wait_zero(hz, || (Instant::now() > deadline).then_some(()))
        .is_ok()
}

const STALL: Duration = Duration::from_secs(20);

#[test]
fn a_reservation_publishes_its_packets_in_order_with_one_doorbell() {
    let _serial = SERIAL.lock();
    let (queue, device) = setup();
    let done = Signal::new(device.api, 3).unwrap();
    let rings_before = RINGS.load(Ordering::SeqCst);
    let mut slots = queue.reserve(3);
    let first = slots.next_index();
    let indices: Vec<u64> = (0..3)
        .map(|_| slots.write(&barrier_and(&[], done.handle)))
        .collect();
    let last = slots.ring();
    assert_eq!(indices, vec![first, first + 1, first + 2]);
    assert_eq!(last, first + 2);
    assert_eq!(
        RINGS.load(Ordering::SeqCst) - rings_before,
        1,
        "one doorbell"
    );
    assert!(completes(&done, device.timestamp_hz, STALL));
}

#[test]
fn a_reservation_dropped_half_written_leaves_no_hole_in_the_ring() {
    let _serial = SERIAL.lock();
    let (queue, device) = setup();
    let first = Signal::new(device.api, 1).unwrap();
    {
        let mut slots = queue.reserve(3);
        slots.write(&barrier_and(&[], first.handle));
        // Two slots never written: an INVALID header there would stop the queue for good.
    }
    let after = Signal::new(device.api, 1).unwrap();
    queue.publish(&barrier_and(&[], after.handle));
    assert!(completes(&first, device.timestamp_hz, STALL));
    assert!(
        completes(&after, device.timestamp_hz, STALL),
        "the packet behind the dropped reservation never ran"
    );
}

#[test]
fn producers_sharing_a_queue_may_ring_its_doorbell_out_of_order() {
    let _serial = SERIAL.lock();
    let (queue, device) = setup();
    let (early, late) = (
        Signal::new(device.api, 1).unwrap(),
        Signal::new(device.api, 1).unwrap(),
    );
    let mut first = queue.reserve(1);
    let mut second = queue.reserve(1);
    // The later slot is published and rung while the earlier one still reads INVALID: the
    // packet processor must neither skip the earlier slot nor run past it.
    second.write(&barrier_and(&[], late.handle));
    second.ring();
    assert!(
        !completes(&late, device.timestamp_hz, Duration::from_millis(200)),
        "a packet ran ahead of an unpublished one"
    );
    // Its doorbell value is lower than the one already rung.
    first.write(&barrier_and(&[], early.handle));
    first.ring();
    assert!(completes(&early, device.timestamp_hz, STALL));
    assert!(completes(&late, device.timestamp_hz, STALL));
}
