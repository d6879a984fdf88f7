//! Three-source operations (VOP3 and the VOP2 accumulating forms): fma/mad, bit-field,
//! min3/max3/med3, `v_madmk`/`v_madak` with their literal, and the 64-bit `v_mad_*64*`.

use super::*;

v3! {
    v_fma_f32(true) => |a, bb, c| b(f(a).mul_add(f(bb), f(c))), round rm32 |rm| round::fma(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_fmac_f32(true) => |a, bb, c| b(f(a).mul_add(f(bb), f(c))), round rm32 |rm| round::fma(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mac_f32(true) => |a, bb, c| b(f(a) * f(bb) + f(c)), round rm32 |rm| round::mad(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mad_f32(true) => |a, bb, c| b(f(a) * f(bb) + f(c)), round rm32 |rm| round::mad(S32, rm, a as u64, bb as u64, c as u64) as u32;
    v_mad_legacy_f32(true) => |a, bb, c| { let (x, y) = (f(a), f(bb)); b(if x == 0.0 || y == 0.0 { f(c) } else { x * y + f(c) }) };
    v_mad_i32_i24(false) => |a, bb, c| ((sext24(a) * sext24(bb)) as u32).wrapping_add(c);
    v_mad_u32_u24(false) => |a, bb, c| (a & 0xff_ffff).wrapping_mul(bb & 0xff_ffff).wrapping_add(c);
    v_bfe_u32(false) => |a, bb, c| crate::exec::salu::bfe_u32(a, bb & 31, c & 31);
    v_bfe_i32(false) => |a, bb, c| crate::exec::salu::bfe_i32(a, bb & 31, c & 31);
    v_bfi_b32(false) => |a, bb, c| (a & bb) | (!a & c);
    v_alignbit_b32(false) => |a, bb, c| ((((a as u64) << 32) | bb as u64) >> (c & 31)) as u32;
    v_alignbyte_b32(false) => |a, bb, c| ((((a as u64) << 32) | bb as u64) >> (8 * (c & 3))) as u32;
    v_min3_f32(true) => |a, bb, c| b(fmin32(fmin32(f(a), f(bb)), f(c)));
    v_max3_f32(true) => |a, bb, c| b(fmax32(fmax32(f(a), f(bb)), f(c)));
    v_med3_f32(true) => |a, bb, c| b(med3f(f(a), f(bb), f(c)));
    v_min3_i32(false) => |a, bb, c| (a as i32).min(bb as i32).min(c as i32) as u32;
    v_max3_i32(false) => |a, bb, c| (a as i32).max(bb as i32).max(c as i32) as u32;
    v_med3_i32(false) => |a, bb, c| { let (x, y, z) = (a as i32, bb as i32, c as i32); x.max(y).min(x.min(y).max(z)) as u32 };
    v_min3_u32(false) => |a, bb, c| a.min(bb).min(c);
    v_max3_u32(false) => |a, bb, c| a.max(bb).max(c);
    v_med3_u32(false) => |a, bb, c| a.max(bb).min(a.min(bb).max(c));
    v_sad_u32(false) => |a, bb, c| a.abs_diff(bb).wrapping_add(c);
    v_div_fixup_f32(true) => |a, bb, c| b(div_fixup32(f(a), f(bb), f(c)));
    v_perm_b32(false) => |a, bb, c| perm(a, bb, c);
    v_mad_u32_u16(false) => |a, bb, c| (a & 0xffff).wrapping_mul(bb & 0xffff).wrapping_add(c);
    v_mad_i32_i16(false) => |a, bb, c| ((a as u16 as i16 as i32).wrapping_mul(bb as u16 as i16 as i32) as u32).wrapping_add(c);
    v_xad_u32(false) => |a, bb, c| (a ^ bb).wrapping_add(c);
    v_lshl_add_u32(false) => |a, bb, c| (a << (bb & 31)).wrapping_add(c);
    v_add_lshl_u32(false) => |a, bb, c| a.wrapping_add(bb) << (c & 31);
    v_add3_u32(false) => |a, bb, c| a.wrapping_add(bb).wrapping_add(c);
    v_lshl_or_b32(false) => |a, bb, c| (a << (bb & 31)) | c;
    v_and_or_b32(false) => |a, bb, c| (a & bb) | c;
    v_or3_b32(false) => |a, bb, c| a | bb | c;
    // The f16 product is exact in f64, so one rounding to f16 at the end (via f32,
    // which is exact for f16-range sums of this size) models the fused operation.
    // f16 division ends in this fixup of the quotient computed through f32.
    v_div_fixup_f16(false) => |a, bb, c| f64_to_f16(div_fixup64(f16_to_f32(a as u16) as f64, f16_to_f32(bb as u16) as f64, f16_to_f32(c as u16) as f64)) as u32;
    v_fma_f16(false) => |a, bb, c| round::fma(H16, Rm::NearestEven, (a & 0xffff) as u64, (bb & 0xffff) as u64, (c & 0xffff) as u64) as u32, round rm64 |rm| round::fma(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64, (c & 0xffff) as u64) as u32;
    // Unfused: the product is rounded to f16 first.
    v_mad_f16(false) => |a, bb, c| hf2(hf2(a, bb, |x, y| x * y), c, |x, y| x + y), round rm64 |rm| round::mad(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64, (c & 0xffff) as u64) as u32;
    v_min3_f16(false) => |a, bb, c| f32_to_f16(fmin32(fmin32(f16_to_f32(a as u16), f16_to_f32(bb as u16)), f16_to_f32(c as u16))) as u32;
    v_max3_f16(false) => |a, bb, c| f32_to_f16(fmax32(fmax32(f16_to_f32(a as u16), f16_to_f32(bb as u16)), f16_to_f32(c as u16))) as u32;
    v_med3_f16(false) => |a, bb, c| f32_to_f16(med3f(f16_to_f32(a as u16), f16_to_f32(bb as u16), f16_to_f32(c as u16))) as u32;
    v_min3_i16(false) => |a, bb, c| (a as u16 as i16).min(bb as u16 as i16).min(c as u16 as i16) as u16 as u32;
    v_max3_i16(false) => |a, bb, c| (a as u16 as i16).max(bb as u16 as i16).max(c as u16 as i16) as u16 as u32;
    v_med3_i16(false) => |a, bb, c| { let (x, y, z) = (a as u16 as i16, bb as u16 as i16, c as u16 as i16); x.max(y).min(x.min(y).max(z)) as u16 as u32 };
    v_min3_u16(false) => |a, bb, c| (a as u16).min(bb as u16).min(c as u16) as u32;
    v_max3_u16(false) => |a, bb, c| (a as u16).max(bb as u16).max(c as u16) as u32;
    v_med3_u16(false) => |a, bb, c| { let (x, y, z) = (a as u16, bb as u16, c as u16); x.max(y).min(x.min(y).max(z)) as u32 };
    v_mad_u16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
    v_mad_i16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
    // GFX9 keeps VI's 16-bit mads under these names (no op_sel): the low 16 bits of
    // a * b + c, zero-extended; signed and unsigned agree on them.
    v_mad_legacy_u16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
    v_mad_legacy_i16(false) => |a, bb, c| (a as u16).wrapping_mul(bb as u16).wrapping_add(c as u16) as u32;
}

simd_handler! {
    /// `v_madmk_f32 vdst, src0, K, vsrc1`: src0 * K + vsrc1 (K is the literal).
    pub fn v_madmk_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mk(w, i, false, false)
    }
}
simd_handler! {
    pub fn v_madak_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mk(w, i, true, false)
    }
}
simd_handler! {
    pub fn v_fmamk_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mk(w, i, false, true)
    }
}
simd_handler! {
    pub fn v_fmaak_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mk(w, i, true, true)
    }
}

