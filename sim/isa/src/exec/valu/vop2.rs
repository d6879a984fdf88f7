//! VOP2 and VOP3 two-source operations: arithmetic, min/max, shifts and logic, lane
//! reads/writes, `v_cndmask`, and the carry-in/carry-out adds.

use super::*;

v2! {
    v_add_f32(true) => |a, bb| b(f(a) + f(bb)), round rm32 |rm| round::add(S32, rm, a as u64, bb as u64) as u32;
    v_sub_f32(true) => |a, bb| b(f(a) - f(bb)), round rm32 |rm| round::sub(S32, rm, a as u64, bb as u64) as u32;
    v_subrev_f32(true) => |a, bb| b(f(bb) - f(a)), round rm32 |rm| round::sub(S32, rm, bb as u64, a as u64) as u32;
    v_mul_f32(true) => |a, bb| b(f(a) * f(bb)), round rm32 |rm| round::mul(S32, rm, a as u64, bb as u64) as u32;
    v_mul_i32_i24(false) => |a, bb| (sext24(a) * sext24(bb)) as u32;
    v_mul_hi_i32_i24(false) => |a, bb| ((sext24(a) * sext24(bb)) >> 32) as u32;
    v_mul_u32_u24(false) => |a, bb| (a & 0xff_ffff).wrapping_mul(bb & 0xff_ffff);
    v_mul_hi_u32_u24(false) => |a, bb| (((a & 0xff_ffff) as u64 * (bb & 0xff_ffff) as u64) >> 32) as u32;
    v_min_f32(true) => |a, bb| b(fmin32(f(a), f(bb)));
    v_max_f32(true) => |a, bb| b(fmax32(f(a), f(bb)));
    v_min_i32(false) => |a, bb| (a as i32).min(bb as i32) as u32;
    v_max_i32(false) => |a, bb| (a as i32).max(bb as i32) as u32;
    v_min_u32(false) => |a, bb| a.min(bb);
    v_max_u32(false) => |a, bb| a.max(bb);
    v_lshrrev_b32(false) => |a, bb| bb >> (a & 31);
    v_ashrrev_i32(false) => |a, bb| ((bb as i32) >> (a & 31)) as u32;
    v_lshlrev_b32(false) => |a, bb| bb << (a & 31);
    v_and_b32(false) => |a, bb| a & bb;
    v_or_b32(false) => |a, bb| a | bb;
    v_xor_b32(false) => |a, bb| a ^ bb;
    v_xnor_b32(false) => |a, bb| !(a ^ bb);
    v_add_u32(false) => |a, bb| a.wrapping_add(bb);
    v_sub_u32(false) => |a, bb| a.wrapping_sub(bb);
    v_subrev_u32(false) => |a, bb| bb.wrapping_sub(a);
    v_add_i32(false) => |a, bb| a.wrapping_add(bb);
    v_sub_i32(false) => |a, bb| a.wrapping_sub(bb);
    v_add_f16(false) => |a, bb| hf2(a, bb, |x, y| x + y), round rm64 |rm| round::add(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_sub_f16(false) => |a, bb| hf2(a, bb, |x, y| x - y), round rm64 |rm| round::sub(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_subrev_f16(false) => |a, bb| hf2(a, bb, |x, y| y - x), round rm64 |rm| round::sub(H16, rm, (bb & 0xffff) as u64, (a & 0xffff) as u64) as u32;
    v_mul_f16(false) => |a, bb| hf2(a, bb, |x, y| x * y), round rm64 |rm| round::mul(H16, rm, (a & 0xffff) as u64, (bb & 0xffff) as u64) as u32;
    v_max_f16(false) => |a, bb| hf2(a, bb, fmax32);
    v_min_f16(false) => |a, bb| hf2(a, bb, fmin32);
    v_add_u16(false) => |a, bb| (a as u16).wrapping_add(bb as u16) as u32;
    v_sub_u16(false) => |a, bb| (a as u16).wrapping_sub(bb as u16) as u32;
    v_subrev_u16(false) => |a, bb| (bb as u16).wrapping_sub(a as u16) as u32;
    v_mul_lo_u16(false) => |a, bb| (a as u16).wrapping_mul(bb as u16) as u32;
    v_lshlrev_b16(false) => |a, bb| ((bb as u16) << (a & 15)) as u32;
    v_lshrrev_b16(false) => |a, bb| ((bb as u16) >> (a & 15)) as u32;
    v_ashrrev_i16(false) => |a, bb| ((bb as u16 as i16) >> (a & 15)) as u16 as u32;
    v_max_u16(false) => |a, bb| (a as u16).max(bb as u16) as u32;
    v_max_i16(false) => |a, bb| (a as u16 as i16).max(bb as u16 as i16) as u16 as u32;
    v_min_u16(false) => |a, bb| (a as u16).min(bb as u16) as u32;
    v_min_i16(false) => |a, bb| (a as u16 as i16).min(bb as u16 as i16) as u16 as u32;
    v_mul_lo_u32(false) => |a, bb| a.wrapping_mul(bb);
    v_mul_hi_u32(false) => |a, bb| ((a as u64 * bb as u64) >> 32) as u32;
    v_mul_hi_i32(false) => |a, bb| ((a as i32 as i64 * bb as i32 as i64) >> 32) as u32;
    v_ldexp_f32(true) => |a, bb| b(ldexp32(f(a), bb as i32));
    v_bcnt_u32_b32(false) => |a, bb| a.count_ones().wrapping_add(bb);
    v_bfm_b32(false) => |a, bb| (((1u64 << (a & 31)) - 1) as u32) << (bb & 31);
    v_cvt_pkrtz_f16_f32(true) => |a, bb| f32_to_f16_rtz(f(a)) as u32 | (f32_to_f16_rtz(f(bb)) as u32) << 16;
    v_pack_b32_f16(false) => |a, bb| (a & 0xffff) | (bb << 16);
}

simd_handler! {
    /// `v_mbcnt_lo_u32_b32`: bits of src0 set below this lane (lanes 0..31), plus src1.
    pub fn v_mbcnt_lo_u32_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        let ([a, bb], mask) = srcs32::<2>(w, i, false);
        let mut d = [0u32; LANES];
        for l in 0..LANES {
            let below = if l >= 32 { u32::MAX } else { (1u32 << l) - 1 };
            d[l] = (a[l] & below).count_ones().wrapping_add(bb[l]);
        }
        out32(w, i, mask, &mut d);
        OK
    }
}

simd_handler! {
    pub fn v_mbcnt_hi_u32_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        let ([a, bb], mask) = srcs32::<2>(w, i, false);
        let mut d = [0u32; LANES];
        for l in 0..LANES {
            let below = if l < 32 {
                0
            } else if l == 63 {
                u32::MAX >> 1
            } else {
                (1u32 << (l - 32)) - 1
            };
            d[l] = (a[l] & below).count_ones().wrapping_add(bb[l]);
        }
        out32(w, i, mask, &mut d);
        OK
    }
}

