//! Directed rounding for the VALU's float operations (MODE.FP_ROUND).
//!
//! MODE bits 3:0 are FP_ROUND: bits 1:0 for f32, bits 3:2 for f64 and f16; each field is
//! 0 = nearest even, 1 = toward +inf, 2 = toward -inf, 3 = toward zero (LLVM's
//! `SIDefines.h`, FP_ROUND_MODE_SP/DP and FP_ROUND_ROUND_TO_*).
//!
//! Nearest-even is the host's own arithmetic and stays in the handlers' fast loops; this
//! module is only reached when a field is nonzero. It is a small exact soft-float: an
//! operation's exact result is formed in integers (a 106-bit product fits a u128; sums
//! are aligned with the bits shifted out kept as a sticky bit) and rounded once in the
//! requested direction. No host FP-environment state is touched: LLVM assumes the host
//! rounds to nearest, so changing it under Rust code would be undefined behaviour.

/// A rounding direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rm {
    NearestEven,
    Up,
    Down,
    Zero,
}

impl Rm {
    /// Decodes a 2-bit FP_ROUND field (higher bits ignored).
    #[inline(always)]
    pub fn from_field(bits: u32) -> Rm {
        match bits & 3 {
            0 => Rm::NearestEven,
            1 => Rm::Up,
            2 => Rm::Down,
            _ => Rm::Zero,
        }
    }
}

/// Rounding direction of f32 results under MODE value `mode`.
#[inline(always)]
pub fn rm32(mode: u32) -> Rm {
    Rm::from_field(mode)
}

/// Rounding direction of f64 and f16 results under MODE value `mode`.
#[inline(always)]
pub fn rm64(mode: u32) -> Rm {
    Rm::from_field(mode >> 2)
}

/// An IEEE binary format: significand bits `p` (with the hidden bit), exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    p: u32,
    ebits: u32,
}

pub const F64: Fmt = Fmt { p: 53, ebits: 11 };
pub const F32: Fmt = Fmt { p: 24, ebits: 8 };
pub const F16: Fmt = Fmt { p: 11, ebits: 5 };

impl Fmt {
    fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    fn sign_bit(self) -> u64 {
        1 << (self.p - 1 + self.ebits)
    }
    fn exp_max(self) -> u64 {
        (1 << self.ebits) - 1
    }
    fn frac_mask(self) -> u64 {
        (1 << (self.p - 1)) - 1
    }
    fn inf(self, neg: bool) -> u64 {
        self.exp_max() << (self.p - 1) | if neg { self.sign_bit() } else { 0 }
    }
    fn max_finite(self, neg: bool) -> u64 {
        self.inf(neg) - 1
    }
    fn zero(self, neg: bool) -> u64 {
        if neg {
            self.sign_bit()
        } else {
            0
        }
    }
    /// Exponent of the least significant bit of the subnormals (the smallest quantum).
    fn qmin(self) -> i32 {
        1 - self.bias() - (self.p as i32 - 1)
    }
    fn is_finite(self, x: u64) -> bool {
        (x >> (self.p - 1)) & self.exp_max() != self.exp_max()
    }
    fn is_zero(self, x: u64) -> bool {
        x & !self.sign_bit() == 0
    }

    /// The exact value of `x` as f64 (every f16, f32 and f64 is one).
    pub fn to_f64(self, x: u64) -> f64 {
        match self.p {
            53 => f64::from_bits(x),
            24 => f32::from_bits(x as u32) as f64,
            _ => super::half::f16_to_f32(x as u16) as f64,
        }
    }

    /// `x` converted to this format, to nearest even (used for results that are exact:
    /// zeros, infinities and NaNs).
    fn encode_f64(self, x: f64) -> u64 {
        match self.p {
            53 => x.to_bits(),
            24 => (x as f32).to_bits() as u64,
            _ => super::half::f64_to_f16(x) as u64,
        }
    }

