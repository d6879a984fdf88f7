//! Virtual time, host loads of a signal whose device write lies in the host's virtual future
//! (`VirtualTime::host_load`): the load does not show that write yet, and shows everything
//! else, including what the host added to the value in memory without an HSA call (as
//! runtimes count a stream's packets in flight).

use hsa_abi::AMD_SIGNAL_KIND_USER;
use hsasim::signal::Signal;
use hsasim::virtual_time::{self, Completion, SubmittedPacket, VirtualTime, Work};
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[test]
fn a_count_raised_in_memory_survives_a_device_write_the_host_cannot_see_yet() {
    let model = hsasim_vtime::by_name("mi300x").expect("the MI300X table");
    let vt = VirtualTime::new(model);
    // One packet in flight on a made-up queue, counted on `counter`.
    let counter = Arc::new(Signal::new(AMD_SIGNAL_KIND_USER, 1, Vec::new(), 0).unwrap());
    let handle = counter.handle().handle;
    let queue = 0x1000;
    vt.doorbell(queue, 0, &|_| SubmittedPacket {
        completes: handle,
        barrier: true,
        dispatch: false,
    });
    let seq = vt.packet_entry(queue, 0);
    let work = Work::Barrier {
        barrier: true,
        deps: Vec::new(),
        any: false,
    };
    let completion = Completion {
        signal: Some(counter.clone()),
        timestamps: false,
    };
    let times = vt.finish(seq, work, completion, true).expect("committed");
    assert!(
        times.end > virtual_time::host_now(),
        "the packet ends in the host's virtual future"
    );
    let load = || counter.load(Ordering::Acquire);
    let mut no_work = || false;
    assert_eq!(load(), 0, "written in memory");
    assert_eq!(
        vt.host_load(handle, &load, false, &mut no_work),
        1,
        "the host does not see the write yet"
    );
    // The host publishes two more packets, counting them up in memory.
    counter.rmw(Ordering::Relaxed, |v, o| v.fetch_add(2, o));
    assert_eq!(
        vt.host_load(handle, &load, false, &mut no_work),
        3,
        "the two packets counted up, and the unseen write still not seen"
    );
    // Once the host's clock passes the write, it shows.
    virtual_time::host_observe(times.end);
    assert_eq!(vt.host_load(handle, &load, false, &mut no_work), 2);
    vt.retire();
}