pub fn v_readlane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let lane = (w.sread32(i.src[1], i.lit, i.info.fk) & 63) as usize;
    let mut v = [0u32; LANES];
    w.vread32(i.src[0], i.lit, i.info.fk, &mut v);
    w.write_s32(i.dst, v[lane]);
    OK
}

pub fn v_writelane_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let v = w.sread32(i.src[0], i.lit, i.info.fk);
    let lane = (w.sread32(i.src[1], i.lit, i.info.fk) & 63) as usize;
    // Writes regardless of EXEC, by definition.
    w.set_vlane((i.dst as usize).wrapping_sub(256), lane, v);
    OK
}

simd_handler! {
    pub fn v_cndmask_b32(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
        let ([a, bb], mask) = srcs32::<2>(w, i, (i.abs | i.neg) != 0);
        let sel = w.sreg64(i.src[2]);
        let mut d = [0u32; LANES];
        for l in 0..LANES {
            d[l] = if sel >> l & 1 != 0 { bb[l] } else { a[l] };
        }
        out32(w, i, mask, &mut d);
        OK
    }
}

/// Each lane's `op(a, b, carry_in)` as results and a carry mask, one loop per form of the
/// operands. On 32-bit lanes (eight to a vector register) with the carry-in bits spread by
/// 32-bit shifts: 64-bit sums and a 64-bit shift of the mask per lane took four lanes a
/// register and twice the instructions.
#[inline(always)]
fn carry_lanes(
    a: Operand,
    b: Operand,
    cin: u64,
    op: impl Fn(u32, u32, u32) -> (u32, bool),
) -> (Lanes, u64) {
    #[inline(always)]
    fn each(
        x: impl Fn(usize) -> u32,
        y: impl Fn(usize) -> u32,
        cin: u64,
        op: impl Fn(u32, u32, u32) -> (u32, bool),
    ) -> (Lanes, u64) {
        let carry_in = crate::exec::simd::lane_masks(cin);
        let mut d = [0u32; LANES];
        // Carries as 0 or all ones per lane, packed by sign bits (see simd::mask64).
        let mut carries = [0u32; LANES];
        for l in 0..LANES {
            let (r, c) = op(x(l), y(l), carry_in[l] & 1);
            d[l] = r;
            carries[l] = (c as u32).wrapping_neg();
        }
        (d, crate::exec::simd::mask64(&carries))
    }
    match (a, b) {
        (Operand::Lanes(a), Operand::Lanes(b)) => each(|l| a[l], |l| b[l], cin, op),
        (Operand::Value(a), Operand::Lanes(b)) => each(|_| a, |l| b[l], cin, op),
        (Operand::Lanes(a), Operand::Value(b)) => each(|l| a[l], |_| b, cin, op),
        (Operand::Value(a), Operand::Value(b)) => each(|_| a, |_| b, cin, op),
    }
}

