//! Source and output modifiers where the operation's types decide what they act on; each
//! case is code LLVM emits, found by the differential tester.
//!
//! SDWA's abs and neg act on the sign bit of the operation's source type, after the select:
//! bit 15 for an f16 operation even when the select is the whole dword, bit 31 for an f32
//! operation even when the select is a word. `fabs` of an f16 value feeding a compare becomes
//! `|v2| src0_sel:DWORD` (gfx90a seed 10542, where the interpreter cleared bit 31 and took the
//! wrong branch), and `fneg(bitcast(x >> 16))` feeding an f32 multiply `-v2 src0_sel:WORD_1`.
//!
//! VOP3 clamp and omod act on a float result whatever the sources are: clang compiles
//! `fminf(fmaxf((float)i, 0.0f), 1.0f)` to `v_cvt_f32_i32_e64 v, s clamp` (gfx90a seed
//! 20896, where the interpreter skipped the clamp of conversions from integers).
//!
//! The operand forms of gfx942's `v_lshl_add_u64` (the address arithmetic every kernel
//! runs, each form its own loop) and of `v_lshlrev_b64` by one shift against the host, and
//! `v_swap_b32` (whole rows under a full EXEC) under both kinds of EXEC; the carry ops
//! (gfx90a's 64-bit address arithmetic) against 64-bit host arithmetic; the 32-bit
//! compares, each condition its own handler, against the host.

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

