//! Legacy null-stream ordering looks only at the blocking streams that did something since
//! the null stream last waited for them (`DeviceStreams`'s `unseen` list), not at every stream
//! of the device: a null-stream operation costs the same with 1 or 300 idle blocking streams.

use amdhip64::runtime::runtime;
use amdhip64::runtime::stream::{self, NON_BLOCKING};

#[test]
fn null_stream_operations_look_only_at_streams_with_unseen_work() {
    let rt = runtime().expect("hipshim runtime on hsasim");
    let device = rt.current_device().expect("a current device");
    let streams = &device.streams;
    let null = streams.null_stream();

    let blocking: Vec<_> = (0..300)
        .map(|_| stream::create(device, 0, 0, None).expect("blocking stream"))
        .collect();
    let non_blocking = stream::create(device, NON_BLOCKING, 0, None).expect("non-blocking stream");
    let on = |handle| stream::lookup(rt.devices, handle).expect("live stream").1;
    // One null-stream operation first, so the list starts from what it has seen.
    null.record(streams).expect("null-stream record");
    assert_eq!(streams.unseen_len(), 0);

    for &handle in &blocking {
        on(handle).record(streams).expect("record");
        on(handle)
            .record(streams)
            .expect("a second operation lists nothing new");
    }
    on(non_blocking).record(streams).expect("record");
    assert_eq!(
        streams.unseen_len(),
        blocking.len(),
        "each busy blocking stream is listed once; non-blocking streams never"
    );

    // The null stream waits for all of them, and then they are seen.
    null.record(streams).expect("null-stream record");
    assert_eq!(streams.unseen_len(), 0);

    // One stream does more work: the next null-stream operation has one entry to look at.
    on(blocking[7]).record(streams).expect("record");
    assert_eq!(streams.unseen_len(), 1);
    null.record(streams).expect("null-stream record");
    assert_eq!(streams.unseen_len(), 0);
    null.synchronize(streams).expect("null stream completes");

    for handle in blocking {
        stream::destroy(rt.devices, handle).expect("destroy");
    }
    stream::destroy(rt.devices, non_blocking).expect("destroy");
}
