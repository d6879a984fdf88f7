//! `v_trig_preop_f64`: bits of 2/pi for Payne-Hanek range reduction.

use super::*;

/// The fraction bits of 2/pi (0.A2F9836E...), 1584 of them: the hardware's table holds
/// 1201 (`v_trig_preop_f64` reads b_1200..b_0 = the first 1201 bits after the point).
pub(super) const TWO_OVER_PI: &str =
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561\
b7246e3a424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639\
835339f49c845f8bbdf9283b1ff897ffde05980fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d\
7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b6babf0cfbc209af4361da9e39161\
5ee61b086599855f14a068408dffd8804d73273106061556ca73a8c960e27bc08c6b";

/// Bit `p` (1-based after the binary point) of 2/pi; 0 past the hardware's 1201 bits.
pub(super) fn two_over_pi_bit(p: usize) -> u64 {
    if p == 0 || p > 1201 {
        return 0;
    }
    let digit = TWO_OVER_PI.as_bytes()[(p - 1) / 4];
    let v = (digit as char).to_digit(16).unwrap_or(0) as u64;
    (v >> (3 - (p - 1) % 4)) & 1
}

/// `v_trig_preop_f64 d, x, seg`: 53 bits of 2/pi for Payne-Hanek range reduction: the bits
/// after `shift = 53 * seg[4:0]` (plus the exponent excess of x over 1077), as a double
/// scaled by 2^(-53 - shift) (2^128 more for exponents >= 1968), per the ISA manual.
pub fn v_trig_preop_f64(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let ([a, bb], mask) = srcs64::<2>(w, i, true);
    let mut d = [0u64; LANES];
    for l in 0..LANES {
        let exp = ((a[l] >> 52) & 0x7ff) as i64;
        let mut shift = (bb[l] & 31) as i64 * 53;
        if exp > 1077 {
            shift += exp - 1077;
        }
        let mut bits = 0u64;
        for k in 1..=53 {
            bits = bits << 1 | two_over_pi_bit(shift as usize + k);
        }
        let mut scale = -53 - shift;
        if exp >= 1968 {
            scale += 128;
        }
        d[l] = h(ldexp64(bits as f64, scale as i32));
    }
    fmods64(w, i, &mut d);
    out64(w, i, mask, &d);
    OK
}
