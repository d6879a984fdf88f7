//! `s_sendmsg sendmsg(MSG_INTERRUPT)` reaches the host through `GuestMemory::interrupt` (what
//! the device library's `__ockl_hsa_signal_add` does after changing a signal), once per wave,
//! with M0's low byte; other messages do not.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, ExecConfig, GuestMemory};
use std::sync::Mutex;

/// The test's memory, counting interrupts.
#[derive(Default)]
struct Recording {
    ranges: Ranges,
    interrupts: Mutex<Vec<u32>>,
}

impl GuestMemory for Recording {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        self.ranges.translate(address, len)
    }

    fn interrupt(&self, data: u32) {
        self.interrupts.lock().unwrap().push(data);
    }
}

#[test]
fn msg_interrupt_calls_the_host_hook_with_m0() {
    let code = [
        0xbefc_00ff, // s_mov_b32 m0, 0x12a
        0x0000_012a,
        0xbf90_0022, // s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 0): nothing for the host
        0xbf90_0001, // s_sendmsg sendmsg(MSG_INTERRUPT)
        0xbf81_0000, // s_endpgm
    ];
    for model in MODELS {
        let mem = Recording::default();
        let (mut buf, kd) = handmade_kernel();
        code_words(&mut buf, &code);
        mem.ranges.add(kd, 256 + 4 * code.len() as u64);
        let (d, _p) = packet(model, kd, 0, [128, 1, 1], [64, 1, 1], 0, &mem.ranges);
        run_dispatch(&d, &mem, &ExecConfig::BASE).unwrap();
        assert_eq!(*mem.interrupts.lock().unwrap(), [0x2a, 0x2a], "{model:?}");
    }
}
