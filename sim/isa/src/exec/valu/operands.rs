//! Operand plumbing shared by every VALU handler: reading sources (with DPP/SDWA and
//! input modifiers), denormal flushing, output modifiers, and writing results under EXEC.

use super::*;

/// Reads `N` 32-bit sources; returns them and the write mask (EXEC, narrowed by DPP).
#[inline(always)]
pub(super) fn srcs32<const N: usize>(w: &Wave, i: &Inst, float: bool) -> ([Lanes; N], u64) {
    let mut s = [[0u32; LANES]; N];
    let mut mask = w.exec();
    for (n, out) in s.iter_mut().enumerate() {
        w.vread32(i.src[n], i.lit, i.info.fk, out);
    }
    if i.ext != Ext::None {
        mask &= ext_sources(w, i, &mut s);
    }
    if i.opsel & 7 != 0 && i.enc == Enc::Vop3 {
        // VOP3 op_sel[n] reads the high half of 16-bit source n.
        for (n, v) in s.iter_mut().enumerate() {
            if i.opsel >> n & 1 != 0 {
                for x in v.iter_mut() {
                    *x >>= 16;
                }
            }
        }
    }
    // f16 operations take their modifiers too (their handlers pass `float: false` only to
    // skip the f32 denormal flush).
    let f16_sources = i.info.fk == crate::inst::FloatKind::F16;
    if (float || f16_sources) && (i.abs | i.neg) != 0 && i.ext != Ext::Sdwa {
        // f16 sources keep their sign in bit 15 (the op's name ends in its source type).
        let sign = if i.info.name.ends_with("_f16") {
            0x8000
        } else {
            0x8000_0000
        };
        for (n, v) in s.iter_mut().enumerate() {
            let (abs, neg) = (i.abs >> n & 1 != 0, i.neg >> n & 1 != 0);
            if abs || neg {
                for x in v.iter_mut() {
                    if abs {
                        *x &= !sign;
                    }
                    if neg {
                        *x ^= sign;
                    }
                }
            }
        }
    }
    (s, mask)
}

/// A 32-bit source read in place: a register's lanes or one value for all of them (a
/// scalar, constant or literal kept in a register rather than spread over 64 lanes).
#[derive(Clone, Copy)]
pub(super) enum Operand<'a> {
    Lanes(&'a Lanes),
    Value(u32),
}

