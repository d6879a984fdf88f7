//! IEEE division: `v_div_scale`, `v_div_fmas` (`v_div_fixup` is a three-source op, its
//! arithmetic in `numeric`).

use super::*;

// IEEE division is a sequence: `v_div_scale` (numerator and denominator), a Newton-Raphson
// refinement of `v_rcp` with fmas, `v_div_fmas` (last step, undoing any post-scale VCC asks
// for) and `v_div_fixup` (signs, zeros, infinities, NaNs). The scaling keeps every
// intermediate of the refinement in the normal range, whatever the operands:
//
// - both operands are scaled by 2^-e, e the denominator's exponent, so the denominator
//   lies in [1, 2) and its reciprocal is normal;
// - when the quotient itself would leave the normal range (its exponent beyond +-BIG),
//   the numerator gets an extra 2^-+S and VCC says so; `v_div_fmas` multiplies its
//   result by 2^+S when the scaled quotient is >= 1 (it was scaled down: a huge
//   quotient) and by 2^-S otherwise (a tiny one), so denormal and overflowing quotients
//   are rounded once, at the end, in the result's own precision.
//
// This is hsasim's model of the hardware's scaling (the ISA manual gives the shape of it:
// scale operands by powers of two, VCC = "post-scaling is required"); it is exact in the
// same cases the hardware is: the sequence LLVM emits yields the correctly rounded
// quotient over the whole range, denormals included.

/// Scaling of `v_div_scale`: (exponent shift for the value, VCC) given the denominator and
/// numerator, in the operand's precision (`big`, `post` as above).
pub(super) fn div_scale_plan(
    den: f64,
    num: f64,
    is_den: bool,
    big: i32,
    post: i32,
) -> Option<(i32, bool)> {
    if den == 0.0 || num == 0.0 || !den.is_finite() || !num.is_finite() {
        return None;
    }
    let (ed, en) = (frexp64(den).1, frexp64(num).1);
    let eq = en - ed;
    let extra = if eq > big {
        -post
    } else if eq < -big {
        post
    } else {
        0
    };
    let shift = -ed + if is_den { 0 } else { extra };
    Some((shift, extra != 0))
}

pub fn v_div_scale_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs32::<3>(w, i, true);
    let mut d = [0u32; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (x, den, num) = (f(a[l]), f(bb[l]), f(c[l]));
        d[l] = match div_scale_plan(den as f64, num as f64, a[l] == bb[l], 100, 64) {
            Some((shift, post)) => {
                vcc |= (post as u64) << l;
                b(ldexp64(x as f64, shift) as f32)
            }
            None => a[l],
        };
    }
    out32(w, i, mask, &mut d);
    w.write_s64(i.sdst, vcc & mask);
    OK
}

pub fn v_div_scale_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, true);
    let mut d = [0u64; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (x, den, num) = (g(a[l]), g(bb[l]), g(c[l]));
        d[l] = match div_scale_plan(den, num, a[l] == bb[l], 900, 128) {
            Some((shift, post)) => {
                vcc |= (post as u64) << l;
                h(ldexp64(x, shift))
            }
            None => a[l],
        };
    }
    out64(w, i, mask, &d);
    w.write_s64(i.sdst, vcc & mask);
    OK
}

/// `v_div_fmas_f32`: fma, post-scaled by 2^+-64 in lanes whose VCC bit is set. The scaled
/// result is rounded once: it is where a denormal or overflowing quotient gets its final
/// rounding, and rounding the fma to f32 (or f64) before scaling would round twice.
pub fn v_div_fmas_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs32::<3>(w, i, true);
    let vcc = w.vcc();
    let rm = round::rm32(w.mode);
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let (x, y, z) = (a[l] as u64, bb[l] as u64, c[l] as u64);
        d[l] = if vcc >> l & 1 != 0 {
            let e = if f(c[l]).abs() >= 1.0 { 64 } else { -64 };
            round::fma_scaled(S32, rm, x, y, z, e) as u32
        } else if rm == Rm::NearestEven {
            b(f(a[l]).mul_add(f(bb[l]), f(c[l])))
        } else {
            round::fma(S32, rm, x, y, z) as u32
        };
    }
    fmods32(w, i, &mut d);
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_div_fmas_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, true);
    let vcc = w.vcc();
    let rm = round::rm64(w.mode);
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        d[l] = if vcc >> l & 1 != 0 {
            let e = if g(c[l]).abs() >= 1.0 { 128 } else { -128 };
            round::fma_scaled(D64, rm, a[l], bb[l], c[l], e)
        } else if rm == Rm::NearestEven {
            h(g(a[l]).mul_add(g(bb[l]), g(c[l])))
        } else {
            round::fma(D64, rm, a[l], bb[l], c[l])
        };
    }
    fmods64(w, i, &mut d);
    out64(w, i, mask, &d);
    OK
}
