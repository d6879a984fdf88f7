//! VOPC compares (and their VOP3 forms): integer, float and class compares writing VCC or
//! an SGPR pair, and the `v_cmpx` forms writing EXEC.

use super::*;
use crate::exec::simd::mask64_of;

/// The lanes where `pred` holds, as a mask: one loop per form of the operands, so a scalar
/// stays a value in a register instead of being spread over 64 lanes on the stack.
#[inline(always)]
fn lane_bits(a: Operand, b: Operand, pred: impl Fn(u32, u32) -> bool) -> u64 {
    // Each lane's result as 0 or all ones, packed by sign bits (see simd::mask64_of).
    let all = |r: bool| (r as u32).wrapping_neg();
    match (a, b) {
        (Operand::Lanes(a), Operand::Lanes(b)) => mask64_of(|l| all(pred(a[l], b[l]))),
        (Operand::Value(x), Operand::Lanes(b)) => mask64_of(|l| all(pred(x, b[l]))),
        (Operand::Lanes(a), Operand::Value(y)) => mask64_of(|l| all(pred(a[l], y))),
        (Operand::Value(x), Operand::Value(y)) => {
            if pred(x, y) {
                u64::MAX
            } else {
                0
            }
        }
    }
}

/// Evaluates `$e` with `$c` a constant equal to `$cond` (0..=15), so that a condition
/// code chosen once per instruction is folded into the lane loop instead of decided per lane.
macro_rules! by_cond {
    ($cond:expr, $c:ident => $e:expr) => {
        match $cond {
            0 => {
                const $c: u32 = 0;
                $e
            }
            1 => {
                const $c: u32 = 1;
                $e
            }
            2 => {
                const $c: u32 = 2;
                $e
            }
            3 => {
                const $c: u32 = 3;
                $e
            }
            4 => {
                const $c: u32 = 4;
                $e
            }
            5 => {
                const $c: u32 = 5;
                $e
            }
            6 => {
                const $c: u32 = 6;
                $e
            }
            7 => {
                const $c: u32 = 7;
                $e
            }
            8 => {
                const $c: u32 = 8;
                $e
            }
            9 => {
                const $c: u32 = 9;
                $e
            }
            10 => {
                const $c: u32 = 10;
                $e
            }
            11 => {
                const $c: u32 = 11;
                $e
            }
            12 => {
                const $c: u32 = 12;
                $e
            }
            13 => {
                const $c: u32 = 13;
                $e
            }
            14 => {
                const $c: u32 = 14;
                $e
            }
            _ => {
                const $c: u32 = 15;
                $e
            }
        }
    };
}

simd_handler! {
    /// All VOPC compares (and their VOP3 forms): the opcode selects type and condition.
    pub fn v_cmp(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        let op = i.op as u32;
        let exec = w.exec();
        let wide = i.info.w[1] >= 2;
        let mut bits = 0u64;
        if wide {
            let ([a, bb], _) = srcs64::<2>(w, i, op < 0xa0);
            for l in 0..LANES {
                let r = match op {
                    0x12 | 0x13 => class(
                        g(a[l]).classify(),
                        g(a[l]).is_sign_negative(),
                        a[l],
                        true,
                        bb[l] as u32,
                    ),
                    0x60..=0x7f => fcmp(op & 15, g(a[l]), g(bb[l])),
                    0xe0..=0xe7 | 0xf0..=0xf7 => icmp(op & 7, a[l] as i64, bb[l] as i64),
                    _ => icmp(op & 7, a[l], bb[l]),
                };
                bits |= (r as u64) << l;
            }
        } else {
            // Sources that need no modifier are read in place (scalars as values); the
            // others go through srcs32.
            let direct = plain_sources(i);
            let held = if direct {
                None
            } else {
                Some(srcs32::<2>(w, i, op < 0xa0).0)
            };
            let src = |n: usize| -> Operand {
                match &held {
                    Some(lanes) => Operand::Lanes(&lanes[n]),
                    None => Operand::of(w, i, n),
                }
            };
            let (a, bb) = (src(0), src(1));
            // The common compares pick their condition outside the lane loop, which then
            // vectorises; the rest decide per lane.
            bits = match op {
                0x40..=0x5f => by_cond!(op & 15, COND => lane_bits(a, bb, |x, y| fcmp(COND, f(x), f(y)))),
                0xc0..=0xc7 | 0xd0..=0xd7 => {
                    by_cond!(op & 7, COND => lane_bits(a, bb, |x, y| icmp(COND, x as i32, y as i32)))
                }
                0xc8..=0xcf | 0xd8..=0xdf => by_cond!(op & 7, COND => lane_bits(a, bb, |x, y| icmp(COND, x, y))),
                _ => {
                    let lanes = |o: Operand| match o {
                        Operand::Lanes(v) => *v,
                        Operand::Value(x) => [x; LANES],
                    };
                    let (a, bb) = (lanes(a), lanes(bb));
                    for l in 0..LANES {
                        let (x, y) = (a[l], bb[l]);
                        let r = match op {
                            0x10 | 0x11 => class(f(x).classify(), f(x).is_sign_negative(), x as u64, false, y),
                            0x14 | 0x15 => {
                                let v = f16_to_f32(x as u16);
                                class(
                                    v.classify(),
                                    v.is_sign_negative(),
                                    x as u64 & 0xffff,
                                    false,
                                    y,
                                )
                            }
                            0x20..=0x3f => fcmp(op & 15, f16_to_f32(x as u16), f16_to_f32(y as u16)),
                            0x40..=0x5f => fcmp(op & 15, f(x), f(y)),
                            0xa0..=0xa7 | 0xb0..=0xb7 => icmp(op & 7, x as u16 as i16, y as u16 as i16),
                            0xa8..=0xaf | 0xb8..=0xbf => icmp(op & 7, x as u16, y as u16),
                            0xc0..=0xc7 | 0xd0..=0xd7 => icmp(op & 7, x as i32, y as i32),
                            _ => icmp(op & 7, x, y),
                        };
                        bits |= (r as u64) << l;
                    }
                    bits
                }
            };
        }
        bits &= exec;
        w.lane_ops += exec.count_ones() as u64;
        w.write_s64(i.sdst, bits);
        // v_cmpx_* also writes EXEC (on GFX9 in addition to the VCC/SGPR result).
        let is_x = matches!(op, 0x11 | 0x13 | 0x15)
            || matches!(op, 0x30..=0x3f | 0x50..=0x5f | 0x70..=0x7f)
            || matches!(op, 0xb0..=0xbf | 0xd0..=0xdf | 0xf0..=0xff);
        if is_x {
            w.set_exec(bits);
        }
        OK
    }
}