/// Carry-out ops: `(a, b, carry_in) -> (result, carry_out)`; carry bits go to sdst for the
/// active lanes (inactive lanes read as 0 there, as the hardware writes them).
macro_rules! carry {
    ($($name:ident($cin:expr) => |$a:ident, $bb:ident, $ci:ident| $body:expr;)*) => {$(
        simd_handler! { pub fn $name(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
            if i.plain {
                // Address arithmetic on gfx90a (a 64-bit add is a pair of these): the
                // sources read in place, one lane loop per operand form.
                let cin_mask = if $cin { w.sreg64(i.src[2]) } else { 0 };
                let mask = w.exec();
                let (d, co) = carry_lanes(Operand::of(w, i, 0), Operand::of(w, i, 1), cin_mask, |$a, $bb, $ci| $body);
                w.lane_ops += mask.count_ones() as u64;
                w.vwrite32(i.dst, mask, &d);
                w.write_s64(i.sdst, co & mask);
                return OK;
            }
            let ([$a, $bb], mask) = srcs32::<2>(w, i, false);
            let cin_mask = if $cin { w.sreg64(i.src[2]) } else { 0 };
            let mut d = [0u32; LANES];
            let mut co = 0u64;
            for l in 0..LANES {
                let ($a, $bb, $ci) = ($a[l], $bb[l], (cin_mask >> l) as u32 & 1);
                let (r, c): (u32, bool) = $body;
                d[l] = r;
                co |= (c as u64) << l;
            }
            out32(w, i, mask, &mut d);
            w.write_s64(i.sdst, co & mask);
            OK
        } }
    )*};
}

// On u32 with the carry-in 0 or 1: a sum carries where it wrapped below an addend (either
// step of a + b + ci), a difference borrows where b exceeds a or what is left is below ci.
carry! {
    v_add_co_u32(false) => |a, bb, _ci| { let t = a.wrapping_add(bb); (t, t < a) };
    v_sub_co_u32(false) => |a, bb, _ci| (a.wrapping_sub(bb), bb > a);
    v_subrev_co_u32(false) => |a, bb, _ci| (bb.wrapping_sub(a), a > bb);
    v_addc_co_u32(true) => |a, bb, ci| {
        let s = a.wrapping_add(bb);
        let t = s.wrapping_add(ci);
        (t, (s < a) | (t < s))
    };
    v_subb_co_u32(true) => |a, bb, ci| {
        let t = a.wrapping_sub(bb);
        (t.wrapping_sub(ci), (bb > a) | (t < ci))
    };
    v_subbrev_co_u32(true) => |a, bb, ci| {
        let t = bb.wrapping_sub(a);
        (t.wrapping_sub(ci), (a > bb) | (t < ci))
    };
}