#[inline(always)]
pub(super) fn mk(w: &mut Wave, i: &Inst, ak: bool, fused: bool) -> R {
    let k = f(i.lit);
    // Sources without modifiers (`float: false`, as below); the fast path takes only
    // round-to-nearest-even, where the general path computes the same expression.
    let lanes = |[a, bb]: [u32; 2]| {
        let (x, y) = (f(a), f(bb));
        let (m, add) = if ak { (y, k) } else { (k, y) };
        b(if fused {
            x.mul_add(m, add)
        } else {
            x * m + add
        })
    };
    if fast32::<2>(w, i, false, lanes) {
        return OK;
    }
    let ([a, bb], mask) = srcs32::<2>(w, i, false);
    let mut d = [0u32; LANES];
    let rm = round::rm32(w.mode);
    if rm != Rm::NearestEven {
        for l in 0..LANES {
            let (m, add) = if ak { (bb[l], i.lit) } else { (i.lit, bb[l]) };
            let (x, m, add) = (a[l] as u64, m as u64, add as u64);
            d[l] = if fused {
                round::fma(S32, rm, x, m, add)
            } else {
                round::mad(S32, rm, x, m, add)
            } as u32;
        }
        out32(w, i, mask, &mut d);
        return OK;
    }
    for l in 0..LANES {
        let (x, y) = (f(a[l]), f(bb[l]));
        // madak: src0 * vsrc1 + K; madmk: src0 * K + vsrc1.
        let (m, add) = if ak { (y, k) } else { (k, y) };
        d[l] = b(if fused {
            x.mul_add(m, add)
        } else {
            x * m + add
        });
    }
    out32(w, i, mask, &mut d);
    OK
}

simd_handler! {
    /// `v_mad_u64_u32 vdst, sdst, a, b, c64`: a*b + c with the carry per lane in sdst.
    pub fn v_mad_u64_u32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mad64(w, i, false)
    }
}
simd_handler! {
    pub fn v_mad_i64_i32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        mad64(w, i, true)
    }
}

#[inline(always)]
pub(super) fn mad64(w: &mut Wave, i: &Inst, signed: bool) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, false);
    let mut d = [0u64; LANES];
    let mut co = 0u64;
    for l in 0..LANES {
        let (r, carry) = if signed {
            let p = (a[l] as u32 as i32 as i128) * (bb[l] as u32 as i32 as i128);
            let t = p + c[l] as i64 as i128;
            (t as u64, t > i64::MAX as i128 || t < i64::MIN as i128)
        } else {
            let p = a[l] as u32 as u128 * bb[l] as u32 as u128;
            let t = p + c[l] as u128;
            (t as u64, t >> 64 != 0)
        };
        d[l] = r;
        co |= (carry as u64) << l;
    }
    out64(w, i, mask, &d);
    w.write_s64(i.sdst, co & mask);
    OK
}
