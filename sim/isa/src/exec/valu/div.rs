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

/// `v_div_fmas_f32`: fma, post-scaled by 2^+-64 in lanes whose VCC bit is set.
pub fn v_div_fmas_f32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs32::<3>(w, i, true);
    let vcc = w.vcc();
    let mut d = [0u32; LANES];
    for l in 0..LANES {
        let (x, y, z) = (f(a[l]) as f64, f(bb[l]) as f64, f(c[l]) as f64);
        // The f32 product is exact in f64: one rounding here, one to f32 below.
        let r = x.mul_add(y, z);
        d[l] = b(if vcc >> l & 1 != 0 {
            let e = if z.abs() >= 1.0 { 64 } else { -64 };
            ldexp64(r, e) as f32
        } else {
            f(a[l]).mul_add(f(bb[l]), f(c[l]))
        });
    }
    fmods32(w, i, &mut d);
    out32(w, i, mask, &mut d);
    OK
}

pub fn v_div_fmas_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb, c], mask) = srcs64::<3>(w, i, true);
    let vcc = w.vcc();
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let r = g(a[l]).mul_add(g(bb[l]), g(c[l]));
        d[l] = h(if vcc >> l & 1 != 0 {
            let e = if g(c[l]).abs() >= 1.0 { 128 } else { -128 };
            ldexp64(r, e)
        } else {
            r
        });
    }
    fmods64(w, i, &mut d);
    out64(w, i, mask, &d);
    OK
}
