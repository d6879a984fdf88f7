//! VOP1 (and their VOP3 forms): moves, conversions, unary float and bit operations; and
//! the ops with 64-bit sources (`n64!`, `w64!`: f64 arithmetic, 64-bit shifts), whatever
//! their encoding.

use super::*;

pub fn v_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    OK
}

v1! {
    v_mov_b32(false) => |a| a;
    v_cvt_f32_i32(false) => |a| b(a as i32 as f32), round rm32 |rm| round::from_int(S32, rm, a as i32 as i64) as u32;
    v_cvt_f32_u32(false) => |a| b(a as f32), round rm32 |rm| round::from_int(S32, rm, a as i64) as u32;
    v_cvt_u32_f32(true) => |a| f(a) as u32;
    v_cvt_i32_f32(true) => |a| f(a) as i32 as u32;
    // The result is f16, so the f64/f16 rounding field applies.
    v_cvt_f16_f32(true) => |a| f32_to_f16(f(a)) as u32, round rm64 |rm| round::convert(S32, H16, rm, a as u64) as u32;
    v_cvt_f32_f16(false) => |a| b(f16_to_f32(a as u16));
    v_cvt_rpi_i32_f32(true) => |a| (f(a) + 0.5).floor() as i32 as u32;
    v_cvt_flr_i32_f32(true) => |a| f(a).floor() as i32 as u32;
    v_cvt_f32_ubyte0(false) => |a| b((a & 0xff) as f32);
    v_cvt_f32_ubyte1(false) => |a| b(((a >> 8) & 0xff) as f32);
    v_cvt_f32_ubyte2(false) => |a| b(((a >> 16) & 0xff) as f32);
    v_cvt_f32_ubyte3(false) => |a| b((a >> 24) as f32);
    v_fract_f32(true) => |a| { let x = f(a); b(if x.is_infinite() { f32::NAN } else { (x - x.floor()).min(f32::from_bits(0x3f7f_ffff)) }) };
    v_trunc_f32(true) => |a| b(f(a).trunc());
    v_ceil_f32(true) => |a| b(f(a).ceil());
    v_rndne_f32(true) => |a| b(f(a).round_ties_even());
    v_floor_f32(true) => |a| b(f(a).floor());
    v_exp_f32(true) => |a| b(f(a).exp2());
    v_log_f32(true) => |a| b(f(a).log2());
    v_rcp_f32(true) => |a| b(1.0 / f(a));
    v_rsq_f32(true) => |a| b(1.0 / f(a).sqrt());
    v_sqrt_f32(true) => |a| b(f(a).sqrt());
    // The hardware takes the angle in revolutions (x * 2*pi radians).
    v_sin_f32(true) => |a| b((f(a) * std::f32::consts::TAU).sin());
    v_cos_f32(true) => |a| b((f(a) * std::f32::consts::TAU).cos());
    v_not_b32(false) => |a| !a;
    v_bfrev_b32(false) => |a| a.reverse_bits();
    v_ffbh_u32(false) => |a| if a == 0 { u32::MAX } else { a.leading_zeros() };
    v_ffbl_b32(false) => |a| if a == 0 { u32::MAX } else { a.trailing_zeros() };
    v_ffbh_i32(false) => |a| {
        if a == 0 || a == u32::MAX { u32::MAX } else if (a as i32) < 0 { (!a).leading_zeros() } else { a.leading_zeros() }
    };
    v_frexp_exp_i32_f32(true) => |a| { let x = f(a); if x.is_nan() || x.is_infinite() || x == 0.0 { 0 } else { frexp32(x).1 as u32 } };
    v_frexp_mant_f32(true) => |a| { let x = f(a); if x.is_nan() || x.is_infinite() { a } else { b(frexp32(x).0) } };
    v_cvt_f16_u16(false) => |a| f32_to_f16((a & 0xffff) as f32) as u32, round rm64 |rm| round::from_int(H16, rm, (a & 0xffff) as i64) as u32;
    v_cvt_f16_i16(false) => |a| f32_to_f16(a as u16 as i16 as f32) as u32, round rm64 |rm| round::from_int(H16, rm, a as u16 as i16 as i64) as u32;
    v_cvt_u16_f16(false) => |a| f16_to_f32(a as u16) as u16 as u32;
    v_cvt_i16_f16(false) => |a| f16_to_f32(a as u16) as i16 as u16 as u32;
    v_rcp_f16(false) => |a| f32_to_f16(1.0 / f16_to_f32(a as u16)) as u32;
    v_sqrt_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).sqrt()) as u32;
    v_rsq_f16(false) => |a| f32_to_f16(1.0 / f16_to_f32(a as u16).sqrt()) as u32;
    v_log_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).log2()) as u32;
    v_exp_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).exp2()) as u32;
    v_floor_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).floor()) as u32;
    v_ceil_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).ceil()) as u32;
    v_trunc_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).trunc()) as u32;
    v_rndne_f16(false) => |a| f32_to_f16(f16_to_f32(a as u16).round_ties_even()) as u32;
}