impl<'a> Operand<'a> {
    /// Source `n` of `i` as it is, with no modifier applied.
    #[inline(always)]
    pub(super) fn of(w: &'a Wave, i: &Inst, n: usize) -> Operand<'a> {
        match i.src[n] {
            code @ 256.. => Operand::Lanes(&w.v[(code as usize - 256) & 511]),
            code => Operand::Value(w.sread32(code, i.lit, i.info.fk)),
        }
    }
}

/// True when [`srcs32`] would return the sources unchanged (no DPP/SDWA, VOP3 op_sel or
/// abs/neg): a handler may then read them in place.
#[inline(always)]
pub(super) fn plain_sources(i: &Inst) -> bool {
    i.ext == Ext::None && !(i.opsel & 7 != 0 && i.enc == Enc::Vop3) && (i.abs | i.neg) == 0
}

/// 64-bit sources (`wide` says which of the N operands are 64-bit; others zero-extend).
#[inline(always)]
pub(super) fn srcs64<const N: usize>(w: &Wave, i: &Inst, float: bool) -> ([L64; N], u64) {
    let mut s = [[0u64; LANES]; N];
    for (n, out) in s.iter_mut().enumerate() {
        if i.info.w[n + 1] >= 2 {
            // A 64-bit operand of an op named for its 32-bit sources (src2 of
            // v_mad_u64_u32) takes 64-bit inline constants.
            let fk = match i.info.fk {
                crate::inst::FloatKind::F32 => crate::inst::FloatKind::I64,
                fk => fk,
            };
            w.vread64(i.src[n], i.lit, fk, out);
        } else {
            let mut t = [0u32; LANES];
            w.vread32(i.src[n], i.lit, i.info.fk, &mut t);
            for l in 0..LANES {
                out[l] = t[l] as u64;
            }
        }
    }
    let mut mask = w.exec();
    if i.ext == Ext::Dpp {
        // 64-bit DPP (v_mov_b64 on gfx942 and friends): permute both halves alike.
        let mut lo = [0u32; LANES];
        let mut hi = [0u32; LANES];
        for l in 0..LANES {
            lo[l] = s[0][l] as u32;
            hi[l] = (s[0][l] >> 32) as u32;
        }
        let m = dpp(w, i, &mut lo);
        dpp(w, i, &mut hi);
        mask &= m;
        for l in 0..LANES {
            s[0][l] = lo[l] as u64 | (hi[l] as u64) << 32;
        }
    }
    if float && (i.abs | i.neg) != 0 {
        for (n, v) in s.iter_mut().enumerate() {
            let (abs, neg) = (i.abs >> n & 1 != 0, i.neg >> n & 1 != 0);
            // The sign bit of this source: an f32 source of v_cvt_f64_f32 has it at 31.
            let sign = if i.info.w[n + 1] >= 2 {
                1u64 << 63
            } else {
                1 << 31
            };
            for x in v.iter_mut() {
                if abs {
                    *x &= !sign;
                }
                if neg {
                    *x ^= sign;
                }
            }
        }
    }
    (s, mask)
}

/// Applies DPP or SDWA to the sources; returns the lanes allowed to write.
pub(super) fn ext_sources<const N: usize>(w: &Wave, i: &Inst, s: &mut [Lanes; N]) -> u64 {
    match i.ext {
        Ext::Dpp if N > 0 => dpp(w, i, &mut s[0]),
        Ext::Sdwa => {
            let e = i.lit;
            let sign = sdwa_sign_bit(i);
            if N > 0 {
                sdwa_sel(&mut s[0], (e >> 16) & 7, (e >> 19) & 1 != 0);
                sdwa_mods(&mut s[0], (e >> 21) & 1 != 0, (e >> 20) & 1 != 0, sign);
            }
            if N > 1 && i.enc != Enc::Vop1 {
                sdwa_sel(&mut s[1], (e >> 24) & 7, (e >> 27) & 1 != 0);
                sdwa_mods(&mut s[1], (e >> 29) & 1 != 0, (e >> 28) & 1 != 0, sign);
            }
            u64::MAX
        }
        _ => u64::MAX,
    }
}

pub(super) fn sdwa_sel(v: &mut Lanes, sel: u32, sext: bool) {
    if sel >= 6 {
        return;
    }
    for x in v.iter_mut() {
        *x = match sel {
            0..=3 => {
                let b = (*x >> (8 * sel)) & 0xff;
                if sext {
                    b as u8 as i8 as i32 as u32
                } else {
                    b
                }
            }
            _ => {
                let h = (*x >> (16 * (sel - 4))) & 0xffff;
                if sext {
                    h as u16 as i16 as i32 as u32
                } else {
                    h
                }
            }
        };
    }
}

/// The sign bit SDWA's abs and neg act on: the operation's source type decides, after the
/// select: an f16 operation's source is the low 16 bits of what was selected, whatever the
/// select (LLVM folds `fabs` of an f16 value into `src0_sel:DWORD` with abs, as in
/// `v_cmp_le_f16_sdwa s[8:9], |v2|, v8 src0_sel:DWORD src1_sel:WORD_1`), and an f32
/// operation's is the whole selected and extended dword.
pub(super) fn sdwa_sign_bit(i: &Inst) -> u32 {
    if i.info.name.ends_with("_f16") {
        0x8000
    } else {
        0x8000_0000
    }
}

/// SDWA float modifiers on a selected source; `sign` from [`sdwa_sign_bit`].
pub(super) fn sdwa_mods(v: &mut Lanes, abs: bool, neg: bool, sign: u32) {
    if !abs && !neg {
        return;
    }
    for x in v.iter_mut() {
        if abs {
            *x &= !sign;
        }
        if neg {
            *x ^= sign;
        }
    }
}

/// DPP lane permutation of src0 (GFX9 controls). Returns the lanes that may write.
pub(super) fn dpp(w: &Wave, i: &Inst, v: &mut Lanes) -> u64 {
    let e = i.lit;
    let ctrl = (e >> 8) & 0x1ff;
    let bound_ctrl = (e >> 19) & 1 != 0;
    let bank_mask = (e >> 24) & 0xf;
    let row_mask = (e >> 28) & 0xf;
    let exec = w.exec();
    let orig = *v;
    let mut mask = 0u64;
    for l in 0..LANES {
        let row = l / 16;
        let in_row = l % 16;
        let src: Option<usize> = match ctrl {
            0x000..=0x0ff => Some((l & !3) | ((ctrl >> ((l & 3) * 2)) & 3) as usize),
            0x101..=0x10f => {
                let n = (ctrl & 0xf) as usize;
                (in_row + n < 16).then(|| l + n)
            }
            0x111..=0x11f => {
                let n = (ctrl & 0xf) as usize;
                (in_row >= n).then(|| l - n)
            }
            0x121..=0x12f => {
                let n = (ctrl & 0xf) as usize;
                Some(row * 16 + (in_row + 16 - n) % 16)
            }
            0x130 => (l < 63).then(|| l + 1),
            0x134 => Some((l + 1) % 64),
            0x138 => (l > 0).then(|| l - 1),
            0x13c => Some((l + 63) % 64),
            0x140 => Some(row * 16 + 15 - in_row),
            0x141 => Some(row * 16 + (in_row & 8) + 7 - (in_row & 7)),
            0x142 => (row > 0).then(|| row * 16 - 1),
            0x143 => (l >= 32).then_some(31),
            // row_newbcast:n (gfx90a, gfx942): lane n of each row to the whole row.
            0x150..=0x15f => Some(row * 16 + (ctrl & 0xf) as usize),
            // The decoder refuses the reserved controls.
            _ => None,
        };
        let enabled = (row_mask >> row) & 1 != 0 && (bank_mask >> ((l >> 2) & 3)) & 1 != 0;
        if !enabled {
            continue;
        }
        // A source lane that does not exist or is inactive reads 0 with bound_ctrl,
        // otherwise the destination lane keeps its value.
        match src {
            Some(s) if exec >> s & 1 != 0 => {
                v[l] = orig[s];
                mask |= 1 << l;
            }
            _ if bound_ctrl => {
                v[l] = 0;
                mask |= 1 << l;
            }
            _ => {}
        }
    }
    mask
}

/// MODE.FP_DENORM bits for f32 (5:4) and f64/f16 (7:6): 0 flushes denormal inputs and
/// outputs to a signed zero, 3 (HIP's default) keeps them. The partial modes (flush only
/// inputs or only outputs) are treated as "keep".
#[inline(always)]
pub(super) fn flush32(w: &Wave) -> bool {
    w.mode & 0x30 == 0
}
#[inline(always)]
pub(super) fn flush64(w: &Wave) -> bool {
    w.mode & 0xc0 == 0
}

/// True when opcode `name` produces a float of the type `suffix` names (conversions to
/// integers and exponent extraction produce integers, which are never flushed).
pub(super) fn float_result(name: &str, suffix: &str) -> bool {
    let convert_to = name.strip_prefix("v_cvt_");
    match convert_to {
        Some(rest) => rest.starts_with(&suffix[1..]),
        None => name.ends_with(suffix) && !name.contains("frexp_exp"),
    }
}

/// True when an f32 operation's inputs are flushed (f16 operations have their own mode
/// bits and keep f16 denormals here).
#[inline(always)]
pub(super) fn flush_inputs(w: &Wave, i: &Inst) -> bool {
    flush32(w) && i.info.fk == crate::inst::FloatKind::F32
}

#[inline(always)]
pub(super) fn flush_lanes32(d: &mut Lanes) {
    for x in d.iter_mut() {
        if *x & 0x7f80_0000 == 0 {
            *x &= 0x8000_0000;
        }
    }
}

/// Output modifiers of float results (VOP3 omod/clamp), then the MODE denormal flush.
#[inline(always)]
pub(super) fn fmods32(w: &Wave, i: &Inst, d: &mut Lanes) {
    if flush32(w) && float_result(i.info.name, "_f32") {
        flush_lanes32(d);
    }
    let (omod, clamp) = if i.ext == Ext::Sdwa {
        ((i.lit >> 14) & 3, (i.lit >> 13) & 1 != 0)
    } else {
        (i.omod as u32, i.clamp)
    };
    if omod == 0 && !clamp {
        return;
    }
    for x in d.iter_mut() {
        let mut f = f32::from_bits(*x);
        f = match omod {
            1 => f * 2.0,
            2 => f * 4.0,
            3 => f * 0.5,
            _ => f,
        };
        if clamp {
            f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        }
        *x = f.to_bits();
    }
}

/// The output modifiers of a 32-bit result by its type, which the operation's name gives
/// whatever its sources are: an f32 ([`fmods32`]; `v_cvt_f32_i32` with clamp is clang's
/// `fminf(fmaxf((float)i, 0), 1)`) or an f16 ([`fmods16`]); returns false for an integer
/// result, which they do not touch.
#[inline(always)]
pub(super) fn result_mods32(w: &Wave, i: &Inst, d: &mut Lanes) -> bool {
    if float_result(i.info.name, "_f32") {
        fmods32(w, i, d);
        true
    } else if float_result(i.info.name, "_f16") {
        fmods16(i, d);
        true
    } else {
        false
    }
}

/// Output modifiers of f16 results (VOP3 omod/clamp); f16 denormals are kept.
pub(super) fn fmods16(i: &Inst, d: &mut Lanes) {
    let (omod, clamp) = if i.ext == Ext::Sdwa {
        ((i.lit >> 14) & 3, (i.lit >> 13) & 1 != 0)
    } else {
        (i.omod as u32, i.clamp)
    };
    if omod == 0 && !clamp {
        return;
    }
    for x in d.iter_mut() {
        let mut f = f16_to_f32(*x as u16);
        f = match omod {
            1 => f * 2.0,
            2 => f * 4.0,
            3 => f * 0.5,
            _ => f,
        };
        if clamp {
            f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        }
        *x = (*x & 0xffff_0000) | f32_to_f16(f) as u32;
    }
}

#[inline(always)]
pub(super) fn fmods64(w: &Wave, i: &Inst, d: &mut L64) {
    if flush64(w) && float_result(i.info.name, "_f64") {
        for x in d.iter_mut() {
            if *x & 0x7ff0_0000_0000_0000 == 0 {
                *x &= 1 << 63;
            }
        }
    }
    if i.omod == 0 && !i.clamp {
        return;
    }
    for x in d.iter_mut() {
        let mut f = f64::from_bits(*x);
        f = match i.omod {
            1 => f * 2.0,
            2 => f * 4.0,
            3 => f * 0.5,
            _ => f,
        };
        if i.clamp {
            f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        }
        *x = f.to_bits();
    }
}

/// Writes a 32-bit result (SDWA destination selection applied).
#[inline(always)]
pub(super) fn out32(w: &mut Wave, i: &Inst, mask: u64, d: &mut Lanes) {
    if i.ext == Ext::Sdwa && i.enc != Enc::Vopc {
        let e = i.lit;
        let sel = (e >> 8) & 7;
        let unused = (e >> 11) & 3;
        if sel < 6 {
            let old = w.v[(i.dst as usize - 256) & 511];
            let (shift, width) = if sel < 4 {
                (8 * sel, 8)
            } else {
                (16 * (sel - 4), 16)
            };
            let fmask = ((1u32 << width) - 1) << shift;
            for l in 0..LANES {
                let v = (d[l] << shift) & fmask;
                d[l] = match unused {
                    2 => (old[l] & !fmask) | v,
                    1 => {
                        let top = shift + width;
                        let sx = if top < 32 && (v >> (top - 1)) & 1 != 0 {
                            !0u32 << top
                        } else {
                            0
                        };
                        v | sx
                    }
                    _ => v,
                };
            }
        }
    }
    if i.opsel & 8 != 0 && i.enc == Enc::Vop3 {
        // VOP3 op_sel[3]: a 16-bit result goes to the high half; the low half is kept.
        let old = w.v[(i.dst as usize).wrapping_sub(256) & 511];
        for l in 0..LANES {
            d[l] = (old[l] & 0xffff) | d[l] << 16;
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    w.vwrite32(i.dst, mask, d);
}

#[inline(always)]
pub(super) fn out64(w: &mut Wave, i: &Inst, mask: u64, d: &L64) {
    w.lane_ops += mask.count_ones() as u64;
    w.vwrite64(i.dst, mask, d);
}

#[inline(always)]
pub(super) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
#[inline(always)]
pub(super) fn b(x: f32) -> u32 {
    x.to_bits()
}
#[inline(always)]
pub(super) fn g(x: u64) -> f64 {
    f64::from_bits(x)
}
#[inline(always)]
pub(super) fn h(x: f64) -> u64 {
    x.to_bits()
}

/// The common case of an element-wise 32-bit operation, straight from the register file:
/// no DPP/SDWA, no op_sel, no output modifiers, f32 abs/neg only, round-to-nearest-even and
/// denormals kept (MODE as HIP sets it). Computes `op` for the active lanes eight at a time
/// (one AVX2 vector per source) and writes the result under EXEC. Returns false, having
/// done nothing, when the instruction needs the general path ([`srcs32`], [`out32`]),
/// which gives the same bits for what this path accepts.
#[inline(always)]
pub(super) fn fast32<const N: usize>(
    w: &mut Wave,
    i: &Inst,
    float: bool,
    op: impl Fn([u32; N]) -> u32,
) -> bool {
    // MODE bits 5:0 = 0x30: round to nearest even for every size, f32 denormals kept. The
    // f64/f16 denormal bits (7:6) change nothing for 32-bit element-wise ops.
    if w.mode & 0x3f != 0x30 {
        return false;
    }
    let base = w.v.as_mut_ptr() as *mut u32;
    let dst = (i.dst as usize).wrapping_sub(256) & 511;
    let mask = w.exec();
    if i.plain && i.src[1..N].iter().all(|&code| code >= 256) {
        // The commonest forms: registers only, or a scalar, constant or literal first source
        // (the only one VOP2 may have) and registers, with nothing to apply: their loops
        // read the registers at offsets fixed at compile time and keep the value in a
        // vector register.
        let src = std::array::from_fn(|n| {
            // SAFETY: the index is below 512, inside the register file (unused for a
            // scalar first source).
            unsafe { base.add(((i.src[n] as usize).wrapping_sub(256) & 511) * LANES) as *const u32 }
        });
        let (step, and, xor) = ([8; N], [u32::MAX; N], [0; N]);
        let full = mask == u64::MAX;
        // SAFETY: `src` are register rows (step 8) except a scalar first source, which
        // VALUE_THEN_ROWS does not read; dst < 512.
        unsafe {
            if i.src[0] >= 256 {
                if full {
                    lanes32::<N, false, true, ROWS>(base, &src, &step, 0, dst, mask, and, xor, &op)
                } else {
                    lanes32::<N, false, false, ROWS>(base, &src, &step, 0, dst, mask, and, xor, &op)
                }
            } else {
                let first = w.sread32(i.src[0], i.lit, i.info.fk);
                if full {
                    lanes32::<N, false, true, VALUE_THEN_ROWS>(
                        base, &src, &step, first, dst, mask, and, xor, &op,
                    )
                } else {
                    lanes32::<N, false, false, VALUE_THEN_ROWS>(
                        base, &src, &step, first, dst, mask, and, xor, &op,
                    )
                }
            }
        }
        w.lane_ops += mask.count_ones() as u64;
        return true;
    }
    if !i.plain && (i.ext != Ext::None || i.opsel & 0xf != 0 || i.omod != 0 || i.clamp) {
        return false;
    }
    let mut and = [u32::MAX; N];
    let mut xor = [0u32; N];
    let f16_sources = i.info.fk == crate::inst::FloatKind::F16;
    if (float || f16_sources) && (i.abs | i.neg) != 0 {
        if f16_sources || i.info.name.ends_with("_f16") {
            return false;
        }
        for n in 0..N {
            if i.abs >> n & 1 != 0 {
                and[n] = !0x8000_0000;
            }
            if i.neg >> n & 1 != 0 {
                xor[n] = 0x8000_0000;
            }
        }
    }
    // Each source is eight lanes at `src[n] + step[n] * chunk`: a register's lanes (step 8)
    // or a scalar value repeated in `splat` (step 0).
    let mut splat = [[0u32; 8]; N];
    let mut src = [std::ptr::null::<u32>(); N];
    let mut step = [0usize; N];
    for n in 0..N {
        let code = i.src[n];
        if code >= 256 {
            // SAFETY: the index is below 512, inside the register file.
            src[n] = unsafe { base.add(((code as usize - 256) & 511) * LANES) };
            step[n] = 8;
        } else {
            splat[n] = [w.sread32(code, i.lit, i.info.fk); 8];
        }
    }
    for n in 0..N {
        if step[n] == 0 {
            src[n] = splat[n].as_ptr();
        }
    }
    let modifiers = and != [u32::MAX; N] || xor != [0; N];
    // SAFETY (all four): `src` and `step` describe registers or splats as lanes32 needs,
    // and dst < 512. The loop is instantiated apart for the common cases (no modifiers,
    // full EXEC), where it then has nothing to test per chunk.
    unsafe {
        match (modifiers, mask == u64::MAX) {
            (false, true) => {
                lanes32::<N, false, true, BY_STEP>(base, &src, &step, 0, dst, mask, and, xor, &op)
            }
            (false, false) => {
                lanes32::<N, false, false, BY_STEP>(base, &src, &step, 0, dst, mask, and, xor, &op)
            }
            (true, true) => {
                lanes32::<N, true, true, BY_STEP>(base, &src, &step, 0, dst, mask, and, xor, &op)
            }
            (true, false) => {
                lanes32::<N, true, false, BY_STEP>(base, &src, &step, 0, dst, mask, and, xor, &op)
            }
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    true
}

/// How [`lanes32`] finds its sources: each at `src[n] + step[n] * chunk` (a register row or
/// an eight-lane splat)...
const BY_STEP: u8 = 0;
/// ... every one a register row (step 8, a constant the loop's addressing folds) ...
const ROWS: u8 = 1;
/// ... or the first one the value `first` for all lanes, the others register rows.
const VALUE_THEN_ROWS: u8 = 2;

/// [`fast32`]'s lane loop: eight lanes at a time, sources found as `FORM` says, masked with
/// `and` and `xor` (abs/neg) when `MODIFIERS`, results stored under `mask`, which is all
/// lanes when `FULL`.
///
/// # Safety
/// Every source `FORM` reads at `src[n] + step[n] * chunk` must be eight readable lanes for
/// every chunk below 8 (a register row, step 8, or an eight-lane splat, step 0); `base` is
/// the register file and `dst` < 512.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn lanes32<const N: usize, const MODIFIERS: bool, const FULL: bool, const FORM: u8>(
    base: *mut u32,
    src: &[*const u32; N],
    step: &[usize; N],
    first: u32,
    dst: usize,
    mask: u64,
    and: [u32; N],
    xor: [u32; N],
    op: &impl Fn([u32; N]) -> u32,
) {
    for chunk in 0..LANES / 8 {
        let m = if FULL {
            0xff
        } else {
            (mask >> (8 * chunk)) as u8
        };
        if !FULL && m == 0 {
            continue;
        }
        let mut x = [[0u32; 8]; N];
        for n in 0..N {
            let stride = if FORM == BY_STEP { step[n] } else { 8 };
            let v = if FORM == VALUE_THEN_ROWS && n == 0 {
                [first; 8]
            } else {
                // SAFETY: src[n] is a register (64 lanes, step 8 per chunk) or a splat (eight
                // lanes, step 0), so the eight lanes read are inside it (the caller).
                unsafe { std::ptr::read_unaligned(src[n].add(stride * chunk) as *const [u32; 8]) }
            };
            x[n] = if MODIFIERS {
                std::array::from_fn(|k| (v[k] & and[n]) ^ xor[n])
            } else {
                v
            };
        }
        let d: [u32; 8] = std::array::from_fn(|k| op(std::array::from_fn(|n| x[n][k])));
        // SAFETY: dst < 512 (the caller); the sources of these lanes were read above, so a
        // destination that is also a source is overwritten only after it was read.
        unsafe {
            let out = base.add(dst * LANES + 8 * chunk);
            if FULL || m == 0xff {
                std::ptr::write_unaligned(out as *mut [u32; 8], d);
            } else {
                for k in 0..8 {
                    if m >> k & 1 != 0 {
                        *out.add(k) = d[k];
                    }
                }
            }
        }
    }
}

/// [`fast32`] for element-wise operations with 64-bit results whose sources are 64 or 32
/// bits wide (per the opcode's widths; 32-bit ones zero-extend): no DPP/SDWA, no input or
/// output modifiers, round-to-nearest-even and f64 denormals kept. The general path is
/// [`srcs64`] with `finish_wide`; the results are the same bits.
#[inline(always)]
pub(super) fn fast64<const N: usize>(
    w: &mut Wave,
    i: &Inst,
    float: bool,
    op: impl Fn([u64; N]) -> u64,
) -> bool {
    // MODE: round to nearest even for every size (3:0), f64 denormals kept (7:6).
    if i.ext != Ext::None
        || i.omod != 0
        || i.clamp
        || (float && (i.abs | i.neg) != 0)
        || w.mode & 0xcf != 0xc0
    {
        return false;
    }
    // As in fast32: each source half is eight lanes at `ptr + step * chunk`, a register
    // (step 8) or a scalar half repeated in `splat` (step 0); a 32-bit source's high half
    // is zeros.
    let base = w.v.as_mut_ptr() as *mut u32;
    let mut splat = [[[0u32; 8]; 2]; N];
    let mut lo = [std::ptr::null::<u32>(); N];
    let mut hi = [std::ptr::null::<u32>(); N];
    let mut step_lo = [0usize; N];
    let mut step_hi = [0usize; N];
    for n in 0..N {
        let code = i.src[n];
        let wide = i.info.w[n + 1] >= 2;
        if code >= 256 {
            let r = (code as usize - 256) & 511;
            // SAFETY: both indices are below 512, inside the register file.
            unsafe {
                lo[n] = base.add(r * LANES);
                step_lo[n] = 8;
                if wide {
                    hi[n] = base.add(((r + 1) & 511) * LANES);
                    step_hi[n] = 8;
                }
            }
            continue;
        }
        let v = scalar_source64(w, i, code, wide);
        splat[n] = [[v as u32; 8], [(v >> 32) as u32; 8]];
    }
    for n in 0..N {
        if step_lo[n] == 0 {
            lo[n] = splat[n][0].as_ptr();
        }
        if step_hi[n] == 0 {
            hi[n] = splat[n][1].as_ptr();
        }
    }
    let dst = (i.dst as usize).wrapping_sub(256) & 511;
    let dst_hi = (dst + 1) & 511;
    let mask = w.exec();
    for chunk in 0..LANES / 8 {
        let m = (mask >> (8 * chunk)) as u8;
        if m == 0 {
            continue;
        }
        let mut x = [[0u64; 8]; N];
        for n in 0..N {
            // SAFETY: each pointer is a register (64 lanes, step 8 per chunk) or a splat
            // (eight lanes, step 0).
            let (l, h) = unsafe {
                (
                    std::ptr::read_unaligned(lo[n].add(step_lo[n] * chunk) as *const [u32; 8]),
                    std::ptr::read_unaligned(hi[n].add(step_hi[n] * chunk) as *const [u32; 8]),
                )
            };
            for k in 0..8 {
                x[n][k] = l[k] as u64 | (h[k] as u64) << 32;
            }
        }
        let d: [u64; 8] = std::array::from_fn(|k| op(std::array::from_fn(|n| x[n][k])));
        let dl: [u32; 8] = std::array::from_fn(|k| d[k] as u32);
        let dh: [u32; 8] = std::array::from_fn(|k| (d[k] >> 32) as u32);
        // SAFETY: dst, dst_hi < 512; these lanes' sources were read above.
        unsafe { store_halves8(base, dst, dst_hi, chunk, m, dl, dh) };
    }
    w.lane_ops += mask.count_ones() as u64;
    true
}

/// The value of scalar source `code` (below 256) of an op with 64-bit sources, as
/// [`srcs64`] reads it: a 64-bit operand of an op named for 32-bit sources takes 64-bit
/// inline constants, an f64 literal is the high half, a 32-bit operand zero-extends.
#[inline(always)]
fn scalar_source64(w: &Wave, i: &Inst, code: u16, wide: bool) -> u64 {
    if !wide {
        return w.sread32(code, i.lit, i.info.fk) as u64;
    }
    let fk = match i.info.fk {
        crate::inst::FloatKind::F32 => crate::inst::FloatKind::I64,
        fk => fk,
    };
    if code == 255 && fk == crate::inst::FloatKind::F64 {
        (i.lit as u64) << 32
    } else {
        w.sread64(code, i.lit, fk)
    }
}

/// `v_lshl_add_u64 d, a, s, c` = `(a << (s & 7)) + c` when the shift `s` is one scalar
/// value for all lanes (how the compiler forms addresses): computed on the 32-bit halves,
/// eight lanes at a time, with the carry of the low half into the high one, rather than
/// zipping halves into 64-bit lanes. Returns false, having done nothing, where the general
/// path ([`fast64`] or [`srcs64`]) is needed; the results are the same bits.
#[inline(always)]
pub(super) fn lshl_add_u64_halves(w: &mut Wave, i: &Inst) -> bool {
    if i.ext != Ext::None || i.omod != 0 || i.clamp || i.src[1] >= 256 {
        return false;
    }
    // What compilers emit is decoded first: the shift an inline integer, the sources VGPR
    // or SGPR pairs (read as scalar_source64 reads them); the general decoding of constants
    // and literals otherwise.
    let shift = match i.src[1] {
        code @ 128..=192 => (code - 128) as u32 & 7,
        code => scalar_source64(w, i, code, false) as u32 & 7,
    };
    let base = w.v.as_mut_ptr() as *mut u32;
    // Each of a and c is a register pair (its rows) or one value for all lanes, which
    // stays in a vector register: a stack array of it, written by narrower stores and read
    // back whole, stalls every chunk's load on store forwarding.
    // Called twice rather than mapped over an array: `array::map` stays a call here.
    let (a, c) = (Pair::of(w, i, i.src[0]), Pair::of(w, i, i.src[2]));
    let dst = (i.dst as usize).wrapping_sub(256) & 511;
    let out = (dst, (dst + 1) & 511);
    let mask = w.exec();
    // SAFETY (all): the rows are below 512, inside the register file `base` points to.
    // Each form is its own loop, so a chunk tests nothing but its EXEC bits (and under a
    // full EXEC, how addresses are mostly formed, not even those); the shift of 0 (a base
    // plus an offset) drops the shifts.
    unsafe {
        if mask == u64::MAX {
            lshl_add_forms::<true>(base, a, c, shift, out, mask)
        } else {
            lshl_add_forms::<false>(base, a, c, shift, out, mask)
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    true
}

/// [`lshl_add8`] for the forms of `a` and `c` and whether there is a shift; `FULL`: every
/// lane is active (`mask` is all ones).
///
/// # Safety
/// As [`lshl_add8`].
#[inline(always)]
unsafe fn lshl_add_forms<const FULL: bool>(
    base: *mut u32,
    a: Pair,
    c: Pair,
    shift: u32,
    out: (usize, usize),
    mask: u64,
) {
    // SAFETY (all): the caller's contract; each form matches its const parameters.
    unsafe {
        match (a, c, shift) {
            (Pair::Rows(..), Pair::Rows(..), 0) => {
                lshl_add8::<true, true, false, FULL>(base, a, c, 0, out, mask)
            }
            (Pair::Rows(..), Pair::Rows(..), s) => {
                lshl_add8::<true, true, true, FULL>(base, a, c, s, out, mask)
            }
            (Pair::Rows(..), Pair::Value(_), 0) => {
                lshl_add8::<true, false, false, FULL>(base, a, c, 0, out, mask)
            }
            (Pair::Rows(..), Pair::Value(_), s) => {
                lshl_add8::<true, false, true, FULL>(base, a, c, s, out, mask)
            }
            (Pair::Value(_), Pair::Rows(..), 0) => {
                lshl_add8::<false, true, false, FULL>(base, a, c, 0, out, mask)
            }
            (Pair::Value(_), Pair::Rows(..), s) => {
                lshl_add8::<false, true, true, FULL>(base, a, c, s, out, mask)
            }
            (Pair::Value(_), Pair::Value(_), s) => {
                lshl_add8::<false, false, true, FULL>(base, a, c, s, out, mask)
            }
        }
    }
}

/// A 64-bit source of [`lshl_add8`]: the rows of a register pair (low, high) or one value.
#[derive(Clone, Copy)]
enum Pair {
    Rows(usize, usize),
    Value(u64),
}

impl Pair {
    /// The 64-bit source `code` of `i`: a VGPR pair's rows, else its value (an SGPR pair
    /// read directly, other scalars as [`scalar_source64`] reads them).
    #[inline(always)]
    fn of(w: &Wave, i: &Inst, code: u16) -> Pair {
        if code >= 256 {
            let r = (code as usize - 256) & 511;
            Pair::Rows(r, (r + 1) & 511)
        } else if code < 128 {
            Pair::Value(w.sreg64(code))
        } else {
            Pair::Value(scalar_source64(w, i, code, true))
        }
    }

    /// Eight lanes' low and high halves from `chunk * 8`: `ROWS` says which form `self` is.
    ///
    /// # Safety
    /// Rows are below 512 in the register file at `base`; `chunk` < 8.
    #[inline(always)]
    unsafe fn halves8<const ROWS: bool>(
        self,
        base: *const u32,
        chunk: usize,
    ) -> ([u32; 8], [u32; 8]) {
        match self {
            // SAFETY: the caller's contract.
            Pair::Rows(lo, hi) if ROWS => unsafe {
                (
                    std::ptr::read_unaligned(base.add(lo * LANES + 8 * chunk) as *const [u32; 8]),
                    std::ptr::read_unaligned(base.add(hi * LANES + 8 * chunk) as *const [u32; 8]),
                )
            },
            Pair::Value(v) => ([v as u32; 8], [(v >> 32) as u32; 8]),
            Pair::Rows(..) => unreachable!("lshl_add8 instantiated for the wrong form"),
        }
    }
}

/// `out = (a << shift) + c` on 32-bit halves, eight lanes at a time, under `mask`: one loop
/// per form of the sources (`A_ROWS`, `C_ROWS`), whether there is a shift, and whether
/// every lane is active (`FULL`: no chunk tests its EXEC bits).
///
/// # Safety
/// The rows of `a`, `c` and `out` are below 512 in the register file at `base`; the forms
/// match the const parameters.
#[inline(always)]
unsafe fn lshl_add8<
    const A_ROWS: bool,
    const C_ROWS: bool,
    const SHIFTED: bool,
    const FULL: bool,
>(
    base: *mut u32,
    a: Pair,
    c: Pair,
    shift: u32,
    (dst, dst_hi): (usize, usize),
    mask: u64,
) {
    for chunk in 0..LANES / 8 {
        let m = if FULL {
            0xff
        } else {
            (mask >> (8 * chunk)) as u8
        };
        if m == 0 {
            continue;
        }
        // SAFETY: the caller's contract.
        let ((alo, ahi), (clo, chi)) = unsafe {
            (
                a.halves8::<A_ROWS>(base, chunk),
                c.halves8::<C_ROWS>(base, chunk),
            )
        };
        let mut dl = [0u32; 8];
        let mut dh = [0u32; 8];
        for k in 0..8 {
            let (sl, sh) = if SHIFTED {
                // The bits shifted out of the low half (none for a shift of 0).
                (
                    alo[k] << shift,
                    ahi[k] << shift | (alo[k] >> 1) >> (31 - shift),
                )
            } else {
                (alo[k], ahi[k])
            };
            dl[k] = sl.wrapping_add(clo[k]);
            dh[k] = sh.wrapping_add(chi[k]).wrapping_add((dl[k] < sl) as u32);
        }
        // SAFETY: dst, dst_hi < 512; these lanes' sources were read above.
        unsafe { store_halves8(base, dst, dst_hi, chunk, m, dl, dh) };
    }
}

/// `v_lshlrev_b64 d, s, b` = `b << (s & 63)` when the shift `s` is one scalar value for
/// all lanes: on the 32-bit halves, eight lanes at a time, as [`lshl_add_u64_halves`].
/// Returns false, having done nothing, where the general path is needed (same bits).
#[inline(always)]
pub(super) fn lshlrev_b64_halves(w: &mut Wave, i: &Inst) -> bool {
    if i.ext != Ext::None || i.omod != 0 || i.clamp || i.src[0] >= 256 {
        return false;
    }
    let shift = scalar_source64(w, i, i.src[0], false) as u32 & 63;
    let base = w.v.as_mut_ptr() as *mut u32;
    // The low and high halves of b: a register pair (step 8 per chunk) or a splat (step 0).
    let code = i.src[1];
    let v = if code >= 256 {
        0
    } else {
        scalar_source64(w, i, code, true)
    };
    let splat = [[v as u32; 8], [(v >> 32) as u32; 8]];
    let (planes, step) = if code >= 256 {
        let r = (code as usize - 256) & 511;
        // SAFETY: both indices are below 512, inside the register file.
        let regs = unsafe {
            [
                base.add(r * LANES) as *const u32,
                base.add(((r + 1) & 511) * LANES),
            ]
        };
        (regs, 8)
    } else {
        ([splat[0].as_ptr(), splat[1].as_ptr()], 0)
    };
    let dst = (i.dst as usize).wrapping_sub(256) & 511;
    let out = (dst, (dst + 1) & 511);
    let mask = w.exec();
    // SAFETY (all): the planes are as above; dst and its pair are below 512.
    unsafe {
        match (mask == u64::MAX, shift < 32) {
            (true, true) => shl64_8::<true, true>(base, planes, step, shift, out, mask),
            (true, false) => shl64_8::<true, false>(base, planes, step, shift, out, mask),
            (false, true) => shl64_8::<false, true>(base, planes, step, shift, out, mask),
            (false, false) => shl64_8::<false, false>(base, planes, step, shift, out, mask),
        }
    }
    w.lane_ops += mask.count_ones() as u64;
    true
}

/// `out = b << shift` on 32-bit halves, eight lanes at a time under `mask`: `planes` are b's
/// low and high halves (`step` 8 per chunk for a register pair, 0 for a splat). One loop
/// per case of whether every lane is active (`FULL`) and whether the shift is below 32
/// (`NEAR`; else the low half moves wholly into the high one).
///
/// # Safety
/// Each plane has `7 * step + 8` readable dwords; `out`'s rows are below 512 in the
/// register file at `base`.
#[inline(always)]
unsafe fn shl64_8<const FULL: bool, const NEAR: bool>(
    base: *mut u32,
    planes: [*const u32; 2],
    step: usize,
    shift: u32,
    (dst, dst_hi): (usize, usize),
    mask: u64,
) {
    for chunk in 0..LANES / 8 {
        let m = if FULL {
            0xff
        } else {
            (mask >> (8 * chunk)) as u8
        };
        if m == 0 {
            continue;
        }
        // SAFETY: the caller's contract.
        let [blo, bhi] = unsafe {
            [
                std::ptr::read_unaligned(planes[0].add(step * chunk) as *const [u32; 8]),
                std::ptr::read_unaligned(planes[1].add(step * chunk) as *const [u32; 8]),
            ]
        };
        let mut dl = [0u32; 8];
        let mut dh = [0u32; 8];
        for k in 0..8 {
            if NEAR {
                dl[k] = blo[k] << shift;
                dh[k] = bhi[k] << shift | (blo[k] >> 1) >> (31 - shift);
            } else {
                dh[k] = blo[k] << (shift - 32);
            }
        }
        // SAFETY: dst, dst_hi < 512; these lanes' sources were read above.
        unsafe { store_halves8(base, dst, dst_hi, chunk, m, dl, dh) };
    }
}

/// Writes eight lanes (`chunk`, active where `m` has a bit) of a 64-bit result to the
/// register pair whose halves are `dst` (low) and `dst_hi` (high).
///
/// # Safety
/// `base` is the register file; `dst`, `dst_hi` < 512 and `chunk` < 8.
#[inline(always)]
unsafe fn store_halves8(
    base: *mut u32,
    dst: usize,
    dst_hi: usize,
    chunk: usize,
    m: u8,
    dl: [u32; 8],
    dh: [u32; 8],
) {
    // SAFETY: both rows lie in the register file (the caller).
    unsafe {
        let (pl, ph) = (
            base.add(dst * LANES + 8 * chunk),
            base.add(dst_hi * LANES + 8 * chunk),
        );
        if m == 0xff {
            std::ptr::write_unaligned(pl as *mut [u32; 8], dl);
            std::ptr::write_unaligned(ph as *mut [u32; 8], dh);
        } else {
            for k in 0..8 {
                if m >> k & 1 != 0 {
                    *pl.add(k) = dl[k];
                    *ph.add(k) = dh[k];
                }
            }
        }
    }
}
