//! Matrix instructions (MAI): `v_mfma_*` on gfx90a (CDNA2) and gfx942 (CDNA3).
//!
//! An MFMA computes `D = A * B + C` for `blocks` independent M x N x K products spread
//! over the 64 lanes. The placement of matrix elements in lanes and registers follows the
//! CDNA2/CDNA3 ISA manuals (and AMD's matrix instruction calculator):
//!
//! - A (M x K per block): lane `l` holds row `l % M`; `h = l / M` splits into
//!   `block = h / (K / kpl)` and the K-group `h % (K / kpl)`; element `e` of the lane's
//!   `kpl` packed inputs is `k = group * kpl + e`.
//! - B (K x N per block): the same with column `l % N`.
//! - C and D (M x N per block): register `r` of lane `l` holds column `l % N`; with
//!   `q = l / N + (64 / N) * (r / 4)`, the block is `q / (M / 4)` and the row is
//!   `4 * (q % (M / 4)) + r % 4`.
//!
//! A and B come from VGPRs or AGPRs (the `acc` bits), C and D from AGPRs when `acc_cd` is
//! set, else VGPRs (gfx90a/gfx942 allow both). MFMA ignores EXEC: all 64 lanes take part.
//! Float products are exact in f64; each output is summed in f64 and rounded once to f32
//! (the hardware's internal summation order is not modelled; results agree whenever the
//! exact sum is representable). Integer MFMAs wrap in 32 bits.
//! The broadcast controls `cbsz`/`abid`/`blgp` are not modelled: a nonzero value stops the
//! dispatch with the instruction's name rather than computing something else.

use super::half::f16_to_f32;
use super::{unimplemented, Ctx, Outcome, Step};
use crate::inst::{FloatKind, Inst};
use crate::wave::{Wave, LANES};

/// Element type of A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaiType {
    F32,
    F16,
    /// bf16, four per lane (`_1k` forms and all gfx942 bf16 shapes).
    Bf16x4,
    /// bf16, two per lane (gfx90a's original bf16 shapes).
    Bf16x2,
    /// i8, four per lane (32-bit A/B).
    I8x4,
    /// i8, eight per lane (gfx942's 64-bit A/B shapes).
    I8x8,
    F64,
}

impl MaiType {
    /// Inputs per lane (`kpl`) and the A/B operand width in dwords.
    pub const fn per_lane(self) -> (usize, u8) {
        match self {
            MaiType::F32 => (1, 1),
            MaiType::F16 | MaiType::Bf16x4 => (4, 2),
            MaiType::Bf16x2 => (2, 1),
            MaiType::I8x4 => (4, 1),
            MaiType::I8x8 => (8, 2),
            MaiType::F64 => (1, 2),
        }
    }
}

/// Shape of one MAI opcode.
#[derive(Clone, Copy, Debug)]
pub struct MaiShape {
    pub ty: MaiType,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub blocks: usize,
}

impl MaiShape {
    /// Dwords of D (and C) per lane.
    pub const fn d_regs(&self) -> u8 {
        let elems = self.m * self.n * self.blocks / LANES;
        (if matches!(self.ty, MaiType::F64) {
            2 * elems
        } else {
            elems
        }) as u8
    }
}