    /// `(negative, significand, exponent)` of a finite `x`: |x| = significand * 2^exponent.
    fn split(self, x: u64) -> (bool, u128, i32) {
        let neg = x & self.sign_bit() != 0;
        let e = ((x >> (self.p - 1)) & self.exp_max()) as i32;
        let frac = (x & self.frac_mask()) as u128;
        if e == 0 {
            (neg, frac, self.qmin())
        } else {
            (neg, frac | 1 << (self.p - 1), e + self.qmin() - 1)
        }
    }
}

/// Rounds `(-1)^neg * mant * 2^exp` to `fmt` in direction `rm`. `mant` may carry a
/// "sticky" lowest bit standing for discarded nonzero bits; callers keep at least two
/// guard bits above it, so it never decides a tie on its own.
pub fn round(fmt: Fmt, rm: Rm, neg: bool, mant: u128, exp: i32) -> u64 {
    if mant == 0 {
        return fmt.zero(neg);
    }
    let p = fmt.p as i32;
    let top = exp + (127 - mant.leading_zeros() as i32);
    // The quantum (weight of the last kept bit): p bits below the leading one, but never
    // below the subnormal quantum.
    let q = (top - (p - 1)).max(fmt.qmin());
    let shift = q - exp;
    let (mut kept, inexact, above_half, at_half) = if shift <= 0 {
        // Already on the grid: `-shift` is at most p - 1, so this cannot overflow.
        (mant << (-shift) as u32, false, false, false)
    } else if shift >= 128 {
        (0u128, true, false, false)
    } else {
        let rest = mant & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        (mant >> shift, rest != 0, rest > half, rest == half)
    };
    let up = match rm {
        Rm::NearestEven => above_half || (at_half && kept & 1 != 0),
        Rm::Up => inexact && !neg,
        Rm::Down => inexact && neg,
        Rm::Zero => false,
    };
    let mut q = q;
    if up {
        kept += 1;
        if kept == 1u128 << p {
            kept >>= 1;
            q += 1;
        }
    }
    if kept == 0 {
        return fmt.zero(neg);
    }
    let sign = fmt.zero(neg);
    if kept < 1u128 << (p - 1) {
        // Subnormal (q is the subnormal quantum here).
        return sign | kept as u64;
    }
    let biased = q - fmt.qmin() + 1;
    if biased >= fmt.exp_max() as i32 {
        // Overflow: infinity, or the largest finite value when rounding toward zero or
        // away from this sign's infinity.
        let to_inf = match rm {
            Rm::NearestEven => true,
            Rm::Up => !neg,
            Rm::Down => neg,
            Rm::Zero => false,
        };
        return if to_inf {
            fmt.inf(neg)
        } else {
            fmt.max_finite(neg)
        };
    }
    sign | (biased as u64) << (p - 1) | (kept as u64 & fmt.frac_mask())
}

/// Exact `x + y` of two signed values `(neg, mant, exp)`, then rounded. `zero_neg` is the
/// sign an exact zero gets.
fn add_exact(fmt: Fmt, rm: Rm, x: (bool, u128, i32), y: (bool, u128, i32)) -> u64 {
    if x.1 == 0 {
        return round(fmt, rm, y.0, y.1, y.2);
    }
    if y.1 == 0 {
        return round(fmt, rm, x.0, x.1, x.2);
    }
    // Put both leading bits at bit 125 (two bits of headroom for the carry), then shift
    // the one with the smaller exponent right, folding what falls off into a sticky bit.
    let norm = |(n, m, e): (bool, u128, i32)| {
        let s = m.leading_zeros() as i32 - 2;
        (n, m << s, e - s)
    };
    let (mut a, mut b) = (norm(x), norm(y));
    if a.2 < b.2 {
        std::mem::swap(&mut a, &mut b);
    }
    let d = a.2 - b.2;
    let bm = if d == 0 {
        b.1
    } else if d >= 126 {
        1 // entirely below the guard bits: only stickiness remains
    } else {
        let lost = b.1 & ((1u128 << d) - 1) != 0;
        (b.1 >> d) | lost as u128
    };
    if a.0 == b.0 {
        round(fmt, rm, a.0, a.1 + bm, a.2)
    } else if a.1 >= bm {
        let m = a.1 - bm;
        if m == 0 {
            // Exact cancellation: +0, except -0 when rounding down (IEEE 754 6.3).
            return fmt.zero(rm == Rm::Down);
        }
        round(fmt, rm, a.0, m, a.2)
    } else {
        round(fmt, rm, b.0, bm - a.1, a.2)
    }
}

