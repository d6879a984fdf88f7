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

/// Counts `hipshim::doorbell` events, the log line every doorbell ring emits, and
/// `hipshim::read_index` events, one per HSA read-index load.
struct DoorbellCounter;

static RINGS: AtomicUsize = AtomicUsize::new(0);
static READ_INDEX_LOADS: AtomicUsize = AtomicUsize::new(0);

fn counted(target: &str) -> bool {
    target == "hipshim::doorbell" || target == "hipshim::read_index"
}

impl Subscriber for DoorbellCounter {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if counted(meta.target()) {
            Interest::always()
        } else {
            Interest::never()
        }
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        counted(meta.target())
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() == "hipshim::doorbell" {
            RINGS.fetch_add(1, Ordering::SeqCst);
        } else {
            READ_INDEX_LOADS.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The tests share the process's one tracing subscriber and count doorbells: one at a time.
static SERIAL: parking_lot::Mutex<()> = parking_lot::const_mutex(());

fn setup() -> (Queue, &'static amdhip64::runtime::devices::device::Device) {
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

/// A reservation reads the queue's read index only when the ring may be full by what it last
/// saw: on a 64-slot queue, 10 packets need no load at all, and 400 packets published in
/// batches the device keeps up with (the ring wraps six times) a few per wrap, not one per
/// packet. Every packet still runs: a stale read index only ever understates the room.
#[test]
fn reservations_read_the_read_index_only_when_the_ring_may_be_full() {
    let _serial = SERIAL.lock();
    let (queue, device) = setup();
    let loads_before = READ_INDEX_LOADS.load(Ordering::SeqCst);
    let first = Signal::new(device.api, 10).unwrap();
    for _ in 0..10 {
        queue.publish(&barrier_and(&[], first.handle));
    }
    assert_eq!(
        READ_INDEX_LOADS.load(Ordering::SeqCst) - loads_before,
        0,
        "a fresh queue with room needs no read-index load"
    );
    assert!(completes(&first, device.timestamp_hz, STALL));

    let loads_before = READ_INDEX_LOADS.load(Ordering::SeqCst);
    for _ in 0..400 / 16 {
        // Waiting between batches keeps the ring from filling, so that no reservation has to
        // poll for room (hsasim's deterministic mode only runs packets for a waiting thread).
        let batch = Signal::new(device.api, 16).unwrap();
        for _ in 0..16 {
            queue.publish(&barrier_and(&[], batch.handle));
        }
        assert!(
            completes(&batch, device.timestamp_hz, STALL),
            "a packet was lost"
        );
    }
    let loads = READ_INDEX_LOADS.load(Ordering::SeqCst) - loads_before;
    assert!(
        loads >= 1,
        "the ring wrapped without looking at the read index"
    );
    assert!(loads <= 20, "{loads} read-index loads for 400 packets");
}