/// The MAI opcodes of each model: (opcode, gfx942 name, gfx90a name, shape). A name of ""
/// means the opcode does not exist on that model.
pub const MAI_OPS: &[(u16, &str, &str, MaiShape)] = {
    use MaiType::*;
    const fn s(ty: MaiType, m: usize, n: usize, k: usize, blocks: usize) -> MaiShape {
        MaiShape {
            ty,
            m,
            n,
            k,
            blocks,
        }
    }
    &[
        (
            0x40,
            "v_mfma_f32_32x32x1_2b_f32",
            "v_mfma_f32_32x32x1f32",
            s(F32, 32, 32, 1, 2),
        ),
        (
            0x41,
            "v_mfma_f32_16x16x1_4b_f32",
            "v_mfma_f32_16x16x1f32",
            s(F32, 16, 16, 1, 4),
        ),
        (
            0x42,
            "v_mfma_f32_4x4x1_16b_f32",
            "v_mfma_f32_4x4x1f32",
            s(F32, 4, 4, 1, 16),
        ),
        (
            0x44,
            "v_mfma_f32_32x32x2_f32",
            "v_mfma_f32_32x32x2f32",
            s(F32, 32, 32, 2, 1),
        ),
        (
            0x45,
            "v_mfma_f32_16x16x4_f32",
            "v_mfma_f32_16x16x4f32",
            s(F32, 16, 16, 4, 1),
        ),
        (
            0x48,
            "v_mfma_f32_32x32x4_2b_f16",
            "v_mfma_f32_32x32x4f16",
            s(F16, 32, 32, 4, 2),
        ),
        (
            0x49,
            "v_mfma_f32_16x16x4_4b_f16",
            "v_mfma_f32_16x16x4f16",
            s(F16, 16, 16, 4, 4),
        ),
        (
            0x4a,
            "v_mfma_f32_4x4x4_16b_f16",
            "v_mfma_f32_4x4x4f16",
            s(F16, 4, 4, 4, 16),
        ),
        (
            0x4c,
            "v_mfma_f32_32x32x8_f16",
            "v_mfma_f32_32x32x8f16",
            s(F16, 32, 32, 8, 1),
        ),
        (
            0x4d,
            "v_mfma_f32_16x16x16_f16",
            "v_mfma_f32_16x16x16f16",
            s(F16, 16, 16, 16, 1),
        ),
        (
            0x50,
            "v_mfma_i32_32x32x4_2b_i8",
            "v_mfma_i32_32x32x4i8",
            s(I8x4, 32, 32, 4, 2),
        ),
        (
            0x51,
            "v_mfma_i32_16x16x4_4b_i8",
            "v_mfma_i32_16x16x4i8",
            s(I8x4, 16, 16, 4, 4),
        ),
        (
            0x52,
            "v_mfma_i32_4x4x4_16b_i8",
            "v_mfma_i32_4x4x4i8",
            s(I8x4, 4, 4, 4, 16),
        ),
        (0x54, "", "v_mfma_i32_32x32x8i8", s(I8x4, 32, 32, 8, 1)),
        (0x55, "", "v_mfma_i32_16x16x16i8", s(I8x4, 16, 16, 16, 1)),
        (0x56, "v_mfma_i32_32x32x16_i8", "", s(I8x8, 32, 32, 16, 1)),
        (0x57, "v_mfma_i32_16x16x32_i8", "", s(I8x8, 16, 16, 32, 1)),
        (
            0x5d,
            "v_mfma_f32_32x32x4_2b_bf16",
            "",
            s(Bf16x4, 32, 32, 4, 2),
        ),
        (
            0x5e,
            "v_mfma_f32_16x16x4_4b_bf16",
            "",
            s(Bf16x4, 16, 16, 4, 4),
        ),
        (
            0x5f,
            "v_mfma_f32_4x4x4_16b_bf16",
            "",
            s(Bf16x4, 4, 4, 4, 16),
        ),
        (0x60, "v_mfma_f32_32x32x8_bf16", "", s(Bf16x4, 32, 32, 8, 1)),
        (
            0x61,
            "v_mfma_f32_16x16x16_bf16",
            "",
            s(Bf16x4, 16, 16, 16, 1),
        ),
        (
            0x63,
            "",
            "v_mfma_f32_32x32x4bf16_1k",
            s(Bf16x4, 32, 32, 4, 2),
        ),
        (
            0x64,
            "",
            "v_mfma_f32_16x16x4bf16_1k",
            s(Bf16x4, 16, 16, 4, 4),
        ),
        (0x65, "", "v_mfma_f32_4x4x4bf16_1k", s(Bf16x4, 4, 4, 4, 16)),
        (
            0x66,
            "",
            "v_mfma_f32_32x32x8bf16_1k",
            s(Bf16x4, 32, 32, 8, 1),
        ),
        (
            0x67,
            "",
            "v_mfma_f32_16x16x16bf16_1k",
            s(Bf16x4, 16, 16, 16, 1),
        ),
        (0x68, "", "v_mfma_f32_32x32x2bf16", s(Bf16x2, 32, 32, 2, 2)),
        (0x69, "", "v_mfma_f32_16x16x2bf16", s(Bf16x2, 16, 16, 2, 4)),
        (0x6b, "", "v_mfma_f32_4x4x2bf16", s(Bf16x2, 4, 4, 2, 16)),
        (0x6c, "", "v_mfma_f32_32x32x4bf16", s(Bf16x2, 32, 32, 4, 1)),
        (0x6d, "", "v_mfma_f32_16x16x8bf16", s(Bf16x2, 16, 16, 8, 1)),
        (
            0x6e,
            "v_mfma_f64_16x16x4_f64",
            "v_mfma_f64_16x16x4f64",
            s(F64, 16, 16, 4, 1),
        ),
        (
            0x6f,
            "v_mfma_f64_4x4x4_4b_f64",
            "v_mfma_f64_4x4x4f64",
            s(F64, 4, 4, 4, 4),
        ),
    ]
};

/// The shape of MAI opcode `op` on `gfx942` (true) or gfx90a, with its name.
pub fn lookup(op: u16, gfx942: bool) -> Option<(&'static str, MaiShape)> {
    MAI_OPS.iter().find_map(|&(o, n942, n90a, shape)| {
        let name = if gfx942 { n942 } else { n90a };
        (o == op && !name.is_empty()).then_some((name, shape))
    })
}

/// Most A (or B) elements one MFMA gathers: `blocks * m * k` is 64 lanes times the inputs
/// per lane, at most 8 (i8x8).
const MAX_AB: usize = LANES * 8;