/// Which lanes of a 32-bit compare hold: signed (`KIND` 0), unsigned (1) or f32 (2)
/// compare under condition `COND`, as the general [`v_cmp`] decides it at run time.
#[inline(always)]
fn compare32<const KIND: u32, const COND: u32>(a: Operand, b: Operand) -> u64 {
    match KIND {
        0 => lane_bits(a, b, |x, y| icmp(COND, x as i32, y as i32)),
        1 => lane_bits(a, b, |x, y| icmp(COND, x, y)),
        _ => lane_bits(a, b, |x, y| fcmp(COND, f(x), f(y))),
    }
}

/// The common compares (32-bit signed, unsigned and f32, not the `v_cmpx` forms) with the
/// type and condition constants: the decoder picks the handler, so the compare reads its
/// sources and runs its lane loop with no decision about the opcode. Sources with
/// modifiers (DPP, SDWA, abs/neg) go through the general [`v_cmp`].
#[inline(always)]
fn compare32_handler<const KIND: u32, const COND: u32>(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    if !plain_sources(i) {
        return v_cmp(w, i, c);
    }
    let exec = w.exec();
    let bits = compare32::<KIND, COND>(Operand::of(w, i, 0), Operand::of(w, i, 1)) & exec;
    w.lane_ops += exec.count_ones() as u64;
    w.write_s64(i.sdst, bits);
    OK
}

macro_rules! compare32_handlers {
    ($table:ident, $kind:literal: $($name:ident = $cond:literal),* $(,)?) => {
        $(simd_handler! {
            fn $name(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
                compare32_handler::<$kind, $cond>(w, i, c)
            }
        })*
        /// The handlers by condition code (the opcode's low bits).
        pub const $table: [crate::exec::Handler; 0 $(+ { let _ = $cond; 1 })*] = [$($name),*];
    };
}

compare32_handlers!(CMP_I32, 0: cmp_f_i32 = 0, cmp_lt_i32 = 1, cmp_eq_i32 = 2, cmp_le_i32 = 3,
    cmp_gt_i32 = 4, cmp_ne_i32 = 5, cmp_ge_i32 = 6, cmp_t_i32 = 7);
compare32_handlers!(CMP_U32, 1: cmp_f_u32 = 0, cmp_lt_u32 = 1, cmp_eq_u32 = 2, cmp_le_u32 = 3,
    cmp_gt_u32 = 4, cmp_ne_u32 = 5, cmp_ge_u32 = 6, cmp_t_u32 = 7);
compare32_handlers!(CMP_F32, 2: cmp_f_f32 = 0, cmp_lt_f32 = 1, cmp_eq_f32 = 2, cmp_le_f32 = 3,
    cmp_gt_f32 = 4, cmp_lg_f32 = 5, cmp_ge_f32 = 6, cmp_o_f32 = 7, cmp_u_f32 = 8,
    cmp_nge_f32 = 9, cmp_nlg_f32 = 10, cmp_ngt_f32 = 11, cmp_nle_f32 = 12, cmp_neq_f32 = 13,
    cmp_nlt_f32 = 14, cmp_tru_f32 = 15);

#[inline(always)]
pub(super) fn icmp<T: PartialOrd + PartialEq>(cond: u32, a: T, b: T) -> bool {
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

// The negated compares are the point: they are true for unordered (NaN) operands.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
#[inline(always)]
pub(super) fn fcmp<T: PartialOrd + Copy>(cond: u32, a: T, b: T) -> bool {
    let unordered = a.partial_cmp(&b).is_none();
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => !unordered && a != b,
        6 => a >= b,
        7 => !unordered,
        8 => unordered,
        9 => !(a >= b),
        10 => unordered || a == b,
        11 => !(a > b),
        12 => !(a <= b),
        13 => !(a == b),
        14 => !(a < b),
        _ => true,
    }
}

/// `v_cmp_class`: mask bits 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0,
/// 7 +denorm, 8 +normal, 9 +inf.
pub(super) fn class(c: std::num::FpCategory, neg: bool, bits: u64, is64: bool, mask: u32) -> bool {
    use std::num::FpCategory::*;
    let quiet_bit = if is64 { 1u64 << 51 } else { 1 << 22 };
    let k = match (c, neg) {
        (Nan, _) => {
            if bits & quiet_bit != 0 {
                1
            } else {
                0
            }
        }
        (Infinite, true) => 2,
        (Normal, true) => 3,
        (Subnormal, true) => 4,
        (Zero, true) => 5,
        (Zero, false) => 6,
        (Subnormal, false) => 7,
        (Normal, false) => 8,
        (Infinite, false) => 9,
    };
    mask >> k & 1 != 0
}