/// Sign of an exact zero sum of two zeros: negative if both are, or if they differ and the
/// rounding is downward.
fn zero_sum_sign(rm: Rm, xn: bool, yn: bool) -> bool {
    if xn == yn {
        xn
    } else {
        rm == Rm::Down
    }
}

/// `x + y` in `fmt`, rounded in direction `rm`.
pub fn add(fmt: Fmt, rm: Rm, x: u64, y: u64) -> u64 {
    if !fmt.is_finite(x) || !fmt.is_finite(y) {
        return fmt.encode_f64(fmt.to_f64(x) + fmt.to_f64(y));
    }
    let (a, b) = (fmt.split(x), fmt.split(y));
    if a.1 == 0 && b.1 == 0 {
        return fmt.zero(zero_sum_sign(rm, a.0, b.0));
    }
    add_exact(fmt, rm, a, b)
}

/// `x - y` in `fmt`, rounded in direction `rm`.
pub fn sub(fmt: Fmt, rm: Rm, x: u64, y: u64) -> u64 {
    add(fmt, rm, x, y ^ fmt.sign_bit())
}

/// `x * y` in `fmt`, rounded in direction `rm`.
pub fn mul(fmt: Fmt, rm: Rm, x: u64, y: u64) -> u64 {
    if !fmt.is_finite(x) || !fmt.is_finite(y) || fmt.is_zero(x) || fmt.is_zero(y) {
        // Exact results (NaN, infinity or a signed zero): the host's product is right.
        return fmt.encode_f64(fmt.to_f64(x) * fmt.to_f64(y));
    }
    let (a, b) = (fmt.split(x), fmt.split(y));
    round(fmt, rm, a.0 != b.0, a.1 * b.1, a.2 + b.2)
}

/// Fused `x * y + z` in `fmt`, one rounding in direction `rm`.
pub fn fma(fmt: Fmt, rm: Rm, x: u64, y: u64, z: u64) -> u64 {
    if !fmt.is_finite(x) || !fmt.is_finite(y) || !fmt.is_finite(z) {
        return fmt.encode_f64(fmt.to_f64(x).mul_add(fmt.to_f64(y), fmt.to_f64(z)));
    }
    let (a, b, c) = (fmt.split(x), fmt.split(y), fmt.split(z));
    let prod = (a.0 != b.0, a.1 * b.1, a.2 + b.2);
    if prod.1 == 0 && c.1 == 0 {
        return fmt.zero(zero_sum_sign(rm, prod.0, c.0));
    }
    add_exact(fmt, rm, prod, c)
}

/// Fused `(x * y + z) * 2^scale` in `fmt`, one rounding in direction `rm` (`v_div_fmas`:
/// rounding the fma first and scaling after would round twice when the scaled result is
/// subnormal, and a tie made by the first rounding would decide the second).
pub fn fma_scaled(fmt: Fmt, rm: Rm, x: u64, y: u64, z: u64, scale: i32) -> u64 {
    if !fmt.is_finite(x) || !fmt.is_finite(y) || !fmt.is_finite(z) {
        // Infinities and NaNs: scaling by a power of two changes nothing.
        return fmt.encode_f64(fmt.to_f64(x).mul_add(fmt.to_f64(y), fmt.to_f64(z)));
    }
    let (a, b, c) = (fmt.split(x), fmt.split(y), fmt.split(z));
    let prod = (a.0 != b.0, a.1 * b.1, a.2 + b.2 + scale);
    if prod.1 == 0 && c.1 == 0 {
        return fmt.zero(zero_sum_sign(rm, prod.0, c.0));
    }
    add_exact(fmt, rm, prod, (c.0, c.1, c.2 + scale))
}