/// Reads `regs` dwords of operand `code` for all lanes (a register range, or one scalar
/// constant replicated, as the C operand may be an inline constant).
fn read_block(w: &Wave, code: u16, regs: usize, fk: FloatKind) -> Vec<[u32; LANES]> {
    (0..regs)
        .map(|k| {
            if code >= 256 {
                w.v[(code as usize - 256 + k) & 511]
            } else {
                [w.sread32(code, 0, fk); LANES]
            }
        })
        .collect()
}

/// A or B (one or two dwords per lane) for all lanes, as [`read_block`] without allocating.
#[inline(always)]
fn read_ab(w: &Wave, code: u16, regs: usize) -> [[u32; LANES]; 2] {
    let mut out = [[0u32; LANES]; 2];
    for (k, slot) in out.iter_mut().enumerate().take(regs) {
        *slot = if code >= 256 {
            w.v[(code as usize - 256 + k) & 511]
        } else {
            [w.sread32(code, 0, FloatKind::F32); LANES]
        };
    }
    out
}

/// One A or B input element as f64 (or integer as f64, exact for i8).
#[inline(always)]
fn element(ty: MaiType, regs: &[[u32; LANES]; 2], lane: usize, e: usize) -> f64 {
    let word = |k: usize| regs[k & 1][lane];
    match ty {
        MaiType::F32 => f32::from_bits(word(0)) as f64,
        MaiType::F16 => f16_to_f32((word(e / 2) >> (16 * (e % 2))) as u16) as f64,
        MaiType::Bf16x4 | MaiType::Bf16x2 => {
            f32::from_bits(((word(e / 2) >> (16 * (e % 2))) & 0xffff) << 16) as f64
        }
        MaiType::I8x4 | MaiType::I8x8 => (word(e / 4) >> (8 * (e % 4))) as u8 as i8 as f64,
        MaiType::F64 => f64::from_bits(word(0) as u64 | (word(1) as u64) << 32),
    }
}

/// Places every lane's A and B inputs: A as `am[block][row][k]`, B transposed as
/// `bm[block][k][col]`, so that the columns of one k are contiguous for [`products`].
/// Written for one element type at a time (`ty` is a constant after inlining).
#[inline(always)]
fn gather(
    ty: MaiType,
    sh: &MaiShape,
    a: &[[u32; LANES]; 2],
    b: &[[u32; LANES]; 2],
    am: &mut [f64],
    bm: &mut [f64],
) {
    let (kpl, _) = ty.per_lane();
    let groups = (sh.k / kpl).max(1);
    // Every dimension is a power of two: shifts and masks instead of divisions.
    let log = |x: usize| x.trailing_zeros();
    let (m_log, n_log, groups_log) = (log(sh.m), log(sh.n), log(groups));
    // One operand: lane `l` holds elements `group * kpl ..` of row (A) or column (B) `l` mod
    // `dim` of block `l / (dim * groups)`; `slot` says where (block, row or column, k) goes.
    #[inline(always)]
    fn place(
        ty: MaiType,
        sh: &MaiShape,
        (kpl, groups, groups_log): (usize, usize, u32),
        src: &[[u32; LANES]; 2],
        dst: &mut [f64],
        (dim, dim_log): (usize, u32),
        slot: impl Fn(usize, usize, usize) -> usize,
    ) {
        for l in 0..LANES {
            let (h, index) = (l >> dim_log, l & (dim - 1));
            let (block, group) = (h >> groups_log, h & (groups - 1));
            if block < sh.blocks {
                for e in 0..kpl {
                    let k = group * kpl + e;
                    if k < sh.k {
                        dst[slot(block, index, k)] = element(ty, src, l, e);
                    }
                }
            }
        }
    }
    let split = (kpl, groups, groups_log);
    place(ty, sh, split, a, am, (sh.m, m_log), |block, row, k| {
        (block * sh.m + row) * sh.k + k
    });
    place(ty, sh, split, b, bm, (sh.n, n_log), |block, col, k| {
        (block * sh.k + k) * sh.n + col
    });
}

/// The first `len` elements of `store`, set to 0.0.
#[inline(always)]
fn zeroed_prefix(store: &mut [std::mem::MaybeUninit<f64>; MAX_AB], len: usize) -> &mut [f64] {
    let head = &mut store[..len];
    for x in head.iter_mut() {
        x.write(0.0);
    }
    // SAFETY: all `len` elements were initialised just above, and MaybeUninit<f64> has the
    // layout of f64.
    unsafe { std::slice::from_raw_parts_mut(head.as_mut_ptr() as *mut f64, len) }
}

/// Where A's elements are in `am`: element (block, row, k) at `block * per_block + row *
/// per_row + k * per_k`.
#[derive(Clone, Copy)]
struct ALayout {
    per_block: usize,
    per_row: usize,
    per_k: usize,
}