/// Runs `body` on 64 lanes with `a[lane]` in v2 and `b[lane]` in v8; returns each lane's
/// v[4:7] afterwards.
fn run(model: hsasim_isa::GfxModel, body: &[u32], a: &[u32; 64], b: &[u32; 64]) -> Vec<[u32; 4]> {
    let mem = Ranges::default();
    let out = vec![[0u32; 4]; 64];
    mem.add_slice(a);
    mem.add_slice(b);
    mem.add_slice(&out);
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    let (pa, pb, po) = (a.as_ptr() as u64, b.as_ptr() as u64, out.as_ptr() as u64);
    let mut code = vec![
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
    ];
    code.extend_from_slice(body);
    code.extend_from_slice(&[
        0x2402_0084, // v_lshlrev_b32 v1, 4, v0
        0xdc7c_8000,
        0x0006_0401, // global_store_dwordx4 v1, v[4:7], s[6:7]
        0xbf81_0000, // s_endpgm
    ]);
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, &code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (disp, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    run_dispatch(&disp, &mem, &ExecConfig::BASE).unwrap();
    // SAFETY: the dispatch has finished; `out` was written through its address.
    (0..64)
        .map(|l| unsafe { std::ptr::read_volatile(&out[l]) })
        .collect()
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
        let got = run(
            model,
            &[
                0x7c46_10f9,
                0x0526_8802, // v_cmp_le_f16_sdwa s[8:9], |v2|, v8 src0_sel:DWORD src1_sel:WORD_1
                0x0a08_10f9,
                0x0615_0602, // v_mul_f32_sdwa v4, -v2, v8 ... src0_sel:WORD_1 src1_sel:DWORD
                0x7e0c_0208, // v_mov_b32 v6, s8
                0x7e0e_0209, // v_mov_b32 v7, s9
            ],
            &a,
            &b,
        );
        let mask = got[0][2] as u64 | (got[0][3] as u64) << 32;
        let products: Vec<u32> = got.iter().map(|g| g[0]).collect();
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

#[test]
fn clamp_and_omod_act_on_float_results_converted_from_integers() {
    let values: [i32; 8] = [-5, 0, 1, 2, 1000, i32::MIN, i32::MAX, -1];
    for model in MODELS {
        let mut a = [0u32; 64];
        for l in 0..64 {
            a[l] = values[l % values.len()] as u32;
        }
        let clamped = |x: f64| x.clamp(0.0, 1.0);
        let got = run(
            model,
            &[
                0xd145_8004,
                0x0000_0102, // v_cvt_f32_i32_e64 v4, v2 clamp
                0x7e0c_0902, // v_cvt_f64_i32_e32 v[6:7], v2
                0xd14f_8005,
                0x0000_0106, // v_cvt_f32_f64_e64 v5, v[6:7] clamp
                0xd144_8006,
                0x0000_0102, // v_cvt_f64_i32_e64 v[6:7], v2 clamp
            ],
            &a,
            &[0; 64],
        );
        for (l, g) in got.iter().enumerate() {
            let x = a[l] as i32 as f64;
            let want = clamped(x);
            assert_eq!(
                f32::from_bits(g[0]) as f64,
                want,
                "{model:?} lane {l}: v_cvt_f32_i32 clamp of {x}"
            );
            assert_eq!(
                f32::from_bits(g[1]) as f64,
                want,
                "{model:?} lane {l}: v_cvt_f32_f64 clamp of {x}"
            );
            let d = f64::from_bits(g[2] as u64 | (g[3] as u64) << 32);
            assert_eq!(d, want, "{model:?} lane {l}: v_cvt_f64_i32 clamp of {x}");
        }
        // omod scales the converted value before the clamp.
        let got = run(
            model,
            &[
                0xd146_8004,
                0x0800_0102, // v_cvt_f32_u32_e64 v4, v2 clamp mul:2
            ],
            &[0, 1, 2, 3].repeat(16).try_into().unwrap(),
            &[0; 64],
        );
        for (l, g) in got.iter().enumerate() {
            let want = clamped((l % 4) as f64 * 2.0);
            assert_eq!(
                f32::from_bits(g[0]) as f64,
                want,
                "{model:?} lane {l}: v_cvt_f32_u32 mul:2 clamp"
            );
        }
    }
}

/// What a case expects of each lane: its v[4:5] and v[6:7] as 64-bit values.
type Want<'a> = Box<dyn Fn(usize) -> (u64, u64) + 'a>;

/// Runs each case's code after `setup` (a in v2, b in v8, as [`run`]) and checks every
/// lane's v[4:5] and v[6:7] against the case.
fn check_pairs(
    model: hsasim_isa::GfxModel,
    setup: &[u32],
    cases: &[(&str, Vec<u32>, Want)],
    a: &[u32; 64],
    b: &[u32; 64],
) {
    for (what, code, want) in cases {
        let got = run(model, &[setup, code].concat(), a, b);
        for (l, g) in got.iter().enumerate() {
            let pair = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
            let got = (pair(g[0], g[1]), pair(g[2], g[3]));
            assert_eq!(got, want(l), "{model:?} {what}, lane {l}");
        }
    }
}

/// Each form of `v_lshl_add_u64 d, a, shift, c`: a and c register pairs or SGPR pairs, shifts
/// of 0 and more, under a full and a partial EXEC (lanes left out keep their value).
#[test]
fn lshl_add_u64_computes_every_operand_form() {
    let model = hsasim_isa::GfxModel::Gfx942;
    let a: [u32; 64] = std::array::from_fn(|l| 0xfff0_0000u32.wrapping_add(0x0101_0101 * l as u32));
    let b: [u32; 64] = std::array::from_fn(|l| 0x8765_4321u32.rotate_left(l as u32));
    let s: u64 = 0x0123_4567_89ab_cdef;
    // v[2:3] = (a, b), v[8:9] = (b, a) lane by lane.
    let ab = |l: usize| a[l] as u64 | (b[l] as u64) << 32;
    let ba = |l: usize| b[l] as u64 | (a[l] as u64) << 32;
    const PAIRS: [u32; 2] = [0x7e06_0308, 0x7e12_0302]; // v_mov_b32 v3, v8; v_mov_b32 v9, v2
    const SET_S: [u32; 4] = [0xbe8a_00ff, 0x89ab_cdef, 0xbe8b_00ff, 0x0123_4567]; // s[10:11] = s

    let kept = 7 | 7 << 32;
    let active = 0xffff_ffff_f0f0_f00fu64;
    let cases: [(&str, Vec<u32>, Want); 3] = [
        (
            "pairs",
            [
                0xd208_0004,
                0x0421_0102, // v_lshl_add_u64 v[4:5], v[2:3], 0, v[8:9]
                0xd208_0006,
                0x0421_0702, // v_lshl_add_u64 v[6:7], v[2:3], 3, v[8:9]
            ]
            .to_vec(),
            Box::new(|l| (ab(l).wrapping_add(ba(l)), (ab(l) << 3).wrapping_add(ba(l)))),
        ),
        (
            "an SGPR pair",
            [
                0xd208_0004,
                0x0409_000a, // v_lshl_add_u64 v[4:5], s[10:11], 0, v[2:3]
                0xd208_0006,
                0x0029_0508, // v_lshl_add_u64 v[6:7], v[8:9], 2, s[10:11]
            ]
            .to_vec(),
            Box::new(|l| (s.wrapping_add(ab(l)), (ba(l) << 2).wrapping_add(s))),
        ),
        (
            "a partial EXEC",
            [
                0x7e08_0287,
                0x7e0a_0287,
                0x7e0c_0287,
                0x7e0e_0287, // v4..v7 = 7
                0xbefe_00ff,
                0xf0f0_f00f, // s_mov_b32 exec_lo, 0xf0f0f00f (exec_hi stays set)
                0xd208_0004,
                0x0029_020a, // v_lshl_add_u64 v[4:5], s[10:11], 1, s[10:11]
                0xd208_0006,
                0x0029_0102, // v_lshl_add_u64 v[6:7], v[2:3], 0, s[10:11]
                0xbefe_00c1, // s_mov_b32 exec_lo, -1
            ]
            .to_vec(),
            Box::new(|l| match active >> l & 1 {
                1 => ((s << 1).wrapping_add(s), ab(l).wrapping_add(s)),
                _ => (kept, kept),
            }),
        ),
    ];
    check_pairs(model, &[&PAIRS[..], &SET_S].concat(), &cases, &a, &b);
}

/// `v_lshlrev_b64 d, shift, b` with one shift for all lanes (an inline constant or an SGPR),
/// below 32 and from 32 up (where the low half moves wholly into the high one), of a
/// register pair and of an SGPR pair, under a full and a partial EXEC.
#[test]
fn lshlrev_b64_shifts_near_and_far() {
    let a: [u32; 64] = std::array::from_fn(|l| 0x9e37_79b9u32.wrapping_mul(l as u32 + 1));
    let b: [u32; 64] = std::array::from_fn(|l| 0x8765_4321u32.rotate_left(l as u32));
    let s: u64 = 0x0123_4567_89ab_cdef;
    let ab = |l: usize| a[l] as u64 | (b[l] as u64) << 32;
    const PAIRS: [u32; 1] = [0x7e06_0308]; // v_mov_b32 v3, v8: v[2:3] = (a, b)
    const SET_S: [u32; 5] = [
        0xbe8a_00ff,
        0x89ab_cdef,
        0xbe8b_00ff,
        0x0123_4567,
        0xbe8c_00a4,
    ]; // s[10:11] = s, s12 = 36
    const KEEP: [u32; 4] = [0x7e08_0287, 0x7e0a_0287, 0x7e0c_0287, 0x7e0e_0287]; // v4..v7 = 7
    let kept = 7 | 7 << 32;
    let active = 0xffff_ffff_0ff0_f00fu64;
    let cases: [(&str, Vec<u32>, Want); 3] = [
        (
            "3 and 40 of a pair",
            [
                0xd28f_0004,
                0x0002_0483, // v_lshlrev_b64 v[4:5], 3, v[2:3]
                0xd28f_0006,
                0x0002_04a8, // v_lshlrev_b64 v[6:7], 40, v[2:3]
            ]
            .to_vec(),
            Box::new(|l| (ab(l) << 3, ab(l) << 40)),
        ),
        (
            "32 of an SGPR pair, 63 of a pair",
            [
                0xd28f_0004,
                0x0000_14a0, // v_lshlrev_b64 v[4:5], 32, s[10:11]
                0xd28f_0006,
                0x0002_04bf, // v_lshlrev_b64 v[6:7], 63, v[2:3]
            ]
            .to_vec(),
            Box::new(|l| (s << 32, ab(l) << 63)),
        ),
        (
            "a partial EXEC",
            [
                KEEP.as_slice(),
                &[
                    0xbefe_00ff,
                    0x0ff0_f00f, // s_mov_b32 exec_lo, 0x0ff0f00f (exec_hi stays set)
                    0xd28f_0004,
                    0x0002_040c, // v_lshlrev_b64 v[4:5], s12, v[2:3]
                    0xd28f_0006,
                    0x0002_0483, // v_lshlrev_b64 v[6:7], 3, v[2:3]
                    0xbefe_00c1, // s_mov_b32 exec_lo, -1
                ],
            ]
            .concat(),
            Box::new(|l| match active >> l & 1 {
                1 => (ab(l) << 36, ab(l) << 3),
                _ => (kept, kept),
            }),
        ),
    ];
    for model in MODELS {
        check_pairs(model, &[&PAIRS[..], &SET_S].concat(), &cases, &a, &b);
    }
}

/// The six carry ops (VOP2 with VCC, VOP3 with SGPR pairs, and through DPP and SDWA, which
/// take the general operand path) against 64-bit host arithmetic: all 64 pairs of eight
/// edge values, each with a carry-in of 0 and of 1, under a full and a partial EXEC (where
/// inactive lanes keep their value and get a carry-out bit of 0).
#[test]
fn carry_ops_match_64_bit_arithmetic() {
    const VALUES: [u32; 8] = [
        0,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        0x1234_5678,
    ];
    let a: [u32; 64] = std::array::from_fn(|l| VALUES[l % 8]);
    let b: [u32; 64] = std::array::from_fn(|l| VALUES[l / 8]);
    type Reference = fn(u64, u64, u64) -> (u64, bool);
    let add: Reference = |a, b, ci| (a + b + ci, (a + b + ci) >> 32 != 0);
    let sub: Reference = |a, b, ci| (a.wrapping_sub(b).wrapping_sub(ci), b + ci > a);
    let subrev: Reference = |a, b, ci| (b.wrapping_sub(a).wrapping_sub(ci), a + ci > b);
    /// One carry op: its VOP2 into v4 with VCC, its VOP3 into v6 with s[22:23] (carry-in
    /// s[20:21]), a DPP or SDWA form into v4 with VCC, whether it takes a carry-in.
    struct CarryOp {
        name: &'static str,
        vop2: u32,
        vop3: [u32; 2],
        general: Option<[u32; 2]>,
        takes_carry: bool,
        reference: Reference,
    }
    let op = |name, vop2, vop3, general, takes_carry, reference| CarryOp {
        name,
        vop2,
        vop3,
        general,
        takes_carry,
        reference,
    };
    let ops = [
        op(
            "v_add_co_u32",
            0x3208_1102,
            [0xd119_1606, 0x0002_1102],
            None,
            false,
            add,
        ),
        op(
            "v_addc_co_u32",
            0x3808_1102,
            [0xd11c_1606, 0x0052_1102],
            Some([0x3808_10fa, 0xff00_e402]),
            true,
            add,
        ),
        op(
            "v_sub_co_u32",
            0x3408_1102,
            [0xd11a_1606, 0x0002_1102],
            Some([0x3408_10f9, 0x0606_0602]),
            false,
            sub,
        ),
        op(
            "v_subb_co_u32",
            0x3a08_1102,
            [0xd11d_1606, 0x0052_1102],
            Some([0x3a08_10f9, 0x0606_0602]),
            true,
            sub,
        ),
        op(
            "v_subrev_co_u32",
            0x3608_1102,
            [0xd11b_1606, 0x0002_1102],
            None,
            false,
            subrev,
        ),
        op(
            "v_subbrev_co_u32",
            0x3c08_1102,
            [0xd11e_1606, 0x0052_1102],
            Some([0x3c08_10fa, 0xff00_e402]),
            true,
            subrev,
        ),
    ];
    const KEEP: [u32; 4] = [0x7e08_0287, 0x7e0a_0287, 0x7e0c_0287, 0x7e0e_0287]; // v4..v7 = 7
    const CARRIES_OUT: [u32; 5] = [
        0xbefe_00c1, // s_mov_b32 exec_lo, -1
        0xd100_0005,
        0x01a9_0280, // v_cndmask_b32_e64 v5, 0, 1, vcc
        0xd100_0007,
        0x0059_0280, // v_cndmask_b32_e64 v7, 0, 1, s[22:23]
    ];
    let carry_in = 0x9e37_79b9_7f4a_7c15u64;
    for model in MODELS {
        for &CarryOp {
            name,
            vop2,
            vop3,
            general,
            takes_carry,
            reference,
        } in &ops
        {
            for cin in [carry_in, !carry_in] {
                for exec_lo in [u32::MAX, 0x0ff0_f00f] {
                    let active = 0xffff_ffff_0000_0000 | exec_lo as u64;
                    let forms = [Some([vop2, 0xbf80_0000]), general]; // the VOP2 padded with s_nop
                    for (form, first) in forms.into_iter().enumerate() {
                        let Some(first) = first else { continue };
                        let code = [
                            &KEEP[..],
                            &[0xbe94_00ff, cin as u32, 0xbe95_00ff, (cin >> 32) as u32], // s[20:21] = cin
                            &[0xbeea_0114],          // s_mov_b64 vcc, s[20:21]
                            &[0xbefe_00ff, exec_lo], // s_mov_b32 exec_lo, ..
                            &first,
                            &vop3,
                            &CARRIES_OUT,
                        ]
                        .concat();
                        let got = run(model, &code, &a, &b);
                        for (l, g) in got.iter().enumerate() {
                            let ci = if takes_carry { cin >> l & 1 } else { 0 };
                            let (r, c) = reference(a[l] as u64, b[l] as u64, ci);
                            let want = if active >> l & 1 != 0 {
                                [r as u32, c as u32, r as u32, c as u32]
                            } else {
                                [7, 0, 7, 0]
                            };
                            assert_eq!(
                                *g, want,
                                "{model:?} {name} form {form} carry-in {cin:#x} exec_lo {exec_lo:#x} lane {l}: a {:#x} b {:#x}",
                                a[l], b[l]
                            );
                        }
                    }
                }
            }
        }
    }
}

/// `v_swap_b32` exchanges the active lanes of two registers and leaves the others.
#[test]
fn swap_exchanges_the_active_lanes_only() {
    let a: [u32; 64] = std::array::from_fn(|l| 0x1000 + l as u32);
    let b: [u32; 64] = std::array::from_fn(|l| 0x2000 + l as u32);
    const SWAP_THEN_READ: [u32; 5] = [
        0x7e04_a308, // v_swap_b32 v2, v8
        0x7e08_0302, // v_mov_b32 v4, v2
        0x7e0a_0308, // v_mov_b32 v5, v8
        0x7e0c_0280, // v_mov_b32 v6, 0
        0x7e0e_0280, // v_mov_b32 v7, 0
    ];
    for model in MODELS {
        for exec_lo in [u32::MAX, 0x0ff0_f00f] {
            let code = [
                &[0xbefe_00ff, exec_lo][..], // s_mov_b32 exec_lo, <exec_lo>
                &SWAP_THEN_READ[..1],
                &[0xbefe_00c1], // s_mov_b32 exec_lo, -1
                &SWAP_THEN_READ[1..],
            ]
            .concat();
            let got = run(model, &code, &a, &b);
            for (l, g) in got.iter().enumerate() {
                let active = l >= 32 || exec_lo >> l & 1 != 0;
                let want = if active { [b[l], a[l]] } else { [a[l], b[l]] };
                assert_eq!(
                    [g[0], g[1]],
                    want,
                    "{model:?} exec_lo {exec_lo:#x} lane {l}"
                );
            }
        }
    }
}

/// The 32-bit compares (signed, unsigned, f32; each condition has a handler of its own)
/// against the host: every pair of eight edge values as VOPC with two VGPRs and with an SGPR
/// first, as VOP3 with an SGPR second, and (f32) as VOP3 with a negated source, which takes
/// the general path; under a full and a partial EXEC, where inactive lanes get a 0 bit.
#[test]
fn compares_match_the_host_for_every_condition() {
    const INTS: [u32; 8] = [
        0,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        0x1234_5678,
    ];
    const FLOATS: [f32; 8] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        2.5,
    ];
    let int_cond = |cond: u32, a: u32, b: u32, signed: bool| {
        let ord = if signed {
            (a as i32).cmp(&(b as i32))
        } else {
            a.cmp(&b)
        };
        use std::cmp::Ordering::*;
        match cond {
            0 => false,
            1 => ord == Less,
            2 => ord == Equal,
            3 => ord != Greater,
            4 => ord == Greater,
            5 => ord != Equal,
            6 => ord != Less,
            _ => true,
        }
    };
    /// The ordered conditions hold only for ordered operands; 9..=14 are the negations of
    /// 6..=1 ("not greater or equal" ...), true for unordered ones.
    fn float_cond(cond: u32, a: f32, b: f32) -> bool {
        use std::cmp::Ordering::*;
        let ord = a.partial_cmp(&b);
        match cond {
            0 => false,
            1 => ord == Some(Less),
            2 => ord == Some(Equal),
            3 => matches!(ord, Some(Less | Equal)),
            4 => ord == Some(Greater),
            5 => matches!(ord, Some(Less | Greater)),
            6 => matches!(ord, Some(Greater | Equal)),
            7 => ord.is_some(),
            8 => ord.is_none(),
            9..=14 => !float_cond(15 - cond, a, b),
            _ => true,
        }
    }
    // (opcode base, conditions, float, signed)
    let families = [
        (0x40u32, 16u32, true, false),
        (0xc0, 8, false, true),
        (0xc8, 8, false, false),
    ];
    const VCC_TO_V5: [u32; 2] = [0xd100_0005, 0x01a9_0280]; // v_cndmask_b32_e64 v5, 0, 1, vcc
    for model in MODELS {
        for (base, conds, float, signed) in families {
            let bits = |k: usize| if float { FLOATS[k].to_bits() } else { INTS[k] };
            let a: [u32; 64] = std::array::from_fn(|l| bits(l % 8));
            let b: [u32; 64] = std::array::from_fn(|l| bits(l / 8));
            let s10 = bits(if float { 2 } else { 5 });
            let holds = |cond: u32, x: u32, y: u32| {
                if float {
                    float_cond(cond, f32::from_bits(x), f32::from_bits(y))
                } else {
                    int_cond(cond, x, y, signed)
                }
            };
            for cond in 0..conds {
                let op = base + cond;
                let e32 = |src0: u32| 0x7c00_0000 | op << 17 | 8 << 9 | src0;
                let vop3 = |neg: u32| [0xd000_006a | op << 16, 0x102 | 10 << 9 | neg << 29];
                type Lane = Box<dyn Fn(usize) -> (u32, u32)>;
                let mut forms: Vec<(&str, Vec<u32>, Lane)> = vec![
                    (
                        "e32 v2, v8",
                        vec![e32(0x102)],
                        Box::new(move |l| (a[l], b[l])),
                    ),
                    ("e32 s10, v8", vec![e32(10)], Box::new(move |l| (s10, b[l]))),
                    (
                        "e64 v2, s10",
                        vop3(0).to_vec(),
                        Box::new(move |l| (a[l], s10)),
                    ),
                ];
                if float {
                    forms.push((
                        "e64 -v2, s10",
                        vop3(1).to_vec(),
                        Box::new(move |l| (a[l] ^ 0x8000_0000, s10)),
                    ));
                }
                for (form, compare, lane) in &forms {
                    for exec_lo in [u32::MAX, 0x0ff0_f00f] {
                        let code = [
                            &[0x7e0a_0287][..],      // v_mov_b32 v5, 7
                            &[0xbe8a_00ff, s10],     // s_mov_b32 s10, ..
                            &[0xbeea_0180],          // s_mov_b64 vcc, 0
                            &[0xbefe_00ff, exec_lo], // s_mov_b32 exec_lo, ..
                            compare,
                            &[0xbefe_00c1], // s_mov_b32 exec_lo, -1
                            &VCC_TO_V5,
                        ]
                        .concat();
                        let got = run(model, &code, &a, &b);
                        let active = 0xffff_ffff_0000_0000 | exec_lo as u64;
                        for (l, g) in got.iter().enumerate() {
                            let (x, y) = lane(l);
                            let want = (active >> l & 1 != 0 && holds(cond, x, y)) as u32;
                            assert_eq!(
                                g[1], want,
                                "{model:?} opcode {op:#x} ({form}) exec_lo {exec_lo:#x} lane {l}: {x:#x} vs {y:#x}"
                            );
                        }
                    }
                }
            }
        }
    }
}
