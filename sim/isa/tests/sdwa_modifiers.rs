//! SDWA's abs and neg act on the sign bit of the operation's source type, after the select:
//! bit 15 for an f16 operation even when the select is the whole dword, bit 31 for an f32
//! operation even when the select is a word. Both forms are what LLVM emits: `fabs` of an f16
//! value feeding a compare becomes `|v2| src0_sel:DWORD` (the differential tester's gfx90a
//! seed 10542, where the interpreter cleared bit 31 and took the wrong branch), and
//! `fneg(bitcast(x >> 16))` feeding an f32 multiply becomes `-v2 src0_sel:WORD_1`.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, ExecConfig};

/// f16 bit patterns and their values.
const HALVES: [(u16, f32); 5] = [
    (0x3800, 0.5),
    (0x3c00, 1.0),
    (0x4000, 2.0),
    (0x4200, 3.0),
    (0x4400, 4.0),
];

/// Per lane: `v_cmp_le_f16_sdwa |a|, b.hi` (src0_sel:DWORD), `v_mul_f32_sdwa -a.hi, b`
/// (src0_sel:WORD_1); returns (compare mask, product bits of each lane).
fn run(model: hsasim_isa::GfxModel, a: &[u32; 64], b: &[u32; 64]) -> (u64, Vec<u32>) {
    let mem = Ranges::default();
    let out = vec![[0u32; 4]; 64];
    mem.add_slice(a);
    mem.add_slice(b);
    mem.add_slice(&out);
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    let (pa, pb, po) = (a.as_ptr() as u64, b.as_ptr() as u64, out.as_ptr() as u64);
    let code = vec![
        0xbe80_00ff,
        lo(pa), // s_mov_b32 s0, lo(a)
        0xbe81_00ff,
        hi(pa),
        0xbe82_00ff,
        lo(pb),
        0xbe83_00ff,
        hi(pb),
        0xbe86_00ff,
        lo(po),
        0xbe87_00ff,
        hi(po),
        0x2402_0082, // v_lshlrev_b32 v1, 2, v0
        0xdc50_8000,
        0x0200_0001, // global_load_dword v2, v1, s[0:1]
        0xdc50_8000,
        0x0802_0001, // global_load_dword v8, v1, s[2:3]
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0x7c46_10f9,
        0x0526_8802, // v_cmp_le_f16_sdwa s[8:9], |v2|, v8 src0_sel:DWORD src1_sel:WORD_1
        0x0a08_10f9,
        0x0615_0602, // v_mul_f32_sdwa v4, -v2, v8 ... src0_sel:WORD_1 src1_sel:DWORD
        0x7e0c_0208, // v_mov_b32 v6, s8
        0x7e0e_0209, // v_mov_b32 v7, s9
        0x2402_0084, // v_lshlrev_b32 v1, 4, v0
        0xdc7c_8000,
        0x0006_0401, // global_store_dwordx4 v1, v[4:7], s[6:7]
        0xbf81_0000, // s_endpgm
    ];
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, &code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (disp, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    run_dispatch(&disp, &mem, &ExecConfig::BASE).unwrap();
    // SAFETY: the dispatch has finished; `out` was written through its address.
    let got: Vec<[u32; 4]> = (0..64)
        .map(|l| unsafe { std::ptr::read_volatile(&out[l]) })
        .collect();
    let mask = got[0][2] as u64 | (got[0][3] as u64) << 32;
    (mask, got.iter().map(|g| g[0]).collect())
}

#[test]
fn sdwa_abs_and_neg_act_on_the_sign_of_the_operations_source_type() {
    for model in MODELS {
        let mut a = [0u32; 64];
        let mut b = [0u32; 64];
        let mut want_mask = 0u64;
        for l in 0..64 {
            let (x, xv) = HALVES[l % 5];
            let (y, yv) = HALVES[(l / 5) % 5];
            let negative = l % 2 == 1;
            // The high half of `a` and the low half of `b` are not operands of the compare.
            a[l] = (0xbeef_0000 + (l as u32) * 0x1_0000)
                | u32::from(x)
                | if negative { 0x8000 } else { 0 };
            b[l] = u32::from(y) << 16 | 0x7bff;
            if xv.abs() <= yv {
                want_mask |= 1 << l;
            }
        }
        let (mask, products) = run(model, &a, &b);
        assert_eq!(
            mask, want_mask,
            "{model:?}: |a| <= b.hi with src0_sel:DWORD compares the f16 magnitude"
        );
        for (l, &product) in products.iter().enumerate() {
            // -(a >> 16) as an f32 is a negative denormal, flushed (the descriptor's f32
            // denormal mode is 0): -0 times a positive b is -0.
            assert_eq!(
                product, 0x8000_0000,
                "{model:?} lane {l}: neg of a word-selected f32 source flips bit 31"
            );
        }
    }
}
