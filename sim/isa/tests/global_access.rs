//! Global loads whose lanes are a scalar base plus 32-bit offsets run on the offsets'
//! halves (`exec::vmem`): the cases where that path could differ from the lane-by-lane
//! one. A destination that is also the offset register reads every lane's old offset, and
//! lanes outside EXEC keep their value.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, ExecConfig};

/// Loads `a[63 - lane]` into v1 through offsets held in v1 itself (a scattered gather,
/// reversed), under `exec_lo` (EXEC's high half stays all ones), then stores v1 of every
/// lane to `out[lane]`.
fn kernel(a: u64, out: u64, exec_lo: u32) -> Vec<u32> {
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    vec![
        0xbe80_00ff, // s_mov_b32 s0, a lo
        lo(a),
        0xbe81_00ff, // s_mov_b32 s1, a hi
        hi(a),
        0xbe82_00ff, // s_mov_b32 s2, out lo
        lo(out),
        0xbe83_00ff, // s_mov_b32 s3, out hi
        hi(out),
        0x2402_0082, // v_lshlrev_b32 v1, 2, v0
        0x6a02_02ff, // v_sub_u32 v1, 252, v1
        252,
        0xbefe_00ff, // s_mov_b32 exec_lo, exec_lo
        exec_lo,
        0xdc50_8000, // global_load_dword v1, v1, s[0:1]
        0x0100_0001,
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0xbefe_00c1, // s_mov_b32 exec_lo, -1
        0x2404_0082, // v_lshlrev_b32 v2, 2, v0
        0xdc70_8000, // global_store_dword v2, v1, s[2:3]
        0x0002_0102,
        0xbf81_0000, // s_endpgm
    ]
}

fn run(exec_lo: u32) {
    let a: Vec<u32> = (0..64).map(|k| 1000 + k).collect();
    for model in MODELS {
        let mem = Ranges::default();
        mem.add_slice(&a);
        let out = [0u32; 64];
        mem.add_slice(&out);
        let (mut buf, kd) = handmade_kernel();
        let code = kernel(a.as_ptr() as u64, out.as_ptr() as u64, exec_lo);
        code_words(&mut buf, &code);
        mem.add(kd, 256 + 4 * code.len() as u64);
        let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
        run_dispatch(&d, &mem, &ExecConfig::BASE).unwrap();
        // SAFETY: the dispatch has finished; `out` was written through its address.
        let got = unsafe { std::ptr::read_volatile(&out) };
        for lane in 0..64 {
            let active = lane >= 32 || exec_lo >> lane & 1 != 0;
            let want = if active {
                a[63 - lane]
            } else {
                4 * (63 - lane as u32)
            };
            assert_eq!(
                got[lane], want,
                "{model:?} lane {lane}, exec_lo {exec_lo:#x}"
            );
        }
    }
}

#[test]
fn a_gather_into_its_offset_register_reads_every_old_offset() {
    run(u32::MAX);
}

#[test]
fn a_gather_under_partial_exec_leaves_the_other_lanes() {
    run(0xaaaa_5555);
}