impl ALayout {
    /// `am[block][row][k]`, as [`gather`] places it.
    fn rows(sh: &MaiShape) -> ALayout {
        ALayout {
            per_block: sh.m * sh.k,
            per_row: sh.k,
            per_k: 1,
        }
    }
}

/// [`gather`] for f32 inputs (one per lane, K = the number of K-groups), converting lanes in
/// order, which vectorises: lane `l` of B is element `l` of `bm` (its index `((block * groups
/// + group) * n + col` is `l` itself), and lane `l` of A is element `l` of `am`, which is
/// then `am[block][k][row]` (the returned layout) rather than transposed as `gather` does.
/// `None` (and nothing placed) for a shape whose lanes do not cover the operands so.
#[inline(always)]
fn gather_f32(
    sh: &MaiShape,
    a: &[u32; LANES],
    b: &[u32; LANES],
    am: &mut [f64],
    bm: &mut [f64],
) -> Option<ALayout> {
    let groups = sh.k;
    if groups == 0 || sh.blocks * groups * sh.m > LANES || sh.blocks * groups * sh.n > LANES {
        return None;
    }
    for (x, &v) in bm.iter_mut().zip(b.iter()) {
        *x = f32::from_bits(v) as f64;
    }
    for (x, &v) in am.iter_mut().zip(a.iter()) {
        *x = f32::from_bits(v) as f64;
    }
    Some(ALayout {
        per_block: groups * sh.m,
        per_row: 1,
        per_k: sh.m,
    })
}

/// The `N` sums of one output row of one block: for each column, the products of the row
/// of A and that column of B added in k order from -0.0 (as `Iterator::sum` does), each
/// product and sum in f64. The columns run side by side, so the loop over them vectorises.
///
/// `FUSED` adds each product with a fused multiply-add, one instruction instead of two where
/// the host has FMA. The sums are the same to the bit: a product of two f32, f16 or bf16
/// values is exact in f64 (at most 48 significant bits, far from f64's range limits), so
/// rounding `acc + x * b` once, as the fused form does, is what rounding the sum of the exact
/// product does.
#[inline(always)]
fn products<const N: usize, const FUSED: bool>(
    arow: &[f64],
    k_stride: usize,
    bm: &[f64],
) -> [f64; N] {
    let mut acc = [-0.0f64; N];
    for k in 0..bm.len() / N {
        let x = arow[k * k_stride];
        let brow: &[f64; N] = bm[k * N..][..N].try_into().expect("N columns");
        for col in 0..N {
            acc[col] = if FUSED {
                x.mul_add(brow[col], acc[col])
            } else {
                acc[col] + x * brow[col]
            };
        }
    }
    acc
}

/// D = C + sums for float MFMAs: each output is the f32 C element plus its f64 sum, rounded
/// once to f32.
#[inline(always)]
fn finish<const N: usize>(acc: &[f64; N], c: &[u32], d: &mut [u32]) {
    let (c, d): (&[u32; N], &mut [u32; N]) = (
        c.try_into().expect("N lanes of C"),
        d.try_into().expect("N lanes of D"),
    );
    for col in 0..N {
        d[col] = ((f32::from_bits(c[col]) as f64 + acc[col]) as f32).to_bits();
    }
}

/// One D register of a float MFMA whose N is 4, 16 or 32: [`products`] for every group of
/// N lanes into one 64-lane array, then C added and rounded for all 64 lanes in one loop
/// (which vectorises; per group of 16 it did not). The same sums, in the same order, as the
/// group-by-group path; lanes outside every block keep their D value.
#[inline(always)]
fn float_register<const FUSED: bool>(
    sh: &MaiShape,
    r: usize,
    at: ALayout,
    am: &[f64],
    bm: &[f64],
    creg: &[u32; LANES],
    dreg: &mut [u32; LANES],
) {
    /// `K` is the shape's k when the caller fixed it (the loops over k then unroll), or 0.
    #[inline(always)]
    fn groups<const N: usize, const K: usize, const FUSED: bool>(
        sh: &MaiShape,
        r: usize,
        at: ALayout,
        am: &[f64],
        bm: &[f64],
        acc: &mut [f64; LANES],
    ) -> u64 {
        let k = if K == 0 { sh.k } else { K };
        let quads_log = (sh.m / 4).trailing_zeros();
        let n_log = N.trailing_zeros();
        let mut done = 0u64;
        for (g, out) in acc.chunks_exact_mut(N).enumerate() {
            let q = g + ((LANES >> n_log) * (r / 4));
            let (block, row) = (q >> quads_log, 4 * (q & ((sh.m / 4) - 1)) + r % 4);
            if block >= sh.blocks {
                continue;
            }
            let arow = &am[block * at.per_block + row * at.per_row..];
            let bblock = &bm[block * k * N..][..k * N];
            out.copy_from_slice(&products::<N, FUSED>(arow, at.per_k, bblock));
            done |= ((1u64 << N) - 1) << (g * N);
        }
        done
    }
    let mut acc = [-0.0f64; LANES];
    // The f32 shapes (k = 1, 2 or 4 for these N) get their k fixed.
    let done = match (sh.n, sh.k) {
        (4, 1) => groups::<4, 1, FUSED>(sh, r, at, am, bm, &mut acc),
        (4, _) => groups::<4, 0, FUSED>(sh, r, at, am, bm, &mut acc),
        (16, 1) => groups::<16, 1, FUSED>(sh, r, at, am, bm, &mut acc),
        (16, 4) => groups::<16, 4, FUSED>(sh, r, at, am, bm, &mut acc),
        (16, _) => groups::<16, 0, FUSED>(sh, r, at, am, bm, &mut acc),
        (_, 1) => groups::<32, 1, FUSED>(sh, r, at, am, bm, &mut acc),
        (_, 2) => groups::<32, 2, FUSED>(sh, r, at, am, bm, &mut acc),
        _ => groups::<32, 0, FUSED>(sh, r, at, am, bm, &mut acc),
    };
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = ((f32::from_bits(creg[l]) as f64 + acc[l]) as f32).to_bits();
    }
    if done == u64::MAX {
        *dreg = out;
    } else {
        for l in 0..LANES {
            if done >> l & 1 != 0 {
                dreg[l] = out[l];
            }
        }
    }
}

