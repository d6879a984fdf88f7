//! Scalar numeric helpers the handlers share (sign extension, med3, f16 pairs, byte
//! permute, ldexp/frexp, division fixup).

use super::*;

#[inline(always)]
pub(super) fn sext24(x: u32) -> i64 {
    (((x << 8) as i32) >> 8) as i64
}

/// `v_med3_f32` (and f16 through f32) as the ISA manual's pseudo-code gives it: with a NaN
/// operand, the min3 of the three; otherwise the max of the two operands other than the
/// first one found equal to the max3. The max and min are v_max/v_min's (-0 below +0),
/// and "equal" is IEEE equality, so the zeros' order does not hang on the host's min/max.
pub(super) fn med3f(a: f32, b: f32, c: f32) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return fmin32(fmin32(a, b), c);
    }
    let m = fmax32(fmax32(a, b), c);
    if m == a {
        fmax32(b, c)
    } else if m == b {
        fmax32(a, c)
    } else {
        fmax32(a, b)
    }
}

/// v_min_*/v_max_* (and their min3/max3/packed forms, and the LDS and memory float
/// min/max atomics): a NaN operand yields the other operand, and -0 orders below +0. LLVM relies on the latter: it lowers `llvm.minimum`
/// (which orders the zeros) to v_min_f32 plus a NaN check only.
pub(crate) fn fmin32(a: f32, b: f32) -> f32 {
    if a == b && a.is_sign_negative() != b.is_sign_negative() {
        -0.0
    } else {
        a.min(b)
    }
}
pub(crate) fn fmax32(a: f32, b: f32) -> f32 {
    if a == b && a.is_sign_negative() != b.is_sign_negative() {
        0.0
    } else {
        a.max(b)
    }
}
pub(crate) fn fmin64(a: f64, b: f64) -> f64 {
    if a == b && a.is_sign_negative() != b.is_sign_negative() {
        -0.0
    } else {
        a.min(b)
    }
}
pub(crate) fn fmax64(a: f64, b: f64) -> f64 {
    if a == b && a.is_sign_negative() != b.is_sign_negative() {
        0.0
    } else {
        a.max(b)
    }
}

/// VOP3 clamp of integer adds and subtracts saturates instead of wrapping (LLVM selects
/// `v_add_u32_e64 ... clamp` for unsigned saturating adds, e.g. in 64-bit count-leading-
/// zeros); other integer ops ignore the bit.
pub(super) fn int_clamp(name: &str, a: &Lanes, b: &Lanes, d: &mut Lanes) {
    let f: fn(u32, u32) -> u32 = match name {
        "v_add_u32" => |x, y| x.saturating_add(y),
        "v_sub_u32" => |x, y| x.saturating_sub(y),
        "v_subrev_u32" => |x, y| y.saturating_sub(x),
        "v_add_i32" => |x, y| (x as i32).saturating_add(y as i32) as u32,
        "v_sub_i32" => |x, y| (x as i32).saturating_sub(y as i32) as u32,
        "v_add_u16" => |x, y| (x as u16).saturating_add(y as u16) as u32,
        "v_sub_u16" => |x, y| (x as u16).saturating_sub(y as u16) as u32,
        "v_subrev_u16" => |x, y| (y as u16).saturating_sub(x as u16) as u32,
        _ => return,
    };
    for l in 0..LANES {
        d[l] = f(a[l], b[l]);
    }
}

pub(super) fn hf2(a: u32, b: u32, op: fn(f32, f32) -> f32) -> u32 {
    f32_to_f16(op(f16_to_f32(a as u16), f16_to_f32(b as u16))) as u32
}

pub(super) fn perm(a: u32, b: u32, sel: u32) -> u32 {
    let bytes = ((a as u64) << 32) | b as u64;
    let mut d = 0u32;
    for k in 0..4 {
        let s = (sel >> (8 * k)) & 0xff;
        let v = match s {
            0..=7 => ((bytes >> (8 * s)) & 0xff) as u32,
            8..=11 => {
                // Sign of byte 1, 3, 5 or 7 replicated.
                let src = 2 * (s - 8) + 1;
                if (bytes >> (8 * src + 7)) & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xff,
        };
        d |= v << (8 * k);
    }
    d
}

pub(super) fn ldexp32(x: f32, e: i32) -> f32 {
    (x as f64 * 2f64.powi(e.clamp(-400, 400))) as f32
}

/// x * 2^e rounded once (to nearest even). Scaling in steps would round twice when the
/// result is subnormal (an intermediate subnormal rounds, then the next step rounds again).
pub(super) fn ldexp64(x: f64, e: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    // 2^k for k in -1022..=1023, exactly.
    let pow2 = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    // x = m * 2^r with 0.5 <= |m| < 1, exactly.
    let (m, ex) = frexp64(x);
    let r = ex.saturating_add(e);
    if r > 1024 {
        f64::INFINITY.copysign(x)
    } else if r == 1024 {
        // Finite (|m| < 1): an exact step to 2^1023, then an exact doubling.
        m * pow2(1023) * 2.0
    } else if r >= -1021 {
        // A normal result: exact.
        m * pow2(r)
    } else if r < -1075 {
        // Below half the smallest subnormal.
        0f64.copysign(x)
    } else {
        // Subnormal: |x| * 2^1074 as an exact normal number, rounded once to the integer
        // count of 2^-1074 units (2^52 units is the smallest normal, whose bits they are).
        let units = (m.abs() * pow2(r + 1074)).round_ties_even();
        f64::from_bits(units as u64).copysign(x)
    }
}

pub(super) fn frexp32(x: f32) -> (f32, i32) {
    let (m, e) = frexp64(x as f64);
    (m as f32, e)
}

pub(super) fn frexp64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: normalise first.
        let (m, e) = frexp64(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let e = exp - 1022;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, e)
}

pub(super) fn div_fixup32(q: f32, den: f32, num: f32) -> f32 {
    div_fixup64(q as f64, den as f64, num as f64) as f32
}

/// `v_div_fixup`: the quotient `q` of `num / den` with IEEE special cases applied.
pub(super) fn div_fixup64(q: f64, den: f64, num: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    if num.is_nan() {
        return num;
    }
    if den.is_nan() {
        return den;
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if den.is_infinite() || num == 0.0 {
        return if neg { -0.0 } else { 0.0 };
    }
    if q.is_nan() {
        return if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if neg {
        -q.abs()
    } else {
        q.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn med3_follows_the_manual() {
        let (p, n) = (0.0f32, -0.0f32);
        let bits = |x: f32| x.to_bits();
        assert_eq!(med3f(1.0, 3.0, 2.0), 2.0);
        assert_eq!(med3f(3.0, 1.0, 2.0), 2.0);
        assert_eq!(med3f(2.0, 1.0, 3.0), 2.0);
        // A NaN: the min3 of the others.
        assert_eq!(med3f(f32::NAN, 3.0, 2.0), 2.0);
        assert_eq!(med3f(1.0, f32::NAN, 2.0), 1.0);
        // Zeros: max3 is +0, compared equal to the first operand even when it is -0.
        assert_eq!(bits(med3f(p, n, n)), bits(n));
        assert_eq!(bits(med3f(n, p, n)), bits(p));
        assert_eq!(bits(med3f(n, n, p)), bits(p));
        assert_eq!(bits(med3f(p, p, n)), bits(p));
    }

    #[test]
    fn perm_selects_bytes() {
        assert_eq!(perm(0x0403_0201, 0x0807_0605, 0x0706_0504), 0x0403_0201);
        assert_eq!(perm(0, 0x8000_0000, 0x0c0d_0909), 0x00ff_ffff);
    }
}