n64! {
    v_cvt_i32_f64<1>(true) => |a| g(a) as i32 as u32;
    v_cvt_u32_f64<1>(true) => |a| g(a) as u32;
    v_cvt_f32_f64<1>(true) => |a| b(g(a) as f32), round rm32 |rm; a| round::convert(D64, S32, rm, a) as u32;
    v_frexp_exp_i32_f64<1>(true) => |a| { let x = g(a); if x.is_nan() || x.is_infinite() || x == 0.0 { 0 } else { frexp64(x).1 as u32 } };
}

w64! {
    v_cvt_f64_i32<1>(false) => |a| h(a as u32 as i32 as f64);
    v_cvt_f64_u32<1>(false) => |a| h(a as u32 as f64);
    v_cvt_f64_f32<1>(true) => |a| h(f(a as u32) as f64);
    v_trunc_f64<1>(true) => |a| h(g(a).trunc());
    v_ceil_f64<1>(true) => |a| h(g(a).ceil());
    v_rndne_f64<1>(true) => |a| h(g(a).round_ties_even());
    v_floor_f64<1>(true) => |a| h(g(a).floor());
    v_rcp_f64<1>(true) => |a| h(1.0 / g(a));
    v_rsq_f64<1>(true) => |a| h(1.0 / g(a).sqrt());
    v_sqrt_f64<1>(true) => |a| h(g(a).sqrt());
    v_frexp_mant_f64<1>(true) => |a| { let x = g(a); if x.is_nan() || x.is_infinite() { a } else { h(frexp64(x).0) } };
    v_fract_f64<1>(true) => |a| { let x = g(a); h(if x.is_infinite() { f64::NAN } else { (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff)) }) };
    v_mov_b64<1>(false) => |a| a;
    v_fma_f64<3>(true) => |a, bb, c| h(g(a).mul_add(g(bb), g(c))), round rm64 |rm; a, bb, c| round::fma(D64, rm, a, bb, c);
    v_fmac_f64<3>(true) => |a, bb, c| h(g(a).mul_add(g(bb), g(c))), round rm64 |rm; a, bb, c| round::fma(D64, rm, a, bb, c);
    v_add_f64<2>(true) => |a, bb| h(g(a) + g(bb)), round rm64 |rm; a, bb| round::add(D64, rm, a, bb);
    v_mul_f64<2>(true) => |a, bb| h(g(a) * g(bb)), round rm64 |rm; a, bb| round::mul(D64, rm, a, bb);
    v_min_f64<2>(true) => |a, bb| h(fmin64(g(a), g(bb)));
    v_max_f64<2>(true) => |a, bb| h(fmax64(g(a), g(bb)));
    v_ldexp_f64<2>(true) => |a, bb| h(ldexp64(g(a), bb as u32 as i32));
    v_lshlrev_b64_wide<2>(false) => |a, bb| bb << (a & 63);
    v_lshrrev_b64<2>(false) => |a, bb| bb >> (a & 63);
    v_ashrrev_i64<2>(false) => |a, bb| ((bb as i64) >> (a & 63)) as u64;
    v_lshl_add_u64_wide<3>(false) => |a, bb, c| (a << (bb & 7)).wrapping_add(c);
    v_div_fixup_f64<3>(true) => |a, bb, c| h(div_fixup64(g(a), g(bb), g(c)));
}