/// One D register of an f32 MFMA whose A and B lanes hold one element each, placed as
/// [`gather_f32`] does (`am[block][k][row]`, `bm[block][k][col]`, 64 of each), for a shape
/// fixed at compile time: the sums of [`float_register`], in the same order and with the
/// same rounding, but with every index a constant the compiler folds (no bounds checks,
/// the loops over k and the columns unrolled).
#[inline(always)]
fn f32_register<
    const M: usize,
    const N: usize,
    const K: usize,
    const BLOCKS: usize,
    const FUSED: bool,
>(
    r: usize,
    groups: usize,
    am: &[f64; LANES],
    bm: &[f64; LANES],
    creg: &[u32; LANES],
    dreg: &mut [u32; LANES],
) {
    const { assert!(BLOCKS * K * M == LANES && BLOCKS * K * N == LANES && M.is_multiple_of(4)) };
    debug_assert_eq!(groups, LANES / N);
    let mut out = *dreg;
    // `groups` (64 / N) comes from the shape at run time: with it a constant the compiler
    // unrolls the groups and vectorises across them (rows), gathering A lane by lane,
    // rather than across the columns.
    for g in 0..groups {
        let q = g + (LANES / N) * (r / 4);
        let (block, row) = (q / (M / 4), 4 * (q % (M / 4)) + r % 4);
        if block >= BLOCKS {
            continue;
        }
        let mut acc = [-0.0f64; N];
        for k in 0..K {
            let x = am[(block * K + k) * M + row];
            let brow: &[f64; N] = bm[(block * K + k) * N..][..N].try_into().unwrap();
            for col in 0..N {
                acc[col] = if FUSED {
                    x.mul_add(brow[col], acc[col])
                } else {
                    acc[col] + x * brow[col]
                };
            }
        }
        let (cs, ds): (&[u32; N], &mut [u32; N]) = (
            creg[g * N..][..N].try_into().unwrap(),
            (&mut out[g * N..][..N]).try_into().unwrap(),
        );
        for col in 0..N {
            ds[col] = ((f32::from_bits(cs[col]) as f64 + acc[col]) as f32).to_bits();
        }
    }
    *dreg = out;
}

/// A whole f32 MFMA of a shape fixed at compile time, A and B in registers: converts the
/// 64 lanes of A and B in order (the layout [`gather_f32`] gives) and runs
/// [`f32_register`] for each D register. False, with nothing written, when C is a register
/// range that overlaps D at another offset (the general path reads C from a copy then).
#[inline(always)]
fn f32_whole<
    const M: usize,
    const N: usize,
    const K: usize,
    const BLOCKS: usize,
    const FUSED: bool,
>(
    w: &mut Wave,
    i: &Inst,
    d_regs: usize,
    groups: usize,
) -> bool {
    debug_assert_eq!(d_regs, M * N * BLOCKS / LANES);
    let c_const = (i.src[2] < 256).then(|| w.sread32(i.src[2], 0, FloatKind::F32));
    let c_base = (i.src[2] as usize).wrapping_sub(256);
    let d_base = (i.dst as usize).wrapping_sub(256);
    if c_const.is_none() && c_base != d_base {
        let apart = |x: usize, y: usize| (y.wrapping_sub(x) & 511) >= d_regs;
        if !(apart(c_base, d_base) && apart(d_base, c_base)) {
            return false;
        }
    }
    let (a, b) = (
        &w.v[(i.src[0] as usize).wrapping_sub(256) & 511],
        &w.v[(i.src[1] as usize).wrapping_sub(256) & 511],
    );
    let am: [f64; LANES] = std::array::from_fn(|l| f32::from_bits(a[l]) as f64);
    let bm: [f64; LANES] = std::array::from_fn(|l| f32::from_bits(b[l]) as f64);
    for r in 0..d_regs {
        let creg = match c_const {
            Some(k) => [k; LANES],
            None => w.v[(c_base + r) & 511],
        };
        let dreg = &mut w.v[(d_base + r) & 511];
        f32_register::<M, N, K, BLOCKS, FUSED>(r, groups, &am, &bm, &creg, dreg);
    }
    true
}

