//! Decoded code is kept across dispatches of the same kernel (per host worker), so it must
//! notice when the code at the kernel's address changed: a kept decode must never run
//! instructions that are no longer in memory.
//!
//! One test function, so that nothing else in this binary runs dispatches at the same time:
//! the dispatches here run on the caller's thread and reuse one idle worker, which is what
//! makes the second dispatch of an address find the first one's decoded code.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, DispatchError, ExecConfig, GfxModel};

const INLINE: ExecConfig = ExecConfig {
    worker_threads: 1,
    compute_units: 80,
    ..ExecConfig::BASE
};

const S_NOP: u32 = 0xbf80_0000;
const S_ENDPGM: u32 = 0xbf81_0000;
/// SOP2 opcode 53: unassigned on GFX9.
const UNKNOWN: u32 = 0x8000_0000 | (53 << 23);
/// `v_lshl_add_u64 v[4:5], v[4:5], 0, v[0:1]`: gfx942 only.
const LSHL_ADD_U64: [u32; 2] = [0xd208_0004, 0x0401_0004];

/// A kernel descriptor with its code at +256, in a buffer the test can rewrite.
struct Kernel {
    buf: Aligned,
    addr: u64,
    mem: Ranges,
}

impl Kernel {
    fn new() -> Kernel {
        let (buf, addr) = handmade_kernel();
        let mem = Ranges::default();
        mem.add(addr, 4096);
        Kernel { buf, addr, mem }
    }

    fn write_code(&mut self, code: &[u32]) {
        code_words(&mut self.buf, code);
    }

    fn run(&self, model: GfxModel) -> Result<(), DispatchError> {
        let (d, _p) = packet(model, self.addr, 0, [64, 1, 1], [64, 1, 1], 0, &self.mem);
        run_dispatch(&d, &self.mem, &INLINE)
    }
}

#[test]
fn changed_code_at_a_kept_address_is_decoded_again() {
    for model in MODELS {
        let mut k = Kernel::new();
        k.write_code(&[S_NOP, S_ENDPGM]);
        k.run(model).expect("s_nop; s_endpgm runs");
        // Same kernel, same address, new code: the kept decode of `s_nop` must not run.
        k.write_code(&[UNKNOWN, S_ENDPGM]);
        match k.run(model) {
            Err(DispatchError::UnknownInstruction { words, .. }) => assert_eq!(words[0], UNKNOWN),
            other => panic!("{model:?}: the old decode ran: {other:?}"),
        }
        // And back: the failed decode is not kept either.
        k.write_code(&[S_NOP, S_NOP, S_ENDPGM]);
        k.run(model).expect("the restored code runs");
        // A longer program over a shorter one: the third word was never decoded before.
        k.write_code(&[S_NOP, S_NOP, UNKNOWN, S_ENDPGM]);
        assert!(matches!(
            k.run(model),
            Err(DispatchError::UnknownInstruction { .. })
        ));
    }

    // The decode of one model is not the other's: gfx942-only code at an address that
    // gfx942 ran must still be unknown to gfx90a.
    let mut k = Kernel::new();
    k.write_code(&[LSHL_ADD_U64[0], LSHL_ADD_U64[1], S_ENDPGM]);
    k.run(GfxModel::Gfx942).expect("gfx942 runs v_lshl_add_u64");
    assert!(matches!(
        k.run(GfxModel::Gfx90a),
        Err(DispatchError::UnknownInstruction { .. })
    ));

    // Unchanged code keeps running (the kept decode is used, and is right).
    let mut k = Kernel::new();
    k.write_code(&[S_NOP, S_ENDPGM]);
    for _ in 0..3 {
        k.run(GfxModel::Gfx942).expect("unchanged code runs again");
    }
}
