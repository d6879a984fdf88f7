//! IEEE binary16 conversions, exact or correctly rounded to nearest even (and the
//! round-toward-zero one `v_cvt_pkrtz` needs), for every handler that reads or writes f16.

/// IEEE binary16 -> binary32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // Subnormal: value = man * 2^-24.
            let v = man as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// binary64 -> binary16 with one rounding (to nearest even): round to f32 with
/// round-to-odd first (24 bits keep enough to make the second rounding exact).
pub fn f64_to_f16(x: f64) -> u16 {
    let mut y = x as f32;
    if y.is_finite() && (y as f64) != x {
        // Step toward zero if the nearest rounding went away from it, then make the last
        // bit sticky.
        if (y as f64).abs() > x.abs() {
            y = f32::from_bits(y.to_bits() - 1);
        }
        y = f32::from_bits(y.to_bits() | 1);
    }
    f32_to_f16(y)
}

/// `a * b + c` for f32 values `a`, `b` (products of f32 values are exact in f64) as an
/// f64 rounded to odd: the sum's rounding error (two-sum, exact here) decides the last
/// bit, so rounding the result once more to f16 or f32 is the single rounding of the
/// exact value. A plain f64 fma rounded again loses an addend far below the f64 ulp that
/// breaks an f16 tie.
pub fn fma_f32_round_to_odd(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return s;
    }
    let pv = s - c;
    let err = (p - pv) + (c - (s - pv));
    if err == 0.0 || s.to_bits() & 1 != 0 {
        return s;
    }
    // s is nonzero here (an inexact sum is), and the exact value lies between s and its
    // neighbour on err's side: that neighbour has the odd last bit.
    let bits = s.to_bits();
    f64::from_bits(if (err > 0.0) == (s > 0.0) {
        bits + 1
    } else {
        bits - 1
    })
}

/// binary32 -> binary16, round to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 255 {
        return sign
            | 0x7c00
            | if man != 0 {
                0x200 | (man >> 13) as u16
            } else {
                0
            };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1u32 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 != 0) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 != 0) {
        r += 1;
    }
    sign | r as u16
}

pub fn f32_to_f16_rtz(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7bff;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        return sign | ((man | 0x80_0000) >> (14 - e) as u32) as u16;
    }
    sign | (((e as u32) << 10) | (man >> 13)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_trip() {
        for h in [0u16, 0x3c00, 0xbc00, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0x3555] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
        }
        assert_eq!(f32_to_f16(1.0 + 1.0 / 4096.0), 0x3c00);
    }

    #[test]
    fn fma_to_f16_rounds_once() {
        let tiny = 2f64.powi(-35);
        // 1 + 2^-11 is halfway between 0x3c00 and 0x3c01: a product far below the f64
        // ulp of the sum still breaks the tie.
        let mid = 1.0 + 2f64.powi(-11);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(tiny, tiny, mid)), 0x3c01);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(-tiny, tiny, mid)), 0x3c00);
        let mid2 = 1.0 + 3.0 * 2f64.powi(-11);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(-tiny, tiny, mid2)), 0x3c01);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(tiny, tiny, mid2)), 0x3c02);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(tiny, tiny, -mid)), 0xbc00);
        assert_eq!(f64_to_f16(fma_f32_round_to_odd(-tiny, tiny, -mid)), 0xbc01);
        // Exact sums, zeros and infinities pass through.
        assert_eq!(fma_f32_round_to_odd(1.5, 2.0, 0.25), 3.25);
        assert_eq!(fma_f32_round_to_odd(-0.0, 1.0, 0.0).to_bits(), 0);
        assert_eq!(
            fma_f32_round_to_odd(-0.0, 1.0, -0.0).to_bits(),
            (-0f64).to_bits()
        );
        assert_eq!(fma_f32_round_to_odd(1.0, f64::INFINITY, 1.0), f64::INFINITY);
        assert!(fma_f32_round_to_odd(0.0, f64::INFINITY, 1.0).is_nan());
    }
}