/// [`f32_whole`] for the five f32 shapes with A and B in registers; false (nothing
/// written) for anything else.
#[inline(always)]
fn f32_shapes<const FUSED: bool>(w: &mut Wave, i: &Inst, sh: &MaiShape) -> bool {
    if sh.ty != MaiType::F32 || i.src[0] < 256 || i.src[1] < 256 {
        return false;
    }
    // Both from the shape at run time, not the constants they equal (see f32_register).
    let (d, g) = (sh.d_regs() as usize, LANES >> sh.n.trailing_zeros());
    match (sh.m, sh.n, sh.k, sh.blocks) {
        (32, 32, 1, 2) => f32_whole::<32, 32, 1, 2, FUSED>(w, i, d, g),
        (16, 16, 1, 4) => f32_whole::<16, 16, 1, 4, FUSED>(w, i, d, g),
        (4, 4, 1, 16) => f32_whole::<4, 4, 1, 16, FUSED>(w, i, d, g),
        (32, 32, 2, 1) => f32_whole::<32, 32, 2, 1, FUSED>(w, i, d, g),
        (16, 16, 4, 1) => f32_whole::<16, 16, 4, 1, FUSED>(w, i, d, g),
        _ => false,
    }
}

/// Integer MFMA sums of one output row (i8 inputs, 32-bit wrapping).
#[inline(always)]
fn int_products(arow: &[f64], bm: &[f64], n: usize) -> [i32; 32] {
    let mut acc = [0i32; 32];
    for (k, &x) in arow.iter().enumerate() {
        let brow = &bm[k * n..][..n];
        for col in 0..n {
            acc[col] = acc[col].wrapping_add((x as i32) * (brow[col] as i32));
        }
    }
    acc
}

/// `v_mfma_*`: compiled twice, like the element-wise operations of `simd_handler!`, and the
/// AVX2+FMA copy also sums with fused multiply-adds ([`products`]).
pub fn v_mfma(w: &mut Wave, i: &Inst, c: &mut Ctx) -> Outcome {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma,popcnt")]
        fn fast(w: &mut Wave, i: &Inst, c: &mut Ctx) -> Outcome {
            mfma::<true>(w, i, c)
        }
        if crate::exec::simd::avx2_fma_found() {
            // SAFETY: the CPU has AVX2 and FMA (found just above).
            return unsafe { fast(w, i, c) };
        }
    }
    mfma::<false>(w, i, c)
}

