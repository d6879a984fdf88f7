//! Host arithmetic with the exact rounding the kernels ask for: f16 and bf16 from wider
//! results, IEEE min/max as the AMDGPU lowering of `fmin`/`fmax` behaves, fp8 decoding.

/// Rounding direction of a conversion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rnd {
    NearestEven,
    TowardZero,
}

pub fn f32b(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
pub fn f64b(x: u64) -> f64 {
    f64::from_bits(x)
}
pub fn bf32(x: f32) -> u64 {
    x.to_bits() as u64
}
pub fn bf64(x: f64) -> u64 {
    x.to_bits()
}

/// An f16 bit pattern as the f64 it denotes (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1024.0 + m) * 2f64.powi(e - 25),
    }
}

/// Rounds the exact value `hi + lo` to f16, where `hi` is that value rounded to f64 and
/// `lo` the (tiny) rest: a halfway `hi` is broken by the sign of `lo`. Midpoints between
/// f16 values are f64 values, so `hi` and the exact value never lie on different sides of
/// one (rounding to f64 is monotonic).
pub fn to_f16(hi: f64, lo: f64, rnd: Rnd) -> u16 {
    if hi.is_nan() {
        return 0x7e00;
    }
    let sign: u16 = if hi.is_sign_negative() { 0x8000 } else { 0 };
    let a = hi.abs();
    let lo = if hi.is_sign_negative() { -lo } else { lo };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    let mut e = if a < 2f64.powi(-14) {
        -14
    } else {
        ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
    };
    let scale = 2f64.powi(10 - e);
    let q = a * scale;
    let lo = lo * scale;
    let mut n = match rnd {
        Rnd::TowardZero => {
            let t = q.trunc();
            if q == t && lo < 0.0 && t > 0.0 {
                t - 1.0
            } else {
                t
            }
        }
        Rnd::NearestEven => {
            if q - q.floor() == 0.5 && lo != 0.0 {
                if lo > 0.0 {
                    q.ceil()
                } else {
                    q.floor()
                }
            } else {
                q.round_ties_even()
            }
        }
    } as u32;
    if n >= 2048 {
        n /= 2;
        e += 1;
    }
    if e > 15 {
        return match rnd {
            Rnd::NearestEven => sign | 0x7c00,
            Rnd::TowardZero => sign | 0x7bff,
        };
    }
    if n < 1024 {
        sign | n as u16
    } else {
        sign | (((e + 15) as u16) << 10) | (n - 1024) as u16
    }
}

pub fn f16_round(x: f64) -> u16 {
    to_f16(x, 0.0, Rnd::NearestEven)
}

/// Fused multiply-add of f16 values with one rounding.
pub fn f16_fma(a: u16, b: u16, c: u16) -> u16 {
    f16_fma_f32(
        f16_to_f64(a) as f32,
        f16_to_f64(b) as f32,
        f16_to_f64(c) as f32,
    )
}

/// Fused multiply-add of f32 values rounded once to f16: the product is exact in f64, the
/// sum is split into its f64 rounding and the error (two-sum).
pub fn f16_fma_f32(a: f32, b: f32, c: f32) -> u16 {
    let p = a as f64 * b as f64;
    let c = c as f64;
    let s = p + c;
    if !s.is_finite() {
        return f16_round(s);
    }
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    to_f16(s, err, Rnd::NearestEven)
}

pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// f32 to bf16, round to nearest even (what clang's expansion for gfx9 computes).
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16) | 0x40;
    }
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// `fmin`/`fmax` as AMDGPU lowers `llvm.minnum`/`llvm.maxnum` (inputs quieted, then
/// v_min/v_max): a NaN operand yields the other operand; -0 orders below +0.
pub fn fmin64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}
pub fn fmax64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else if a > b {
        a
    } else {
        b
    }
}
pub fn fmin32(a: f32, b: f32) -> f32 {
    fmin64(a as f64, b as f64) as f32
}
pub fn fmax32(a: f32, b: f32) -> f32 {
    fmax64(a as f64, b as f64) as f32
}

/// gfx942's fp8 formats (the "FNUZ" variants: 0x80 is the only NaN, no infinities, no -0).
pub fn fp8_fnuz(b: u8, mantissa_bits: u32, bias: i32) -> f32 {
    if b == 0x80 {
        return f32::NAN;
    }
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b & 0x7f) >> mantissa_bits) as i32;
    let m = (b & ((1 << mantissa_bits) - 1)) as f64;
    let frac = 2f64.powi(mantissa_bits as i32);
    let v = if e == 0 {
        m / frac * 2f64.powi(1 - bias)
    } else {
        (1.0 + m / frac) * 2f64.powi(e - bias)
    };
    (sign * v) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_rounding_edges() {
        assert_eq!(f16_round(1.0), 0x3c00);
        assert_eq!(f16_round(65504.0), 0x7bff);
        assert_eq!(f16_round(65519.99), 0x7bff);
        assert_eq!(f16_round(65520.0), 0x7c00);
        assert_eq!(f16_round(2f64.powi(-24)), 0x0001);
        assert_eq!(f16_round(2f64.powi(-25)), 0x0000);
        assert_eq!(f16_round(2f64.powi(-25) * 1.5), 0x0001);
        assert_eq!(f16_round(-2f64.powi(-14)), 0x8400);
        assert_eq!(f16_round(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f16_round(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(
            to_f16(1.0 + 2f64.powi(-11), 1e-30, Rnd::NearestEven),
            0x3c01
        );
        assert_eq!(
            to_f16(1.0 + 2f64.powi(-10), -1e-30, Rnd::TowardZero),
            0x3c00
        );
        for h in 0..=0xffffu16 {
            let x = f16_to_f64(h);
            if !x.is_nan() {
                assert_eq!(f16_round(x), h, "{h:#x}");
            }
        }
    }
}