simd_handler! {
    /// Address arithmetic on gfx942: the uniform-shift case on 32-bit halves, the rest as
    /// any 64-bit op.
    pub fn v_lshl_add_u64(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        if lshl_add_u64_halves(w, i) {
            return OK;
        }
        v_lshl_add_u64_wide(w, i, c)
    }
}

simd_handler! {
    /// The uniform-shift case on 32-bit halves, the rest as any 64-bit op.
    pub fn v_lshlrev_b64(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        if lshlrev_b64_halves(w, i) {
            return OK;
        }
        v_lshlrev_b64_wide(w, i, c)
    }
}

pub fn v_readfirstlane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let exec = w.exec();
    let lane = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let mut v = [0u32; LANES];
    w.vread32(i.src[0], i.lit, i.info.fk, &mut v);
    w.write_s32(i.dst, v[lane]);
    OK
}

pub fn v_swap_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let mask = w.exec();
    let (a, d) = (
        (i.src[0] as usize - 256) & 511,
        (i.dst as usize - 256) & 511,
    );
    // Two registers (swapping one with itself changes nothing): whole rows under a full EXEC,
    // else a lane loop over the two rows that compiles to blends.
    if let Ok([ra, rd]) = w.v.get_disjoint_mut([a, d]) {
        if mask == u64::MAX {
            std::mem::swap(ra, rd);
        } else {
            for l in 0..LANES {
                if mask >> l & 1 != 0 {
                    std::mem::swap(&mut ra[l], &mut rd[l]);
                }
            }
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    OK
}

/// gfx942's fp8 formats, the "FNUZ" variants: E4M3 with bias 8 (`fp8`) and E5M2 with bias
/// 16 (`bf8`); 0x80 is the only NaN, there are no infinities and no -0. Every value is
/// exact in f32.
fn fp8_to_f32(b: u8, mantissa_bits: u32, bias: i32) -> u32 {
    if b == 0x80 {
        return 0x7fc0_0000;
    }
    let e = ((b & 0x7f) >> mantissa_bits) as i32;
    let m = (b & ((1 << mantissa_bits) - 1)) as f32;
    let frac = (1u32 << mantissa_bits) as f32;
    let v = if e == 0 {
        m / frac * 2f32.powi(1 - bias)
    } else {
        (1.0 + m / frac) * 2f32.powi(e - bias)
    };
    (if b & 0x80 != 0 { -v } else { v }).to_bits()
}

/// v_cvt_f32_{fp8,bf8} (byte 0, or the byte SDWA src0_sel picks) and v_cvt_pk_f32_{fp8,bf8}
/// (bytes 0 and 1 of the word SDWA selects, to a register pair).
fn cvt_from_fp8(w: &mut Wave, i: &Inst, mantissa_bits: u32, bias: i32, pair: bool) -> R {
    let ([a], mask) = srcs32::<1>(w, i, false);
    if pair {
        let mut d = [0u64; LANES];
        for l in 0..LANES {
            d[l] = fp8_to_f32(a[l] as u8, mantissa_bits, bias) as u64
                | (fp8_to_f32((a[l] >> 8) as u8, mantissa_bits, bias) as u64) << 32;
        }
        out64(w, i, mask, &d);
    } else {
        let mut d = [0u32; LANES];
        for l in 0..LANES {
            d[l] = fp8_to_f32(a[l] as u8, mantissa_bits, bias);
        }
        fmods32(w, i, &mut d);
        out32(w, i, mask, &mut d);
    }
    OK
}

pub fn v_cvt_f32_fp8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    cvt_from_fp8(w, i, 3, 8, false)
}
pub fn v_cvt_f32_bf8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    cvt_from_fp8(w, i, 2, 16, false)
}
pub fn v_cvt_pk_f32_fp8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    cvt_from_fp8(w, i, 3, 8, true)
}
pub fn v_cvt_pk_f32_bf8(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    cvt_from_fp8(w, i, 2, 16, true)
}