#[inline(always)]
fn mfma<const FUSED: bool>(w: &mut Wave, i: &Inst, c: &mut Ctx) -> Outcome {
    let Some((_, sh)) = lookup(i.op, i.model == crate::api::GfxModel::Gfx942) else {
        return Err(Box::new(unimplemented(i, c.pc)));
    };
    if sh.ty == MaiType::F64 || i.imm != 0 {
        // f64 MFMA has its own output layout, and broadcasts select other lanes' inputs:
        // neither is modelled, so say so instead of computing something else.
        return Err(Box::new(unimplemented(i, c.pc)));
    }
    let d_regs = sh.d_regs() as usize;
    if f32_shapes::<FUSED>(w, i, &sh) {
        w.lane_ops += (LANES * d_regs) as u64;
        return Ok(Step::Continue);
    }
    let (_, ab_regs) = sh.ty.per_lane();
    let ab = ab_regs as usize;
    let (a, b) = (read_ab(w, i.src[0], ab), read_ab(w, i.src[1], ab));
    let c_const = (i.src[2] < 256).then(|| w.sread32(i.src[2], 0, FloatKind::F32));
    let c_base = (i.src[2] as usize).wrapping_sub(256);
    let d_base = (i.dst as usize).wrapping_sub(256);
    // D is written as it is computed, reading C lane by lane: fine when D is C or apart
    // from it; a D that overlaps C at another offset reads C from a copy.
    let c_copy = (c_const.is_none()
        && c_base != d_base
        && (0..d_regs).any(|r| (0..d_regs).any(|s| (c_base + r) & 511 == (d_base + s) & 511)))
    .then(|| read_block(w, i.src[2], d_regs, FloatKind::F32));
    let integer = matches!(sh.ty, MaiType::I8x4 | MaiType::I8x8);
    let len_a = sh.blocks * sh.m * sh.k;
    let len_b = sh.blocks * sh.n * sh.k;
    if len_a > MAX_AB || len_b > MAX_AB {
        return Err(Box::new(unimplemented(i, c.pc)));
    }
    // Only the `len` elements used are zeroed (then all overwritten by the gather, as
    // the lanes cover every element; zeroing keeps that an assumption rather than a
    // condition of soundness).
    let mut am_store = [std::mem::MaybeUninit::<f64>::uninit(); MAX_AB];
    let mut bm_store = [std::mem::MaybeUninit::<f64>::uninit(); MAX_AB];
    let am = zeroed_prefix(&mut am_store, len_a);
    let bm = zeroed_prefix(&mut bm_store, len_b);
    // One copy of the gathering loop per element type, its conversions fixed.
    let mut at = ALayout::rows(&sh);
    match sh.ty {
        MaiType::F32 => match gather_f32(&sh, &a[0], &b[0], am, bm) {
            Some(lanes) => at = lanes,
            None => gather(MaiType::F32, &sh, &a, &b, am, bm),
        },
        MaiType::F16 => gather(MaiType::F16, &sh, &a, &b, am, bm),
        MaiType::Bf16x4 => gather(MaiType::Bf16x4, &sh, &a, &b, am, bm),
        MaiType::Bf16x2 => gather(MaiType::Bf16x2, &sh, &a, &b, am, bm),
        MaiType::I8x4 => gather(MaiType::I8x4, &sh, &a, &b, am, bm),
        MaiType::I8x8 => gather(MaiType::I8x8, &sh, &a, &b, am, bm),
        MaiType::F64 => gather(MaiType::F64, &sh, &a, &b, am, bm),
    }
    // Each result depends on its own C element and the gathered A and B only, so D may
    // overwrite C (the usual case): register r of C is read whole before register r of
    // D is written. The n lanes of one q share block and row and hold the n columns.
    let n = sh.n;
    let quads_log = (sh.m / 4).trailing_zeros();
    let n_log = n.trailing_zeros();
    for r in 0..d_regs {
        let creg: [u32; LANES] = match (&c_copy, c_const) {
            (Some(copy), _) => copy[r],
            (None, Some(k)) => [k; LANES],
            (None, None) => w.v[(c_base + r) & 511],
        };
        let dreg = &mut w.v[(d_base + r) & 511];
        if !integer && matches!(n, 4 | 16 | 32) {
            float_register::<FUSED>(&sh, r, at, am, bm, &creg, dreg);
            continue;
        }
        for l0 in (0..LANES).step_by(n) {
            let q = (l0 >> n_log) + ((LANES >> n_log) * (r / 4));
            let (block, row) = (q >> quads_log, 4 * (q & ((sh.m / 4) - 1)) + r % 4);
            if block >= sh.blocks {
                continue;
            }
            let arow = &am[block * at.per_block + row * at.per_row..];
            let bblock = &bm[block * sh.k * n..][..sh.k * n];
            let (cs, ds) = (&creg[l0..l0 + n], &mut dreg[l0..l0 + n]);
            if integer {
                let acc = int_products(&arow[..sh.k], bblock, n);
                for col in 0..n {
                    ds[col] = (cs[col] as i32).wrapping_add(acc[col]) as u32;
                }
            } else {
                match n {
                    4 => finish(&products::<4, FUSED>(arow, at.per_k, bblock), cs, ds),
                    16 => finish(&products::<16, FUSED>(arow, at.per_k, bblock), cs, ds),
                    32 => finish(&products::<32, FUSED>(arow, at.per_k, bblock), cs, ds),
                    _ => return Err(Box::new(unimplemented(i, c.pc))),
                }
            }
        }
    }
    w.lane_ops += (LANES * d_regs) as u64;
    Ok(Step::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{GfxModel, GuestMemory};
    use crate::exec::{Ctx, DispatchInfo};
    use crate::inst::{Enc, Form, OpInfo};

    struct NoMemory;
    impl GuestMemory for NoMemory {
        fn translate(&self, _address: u64, _len: u64) -> Option<u64> {
            None
        }
    }

    /// D for all lanes straight from the layout in the module comment, one output at a
    /// time: A(block, row, k) is element `k % kpl` of lane `(block * groups + k / kpl) * m +
    /// row`, B likewise with the column; each sum runs in k order from -0.0 in f64, then C
    /// is added and the result rounded once to f32 (integers wrap in 32 bits).
    fn reference(
        sh: &MaiShape,
        a: &[[u32; LANES]; 2],
        b: &[[u32; LANES]; 2],
        c: &[[u32; LANES]],
    ) -> Vec<[u32; LANES]> {
        let (kpl, _) = sh.ty.per_lane();
        let groups = (sh.k / kpl).max(1);
        let integer = matches!(sh.ty, MaiType::I8x4 | MaiType::I8x8);
        let mut d = c.to_vec();
        for (r, dreg) in d.iter_mut().enumerate() {
            for (l, out) in dreg.iter_mut().enumerate() {
                let col = l % sh.n;
                let q = l / sh.n + (LANES / sh.n) * (r / 4);
                let (block, row) = (q / (sh.m / 4), 4 * (q % (sh.m / 4)) + r % 4);
                assert!(block < sh.blocks, "every output has a block");
                let pair = |k: usize| {
                    let la = (block * groups + k / kpl) * sh.m + row;
                    let lb = (block * groups + k / kpl) * sh.n + col;
                    (
                        element(sh.ty, a, la, k % kpl),
                        element(sh.ty, b, lb, k % kpl),
                    )
                };
                *out = if integer {
                    let sum = (0..sh.k).fold(0i32, |s, k| {
                        let (x, y) = pair(k);
                        s.wrapping_add((x as i32) * (y as i32))
                    });
                    (c[r][l] as i32).wrapping_add(sum) as u32
                } else {
                    let mut sum = -0.0f64;
                    for k in 0..sh.k {
                        let (x, y) = pair(k);
                        sum += x * y;
                    }
                    ((f32::from_bits(c[r][l]) as f64 + sum) as f32).to_bits()
                };
            }
        }
        d
    }

    /// A deterministic pseudo-random word sequence.
    fn words(seed: u64, n: usize) -> Vec<u32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 16) as u32
            })
            .collect()
    }

    /// Every dense shape of both models, with D on C, apart from it and overlapping it at
    /// another offset, against [`reference`], bit for bit.
    #[test]
    fn every_shape_matches_the_layout_reference() {
        let info = DispatchInfo {
            model: GfxModel::Gfx942,
            compute_units: 1,
            private_segment_size: 0,
            cooperative: false,
            timing: None,
        };
        let mut lds = [0u8; 0];
        let mut checked = 0;
        for (n, &(op, n942, n90a, sh)) in MAI_OPS.iter().enumerate() {
            if sh.ty == MaiType::F64 {
                continue;
            }
            for (model, name) in [(GfxModel::Gfx942, n942), (GfxModel::Gfx90a, n90a)] {
                if name.is_empty() {
                    continue;
                }
                let d_regs = sh.d_regs() as usize;
                for (case, dst) in [(0, 64usize), (1, 100), (2, 66), (3, 100)] {
                    let mut w = Wave::new();
                    let bits = words(n as u64 * 16 + case, 8 * LANES + 48 * LANES);
                    for (r, reg) in w.v.iter_mut().enumerate().take(120) {
                        for (l, x) in reg.iter_mut().enumerate() {
                            let v = bits[(r * LANES + l) % bits.len()];
                            // Floats of moderate size (exponent near 0), some zeros and
                            // negative values; integers get all bits.
                            *x = match sh.ty {
                                MaiType::F32 => (v & 0x807f_ffff) | (0x70 + (v >> 28)) << 23,
                                MaiType::F16 => (v & 0x83ff_83ff) | 0x3800_3800,
                                MaiType::Bf16x4 | MaiType::Bf16x2 => {
                                    (v & 0x807f_807f) | 0x3f00_3f00
                                }
                                _ => v,
                            };
                        }
                    }
                    // A at v0, B at v8, C at v64; D at v64 (on C), v100 (apart) or v66
                    // (overlapping C at another offset); or C an inline constant.
                    // As the decoder builds it (exec never uses the decoder).
                    let (_, ab) = sh.ty.per_lane();
                    let op_info = OpInfo {
                        name,
                        w: [d_regs as u8, ab, ab, d_regs as u8],
                        form: Form::Std,
                        fk: FloatKind::F32,
                    };
                    let mut inst = Inst::new(Enc::Vop3p, op, op_info, model);
                    inst.len = 8;
                    inst.dst = 256 + dst as u16;
                    inst.src = [256, 256 + 8, 256 + 64];
                    // Case 3: C is the inline constant 1.0 (an integer MFMA reads its bits).
                    let c_inline = case == 3;
                    if c_inline {
                        inst.src[2] = 242;
                    }
                    let mut a = [[0u32; LANES]; 2];
                    let mut b = [[0u32; LANES]; 2];
                    for k in 0..ab as usize {
                        a[k] = w.v[k];
                        b[k] = w.v[8 + k];
                    }
                    let c: Vec<[u32; LANES]> = (0..d_regs)
                        .map(|r| {
                            if c_inline {
                                [1.0f32.to_bits(); LANES]
                            } else {
                                w.v[64 + r]
                            }
                        })
                        .collect();
                    let want = reference(&sh, &a, &b, &c);
                    let tlb = crate::exec::tlb::Tlb::default();
                    let mut ctx = Ctx::new(&NoMemory, &tlb, &mut lds, &info, [0; 3], 0);
                    v_mfma(&mut w, &inst, &mut ctx).expect("runs");
                    for r in 0..d_regs {
                        assert_eq!(w.v[dst + r], want[r], "{name} D register {r}, D at v{dst}");
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 40, "{checked} cases");
    }
}
