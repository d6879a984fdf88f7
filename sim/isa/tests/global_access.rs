//! Global loads whose lanes are a scalar base plus 32-bit offsets run on the offsets'
//! halves (`exec::vmem`): the cases where that path could differ from the lane-by-lane
//! one. A destination that is also the offset register reads every lane's old offset, and
//! lanes outside EXEC keep their value. Eight-byte accesses take that path too, each lane's
//! 8 bytes one access.

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

/// `global_load_dwordx2` and `global_store_dwordx2` on the offsets' halves: lanes back to
/// back (dense) or reversed, through an SGPR base or a VGPR address pair, under a full and a
/// partial EXEC. The load's destination v[2:3] starts with the offsets (v2) and 7 (v3): an
/// inactive lane keeps both, an active one gets its element. The store under the same EXEC
/// writes each active lane's element back to `out` at the lane's offset (so `out` holds the
/// element where the lane that read it was active, else its 0xdead fill); v[2:3] of every
/// lane then goes to `regs[lane]` under a full EXEC.
#[test]
fn eight_byte_loads_and_stores_move_each_lane_whole() {
    let a: Vec<u64> = (0..64u64)
        .map(|k| 0x1111_0000_0000_0000 * (k % 15 + 1) + k)
        .collect();
    let addr_pair = |base_lo: u32, dst: u32| {
        // v_add_co_u32 v[dst], vcc, s[base_lo], v6; v_mov_b32 v[dst+1], s[base_lo+1];
        // v_addc_co_u32 v[dst+1], vcc, 0, v[dst+1], vcc
        [
            0x3200_0c00 | dst << 17 | base_lo,
            0x7e00_0200 | (dst + 1) << 17 | (base_lo + 1),
            0x3800_0080 | (dst + 1) << 17 | (dst + 1) << 9,
        ]
    };
    for model in MODELS {
        for reversed in [false, true] {
            for pair in [false, true] {
                for exec_lo in [u32::MAX, 0x4ff0_f20f] {
                    let mem = Ranges::default();
                    mem.add_slice(&a);
                    let out = [0xdead_u64; 64];
                    mem.add_slice(&out);
                    let regs = [0u64; 64];
                    mem.add_slice(&regs);
                    let s_pair = |n: u32, v: u64| {
                        [
                            0xbe80_00ff | n << 16,
                            v as u32,
                            0xbe80_00ff | (n + 1) << 16,
                            (v >> 32) as u32,
                        ]
                    };
                    let mut code = [
                        s_pair(0, a.as_ptr() as u64),
                        s_pair(2, out.as_ptr() as u64),
                        s_pair(6, regs.as_ptr() as u64),
                    ]
                    .concat();
                    code.push(0x2404_0083); // v_lshlrev_b32 v2, 3, v0
                    if reversed {
                        code.extend([0x6a04_04ff, 504]); // v_sub_u32 v2, 504, v2
                    }
                    code.extend([0x7e0c_0302, 0x7e06_0287]); // v_mov_b32 v6, v2; v_mov_b32 v3, 7
                    code.extend(addr_pair(0, 4)); // v[4:5] = a + offset
                    code.extend(addr_pair(2, 8)); // v[8:9] = out + offset
                    code.extend([0xbefe_00ff, exec_lo]); // s_mov_b32 exec_lo, ..
                    if pair {
                        code.extend([0xdc54_8000, 0x027f_0004]); // global_load_dwordx2 v[2:3], v[4:5], off
                    } else {
                        code.extend([0xdc54_8000, 0x0200_0002]); // global_load_dwordx2 v[2:3], v2, s[0:1]
                    }
                    code.push(0xbf8c_0f70); // s_waitcnt vmcnt(0)
                    if pair {
                        code.extend([0xdc74_8000, 0x007f_0208]); // global_store_dwordx2 v[8:9], v[2:3], off
                    } else {
                        code.extend([0xdc74_8000, 0x0002_0206]); // global_store_dwordx2 v6, v[2:3], s[2:3]
                    }
                    code.extend([
                        0xbefe_00c1, // s_mov_b32 exec_lo, -1
                        0x2414_0083, // v_lshlrev_b32 v10, 3, v0
                        0xdc74_8000,
                        0x0006_020a, // global_store_dwordx2 v10, v[2:3], s[6:7]
                        0xbf81_0000, // s_endpgm
                    ]);
                    let (mut buf, kd) = handmade_kernel();
                    code_words(&mut buf, &code);
                    mem.add(kd, 256 + 4 * code.len() as u64);
                    let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
                    run_dispatch(&d, &mem, &ExecConfig::BASE).unwrap();
                    // SAFETY: the dispatch has finished; both were written through their
                    // addresses.
                    let (out, regs) = unsafe {
                        (
                            std::ptr::read_volatile(&out),
                            std::ptr::read_volatile(&regs),
                        )
                    };
                    let case = format!(
                        "{model:?} reversed {reversed} address pair {pair} exec_lo {exec_lo:#x}"
                    );
                    for (lane, &got) in regs.iter().enumerate() {
                        let element = if reversed { 63 - lane } else { lane };
                        let active = lane >= 32 || exec_lo >> lane & 1 != 0;
                        let (reg, stored) = if active {
                            (a[element], a[element])
                        } else {
                            ((7 << 32) | (8 * element as u64), 0xdead)
                        };
                        assert_eq!(got, reg, "{case}: v[2:3] of lane {lane}");
                        assert_eq!(out[element], stored, "{case}: out[{element}]");
                    }
                }
            }
        }
    }
}