/// Exact `x + y` of two f64 values, rounded once to `fmt` in direction `rm`.
pub fn add_f64_to(fmt: Fmt, rm: Rm, x: f64, y: f64) -> u64 {
    if !x.is_finite() || !y.is_finite() {
        return fmt.encode_f64(x + y);
    }
    let (a, b) = (F64.split(x.to_bits()), F64.split(y.to_bits()));
    if a.1 == 0 && b.1 == 0 {
        return fmt.zero(zero_sum_sign(rm, a.0, b.0));
    }
    add_exact(fmt, rm, a, b)
}

/// Unfused `x * y + z` (`v_mad_*`, `v_mac_*`): the product is rounded first.
pub fn mad(fmt: Fmt, rm: Rm, x: u64, y: u64, z: u64) -> u64 {
    add(fmt, rm, mul(fmt, rm, x, y), z)
}

/// Converts `x` from format `from` to the narrower format `to`, rounding in direction `rm`.
pub fn convert(from: Fmt, to: Fmt, rm: Rm, x: u64) -> u64 {
    if !from.is_finite(x) {
        return to.encode_f64(from.to_f64(x));
    }
    let (n, m, e) = from.split(x);
    round(to, rm, n, m, e)
}

/// An integer converted to `to`, rounding in direction `rm`.
pub fn from_int(to: Fmt, rm: Rm, v: i64) -> u64 {
    round(to, rm, v < 0, v.unsigned_abs() as u128, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [Rm; 4] = [Rm::NearestEven, Rm::Up, Rm::Down, Rm::Zero];

    /// Reference rounding of an exact rational `num / 2^k` (k >= 0) to f32 by brute force:
    /// the two neighbouring f32 values bracket it, chosen by exact i128 comparisons.
    fn ref_round_f32(num: i128, k: u32, rm: Rm) -> f32 {
        let exact = |x: f32| -> i128 {
            // x * 2^k as an integer (the test values keep this exact and in range).
            let (n, m, e) = F32.split(x.to_bits() as u64);
            let v = if e + k as i32 >= 0 {
                (m as i128) << (e + k as i32)
            } else {
                (m as i128) >> -(e + k as i32)
            };
            if n {
                -v
            } else {
                v
            }
        };
        let approx = (num as f64 / 2f64.powi(k as i32)) as f32;
        let (mut lo, mut hi) = (approx, approx);
        while exact(lo) > num {
            lo = lo.next_down();
        }
        while exact(hi) < num {
            hi = hi.next_up();
        }
        if lo == hi {
            return lo;
        }
        match rm {
            Rm::Up => hi,
            Rm::Down => lo,
            Rm::Zero => {
                if num > 0 {
                    lo
                } else {
                    hi
                }
            }
            Rm::NearestEven => {
                let (dl, dh) = (num - exact(lo), exact(hi) - num);
                if dl < dh || (dl == dh && lo.to_bits() & 1 == 0) {
                    lo
                } else {
                    hi
                }
            }
        }
    }

    #[test]
    fn f64_to_f32_matches_exact_rationals() {
        // Values n / 2^29 around f32 ties and near-ties, both signs (at most 53 bits).
        let base: i128 = (1 << 23) << 29; // 2^23: f32 spacing there is 1 = 2^29 units
        for off in [
            0i128,
            1,
            (1 << 28) - 1,
            1 << 28,
            (1 << 28) + 1,
            3 << 28,
            12345,
        ] {
            for sign in [1i128, -1] {
                let num = sign * (base + off);
                let x = num as f64 / 2f64.powi(29);
                assert_eq!((x * 2f64.powi(29)) as i128, num, "test value not exact");
                for rm in MODES {
                    let got = f32::from_bits(convert(F64, F32, rm, x.to_bits()) as u32);
                    assert_eq!(got, ref_round_f32(num, 29, rm), "{num} {rm:?}");
                }
            }
        }
    }

    #[test]
    fn nearest_even_agrees_with_host() {
        let vals = [
            1.0f64,
            -3.5,
            1e300,
            -1e-300,
            0.1,
            1.0 + f64::EPSILON,
            5e-324,
            f64::MAX,
            -0.0,
            0.0,
            2.5e-310,
        ];
        for &a in &vals {
            assert_eq!(
                convert(F64, F32, Rm::NearestEven, a.to_bits()),
                (a as f32).to_bits() as u64
            );
            for &b in &vals {
                let (x, y) = (a.to_bits(), b.to_bits());
                let r = Rm::NearestEven;
                assert_eq!(add(F64, r, x, y), (a + b).to_bits(), "{a} + {b}");
                assert_eq!(mul(F64, r, x, y), (a * b).to_bits(), "{a} * {b}");
                for &c in &vals {
                    let z = c.to_bits();
                    assert_eq!(
                        fma(F64, r, x, y, z),
                        a.mul_add(b, c).to_bits(),
                        "fma {a} {b} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn f64_add_directed() {
        let (one, tiny) = (1.0f64.to_bits(), 1e-30f64.to_bits());
        assert_eq!(
            f64::from_bits(add(F64, Rm::Up, one, tiny)),
            1.0f64.next_up()
        );
        assert_eq!(f64::from_bits(add(F64, Rm::Down, one, tiny)), 1.0);
        assert_eq!(f64::from_bits(add(F64, Rm::Zero, one, tiny)), 1.0);
        let mtiny = (-1e-30f64).to_bits();
        assert_eq!(
            f64::from_bits(add(F64, Rm::Down, one, mtiny)),
            1.0f64.next_down()
        );
        assert_eq!(
            f64::from_bits(add(F64, Rm::Zero, one, mtiny)),
            1.0f64.next_down()
        );
        assert_eq!(f64::from_bits(add(F64, Rm::Up, one, mtiny)), 1.0);
        // x - x is -0 only when rounding down.
        assert_eq!(sub(F64, Rm::Down, one, one), (-0.0f64).to_bits());
        assert_eq!(sub(F64, Rm::Up, one, one), 0);
        // Overflow: infinity or the largest finite value.
        let m = f64::MAX.to_bits();
        assert_eq!(add(F64, Rm::Zero, m, m), m);
        assert_eq!(add(F64, Rm::Down, m, m), m);
        assert_eq!(add(F64, Rm::Up, m, m), f64::INFINITY.to_bits());
        let nm = (-f64::MAX).to_bits();
        assert_eq!(add(F64, Rm::Up, nm, nm), nm);
        assert_eq!(add(F64, Rm::Down, nm, nm), f64::NEG_INFINITY.to_bits());
    }

    #[test]
    fn f64_mul_and_fma_directed_exact_rationals() {
        // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104: just above a representable value.
        let a = 1.0f64.next_up();
        let x = a.to_bits();
        let base = 1.0 + 2f64.powi(-51);
        assert_eq!(f64::from_bits(mul(F64, Rm::Up, x, x)), base.next_up());
        assert_eq!(f64::from_bits(mul(F64, Rm::Down, x, x)), base);
        assert_eq!(f64::from_bits(mul(F64, Rm::NearestEven, x, x)), base);
        let n = (-a).to_bits();
        assert_eq!(f64::from_bits(mul(F64, Rm::Up, x, n)), -base);
        assert_eq!(f64::from_bits(mul(F64, Rm::Down, x, n)), -base.next_up());
        assert_eq!(f64::from_bits(mul(F64, Rm::Zero, x, n)), -base);
        // fma(a, a, -(1 + 2^-51)) = 2^-104 exactly, in every mode.
        for rm in MODES {
            let r = fma(F64, rm, x, x, (-base).to_bits());
            assert_eq!(f64::from_bits(r), 2f64.powi(-104), "{rm:?}");
        }
        // fma(a, a, -1): 2^-51 + 2^-104 needs 54 bits: directed results differ by an ulp.
        let want = 2f64.powi(-51);
        let m1 = (-1.0f64).to_bits();
        assert_eq!(f64::from_bits(fma(F64, Rm::Down, x, x, m1)), want);
        assert_eq!(f64::from_bits(fma(F64, Rm::Up, x, x, m1)), want.next_up());
        // Subnormal product: 2^-1074 * 0.75 rounds to 0 or to the smallest subnormal.
        let (s, h) = (5e-324f64.to_bits(), 0.75f64.to_bits());
        assert_eq!(mul(F64, Rm::Up, s, h), 1);
        assert_eq!(mul(F64, Rm::Down, s, h), 0);
        assert_eq!(mul(F64, Rm::NearestEven, s, h), 1);
        assert_eq!(mul(F64, Rm::Zero, s, h), 0);
    }

    #[test]
    fn scaled_fma_rounds_once() {
        // 2.5 + 2^-60, scaled to the subnormal quantum: 3 quanta to nearest. Rounding the
        // sum to the format first gives 2.5, a tie that nearest-even then takes down to 2.
        let (x, one) = (2f64.powi(-60), 1.0f64);
        let r = fma_scaled(
            F64,
            Rm::NearestEven,
            x.to_bits(),
            one.to_bits(),
            2.5f64.to_bits(),
            -1074,
        );
        assert_eq!(r, 3);
        let (xs, ones, zs) = (
            2f32.powi(-60).to_bits() as u64,
            1f32.to_bits() as u64,
            2.5f32.to_bits() as u64,
        );
        assert_eq!(fma_scaled(F32, Rm::NearestEven, xs, ones, zs, -149), 3);
        assert_eq!(fma_scaled(F32, Rm::Zero, xs, ones, zs, -149), 2);
        // Normal results: the plain fma times the power of two, in every mode.
        let (a, b, c) = (1.0f64.next_up(), 3.0f64, -0.5f64);
        for rm in MODES {
            let want = f64::from_bits(fma(F64, rm, a.to_bits(), b.to_bits(), c.to_bits()));
            let got = fma_scaled(F64, rm, a.to_bits(), b.to_bits(), c.to_bits(), 128);
            assert_eq!(f64::from_bits(got), want * 2f64.powi(128), "{rm:?}");
        }
        // Overflow and an exact zero.
        let big = f64::MAX.to_bits();
        assert_eq!(
            fma_scaled(F64, Rm::NearestEven, big, one.to_bits(), 0, 1),
            f64::INFINITY.to_bits()
        );
        let m1 = (-1.0f64).to_bits();
        assert_eq!(
            fma_scaled(F64, Rm::NearestEven, one.to_bits(), one.to_bits(), m1, 64),
            0
        );
    }

    #[test]
    fn f16_and_int_conversions() {
        // 2049 lies halfway between the f16 values 2048 and 2050.
        assert_eq!(from_int(F16, Rm::NearestEven, 2049), 0x6800);
        assert_eq!(from_int(F16, Rm::Up, 2049), 0x6801);
        assert_eq!(from_int(F16, Rm::Zero, -2049), 0xe800);
        assert_eq!(from_int(F16, Rm::Down, -2049), 0xe801);
        // 65520 overflows f16 to nearest, but not toward zero.
        assert_eq!(from_int(F16, Rm::NearestEven, 65520), 0x7c00);
        assert_eq!(from_int(F16, Rm::Zero, 65520), 0x7bff);
        assert_eq!(
            from_int(F32, Rm::Up, (1 << 24) + 1),
            ((1u32 << 24) as f32).next_up().to_bits() as u64
        );
        assert_eq!(
            from_int(F32, Rm::Down, i32::MIN as i64),
            (i32::MIN as f32).to_bits() as u64
        );
    }
}
