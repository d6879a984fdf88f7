//! Native code for the instructions the translator handles itself: which ones
//! ([`Native::of`]) and their Cranelift IR ([`Emitter::emit`]). Each one does what its
//! interpreter handler does on the handler's fast path (MODE as [`Native::is_float`] says
//! the region checked on entry): the 64 lanes as sixteen 4 x 32-bit vectors, results written
//! under EXEC (all at once when EXEC is all ones), `lane_ops` counted by the active lanes.
//! Registers are read from and written to the wave at every instruction; keeping them in
//! host registers across a region is for a later step.

use crate::exec::Ctx;
use crate::inst::{Enc, Inst};
use crate::wave::{Wave, EXEC_LO, LANES};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

pub(super) const S_OFFSET: usize = std::mem::offset_of!(Wave, s);
pub(super) const V_OFFSET: usize = std::mem::offset_of!(Wave, v);
pub(super) const PC_OFFSET: usize = std::mem::offset_of!(Wave, pc);
pub(super) const SCC_OFFSET: usize = std::mem::offset_of!(Wave, scc);
pub(super) const MODE_OFFSET: usize = std::mem::offset_of!(Wave, mode);
pub(super) const LANE_OPS_OFFSET: usize = std::mem::offset_of!(Wave, lane_ops);
pub(super) const CTX_PC_OFFSET: usize = std::mem::offset_of!(Ctx<'static>, pc);

/// Bytes of one VGPR (64 lanes of 4 bytes) in the register file.
const ROW_BYTES: i32 = (LANES * 4) as i32;
/// 4-lane vectors per register.
const CHUNKS: usize = LANES / 4;

/// A 32-bit source as the translation sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src {
    /// A VGPR or AGPR row of the register file (0..=511).
    Row(u32),
    /// An SGPR or special register (operand code 0..=127), read when the code runs.
    Sgpr(u8),
    /// A value fixed at translation: inline constant, literal, aperture.
    Const(u32),
}

impl Src {
    /// `code` of `i` as a source; `None` for what depends on wave state other than
    /// registers (VCCZ, EXECZ, SCC as operands), left to the handler.
    fn of(code: u16, i: &Inst, w: &Wave) -> Option<Src> {
        match code {
            256.. => Some(Src::Row(u32::from(code - 256) & 511)),
            0..=127 => Some(Src::Sgpr(code as u8)),
            251..=253 => None,
            // Every other code reads a value fixed by the instruction: the interpreter's
            // own reader gives it (it does not look at the wave for these codes).
            _ => Some(Src::Const(w.sread32(code, i.lit, i.info.fk))),
        }
    }
}

/// Vector operations with native code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VOp {
    Mov,
    AddF,
    SubF,
    SubrevF,
    MulF,
    /// `a * b + c`, rounded once.
    Fma,
    /// `a * b + c`, rounded twice (`v_mac_f32`).
    Mac,
    AddU,
    SubU,
    SubrevU,
    MulLo,
    And,
    Or,
    Xor,
    MinU,
    MaxU,
    MinI,
    MaxI,
    /// Shifts by a scalar amount (src0), of src1.
    Lshl,
    Lshr,
    Ashr,
    /// `sel` bit set: src1, else src0; `sel` the SGPR pair (operand code) of src2.
    Cndmask(u8),
}

/// Scalar operations with native code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SOp {
    Mov,
    AddU,
    SubU,
    AddI,
    SubI,
    And,
    Or,
    Xor,
    Lshl,
    Lshr,
    Ashr,
    Mul,
    Cselect,
    Cmp(IntCC),
}

/// One instruction's native form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Native {
    Valu { op: VOp, dst: u32, src: [Src; 3] },
    Salu { op: SOp, dst: u16, src: [Src; 2] },
}

impl Native {
    /// The native form of `i`, or `None` (a call-out). `fma`: the host has FMA.
    pub(super) fn of(i: &Inst, w: &Wave, fma: bool) -> Option<Native> {
        match i.enc {
            Enc::Vop1 | Enc::Vop2 | Enc::Vop3 => Self::valu(i, w, fma),
            Enc::Sop1 | Enc::Sop2 | Enc::Sopc => Self::salu(i, w),
            _ => None,
        }
    }

    /// True when the result depends on MODE's rounding and f32 denormal fields.
    pub(super) fn is_float(&self) -> bool {
        matches!(
            self,
            Native::Valu {
                op: VOp::AddF | VOp::SubF | VOp::SubrevF | VOp::MulF | VOp::Fma | VOp::Mac,
                ..
            }
        )
    }

    fn valu(i: &Inst, w: &Wave, fma: bool) -> Option<Native> {
        // Modifiers, DPP/SDWA and op_sel stay with the handlers.
        if !i.plain || i.dst < 256 {
            return None;
        }
        let (op, sources) = match i.info.name {
            "v_mov_b32" => (VOp::Mov, 1),
            "v_add_f32" => (VOp::AddF, 2),
            "v_sub_f32" => (VOp::SubF, 2),
            "v_subrev_f32" => (VOp::SubrevF, 2),
            "v_mul_f32" => (VOp::MulF, 2),
            "v_fma_f32" | "v_fmac_f32" if fma => (VOp::Fma, 3),
            "v_mac_f32" => (VOp::Mac, 3),
            "v_add_u32" => (VOp::AddU, 2),
            "v_sub_u32" => (VOp::SubU, 2),
            "v_subrev_u32" => (VOp::SubrevU, 2),
            "v_mul_lo_u32" => (VOp::MulLo, 2),
            "v_and_b32" => (VOp::And, 2),
            "v_or_b32" => (VOp::Or, 2),
            "v_xor_b32" => (VOp::Xor, 2),
            "v_min_u32" => (VOp::MinU, 2),
            "v_max_u32" => (VOp::MaxU, 2),
            "v_min_i32" => (VOp::MinI, 2),
            "v_max_i32" => (VOp::MaxI, 2),
            "v_lshlrev_b32" => (VOp::Lshl, 2),
            "v_lshrrev_b32" => (VOp::Lshr, 2),
            "v_ashrrev_i32" => (VOp::Ashr, 2),
            // The mask pair must lie inside the scalar file (the handler reads s[c], s[c+1]).
            "v_cndmask_b32" if i.src[2] < 127 => (VOp::Cndmask(i.src[2] as u8), 2),
            _ => return None,
        };
        let mut src = [Src::Const(0); 3];
        for (n, s) in src.iter_mut().enumerate().take(sources) {
            *s = Src::of(i.src[n], i, w)?;
        }
        // Host vectors shift by one amount for all lanes: a per-lane amount stays a call-out.
        if matches!(op, VOp::Lshl | VOp::Lshr | VOp::Ashr) && matches!(src[0], Src::Row(_)) {
            return None;
        }
        Some(Native::Valu {
            op,
            dst: u32::from(i.dst - 256) & 511,
            src,
        })
    }

    fn salu(i: &Inst, w: &Wave) -> Option<Native> {
        let (op, sources) = match i.info.name {
            "s_mov_b32" => (SOp::Mov, 1),
            "s_add_u32" => (SOp::AddU, 2),
            "s_sub_u32" => (SOp::SubU, 2),
            "s_add_i32" => (SOp::AddI, 2),
            "s_sub_i32" => (SOp::SubI, 2),
            "s_and_b32" => (SOp::And, 2),
            "s_or_b32" => (SOp::Or, 2),
            "s_xor_b32" => (SOp::Xor, 2),
            "s_lshl_b32" => (SOp::Lshl, 2),
            "s_lshr_b32" => (SOp::Lshr, 2),
            "s_ashr_i32" => (SOp::Ashr, 2),
            "s_mul_i32" => (SOp::Mul, 2),
            "s_cselect_b32" => (SOp::Cselect, 2),
            "s_cmp_eq_i32" | "s_cmp_eq_u32" => (SOp::Cmp(IntCC::Equal), 2),
            "s_cmp_lg_i32" | "s_cmp_lg_u32" => (SOp::Cmp(IntCC::NotEqual), 2),
            "s_cmp_gt_i32" => (SOp::Cmp(IntCC::SignedGreaterThan), 2),
            "s_cmp_ge_i32" => (SOp::Cmp(IntCC::SignedGreaterThanOrEqual), 2),
            "s_cmp_lt_i32" => (SOp::Cmp(IntCC::SignedLessThan), 2),
            "s_cmp_le_i32" => (SOp::Cmp(IntCC::SignedLessThanOrEqual), 2),
            "s_cmp_gt_u32" => (SOp::Cmp(IntCC::UnsignedGreaterThan), 2),
            "s_cmp_ge_u32" => (SOp::Cmp(IntCC::UnsignedGreaterThanOrEqual), 2),
            "s_cmp_lt_u32" => (SOp::Cmp(IntCC::UnsignedLessThan), 2),
            "s_cmp_le_u32" => (SOp::Cmp(IntCC::UnsignedLessThanOrEqual), 2),
            _ => return None,
        };
        let mut src = [Src::Const(0); 2];
        for (n, s) in src.iter_mut().enumerate().take(sources) {
            *s = Src::of(i.src[n], i, w)?;
        }
        Some(Native::Salu {
            op,
            dst: i.dst,
            src,
        })
    }
}

/// Emits native instructions into a region's function.
pub(super) struct Emitter<'a, 'b> {
    pub(super) b: &'a mut FunctionBuilder<'b>,
    /// `*mut Wave`.
    pub(super) wave: Value,
    /// The register file (`*wave.v`), loaded once per region: no handler replaces it.
    pub(super) vbase: Value,
}

fn trusted() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Lane-order-preserving reinterpretation between vector types.
fn lanes_as_is() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

impl Emitter<'_, '_> {
    pub(super) fn emit(&mut self, n: &Native) {
        match *n {
            Native::Valu { op, dst, src } => self.valu(op, dst, src),
            Native::Salu { op, dst, src } => self.salu(op, dst, src),
        }
    }

    fn sgpr32(&mut self, code: u8) -> Value {
        let off = S_OFFSET as i32 + 4 * i32::from(code);
        self.b.ins().load(types::I32, trusted(), self.wave, off)
    }

    fn sgpr64(&mut self, code: u8) -> Value {
        let off = S_OFFSET as i32 + 4 * i32::from(code);
        self.b.ins().load(types::I64, trusted(), self.wave, off)
    }

    fn scalar(&mut self, s: Src) -> Value {
        match s {
            Src::Sgpr(code) => self.sgpr32(code),
            Src::Const(v) => self.b.ins().iconst(types::I32, i64::from(v)),
            Src::Row(_) => unreachable!("a scalar operation's source is scalar"),
        }
    }

    /// The 16 chunks of a vector source (a scalar one splat once).
    fn chunks(&mut self, s: Src) -> [Value; CHUNKS] {
        match s {
            Src::Row(r) => std::array::from_fn(|j| {
                let off = r as i32 * ROW_BYTES + 16 * j as i32;
                self.b.ins().load(types::I32X4, trusted(), self.vbase, off)
            }),
            _ => {
                let v = self.scalar(s);
                let splat = self.b.ins().splat(types::I32X4, v);
                [splat; CHUNKS]
            }
        }
    }

    /// A lane mask (all ones where set) for lanes 4j..4j+3 of a 64-bit mask.
    fn lane_mask(&mut self, mask: Value, j: usize) -> Value {
        let bits = self.b.ins().ushr_imm_u(mask, 4 * j as i64);
        let bits = self.b.ins().ireduce(types::I32, bits);
        let bits = self.b.ins().splat(types::I32X4, bits);
        let weights = self.weights();
        let picked = self.b.ins().band(bits, weights);
        self.b.ins().icmp(IntCC::Equal, picked, weights)
    }

    /// The vector (1, 2, 4, 8): lane k's bit in a 4-bit group.
    fn weights(&mut self) -> Value {
        let bytes: Vec<u8> = [1u32, 2, 4, 8]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let c = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(types::I32X4, c)
    }

    fn float(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(types::F32X4, lanes_as_is(), v)
    }

    fn int(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(types::I32X4, lanes_as_is(), v)
    }

    fn valu(&mut self, op: VOp, dst: u32, src: [Src; 3]) {
        let a = self.chunks(src[0]);
        let bb = match op {
            VOp::Mov => a,
            _ => self.chunks(src[1]),
        };
        let c = match op {
            VOp::Fma | VOp::Mac => Some(self.chunks(src[2])),
            _ => None,
        };
        let sel = match op {
            VOp::Cndmask(code) => Some(self.sgpr64(code)),
            _ => None,
        };
        // Scalar shift amounts: the low 5 bits (Cranelift masks vector shifts by the lane
        // width too, but say it here as the handler does).
        let amount = match (op, src[0]) {
            (VOp::Lshl | VOp::Lshr | VOp::Ashr, s) => {
                let v = self.scalar(s);
                Some(self.b.ins().band_imm_u(v, 31))
            }
            _ => None,
        };
        let mut d = [a[0]; CHUNKS];
        for j in 0..CHUNKS {
            let (x, y) = (a[j], bb[j]);
            d[j] = match op {
                VOp::Mov => x,
                VOp::AddF | VOp::SubF | VOp::SubrevF | VOp::MulF => {
                    let (fx, fy) = (self.float(x), self.float(y));
                    let r = match op {
                        VOp::AddF => self.b.ins().fadd(fx, fy),
                        VOp::SubF => self.b.ins().fsub(fx, fy),
                        VOp::SubrevF => self.b.ins().fsub(fy, fx),
                        _ => self.b.ins().fmul(fx, fy),
                    };
                    self.int(r)
                }
                VOp::Fma | VOp::Mac => {
                    let z = c.expect("three sources")[j];
                    let (fx, fy, fz) = (self.float(x), self.float(y), self.float(z));
                    let r = if op == VOp::Fma {
                        self.b.ins().fma(fx, fy, fz)
                    } else {
                        let p = self.b.ins().fmul(fx, fy);
                        self.b.ins().fadd(p, fz)
                    };
                    self.int(r)
                }
                VOp::AddU => self.b.ins().iadd(x, y),
                VOp::SubU => self.b.ins().isub(x, y),
                VOp::SubrevU => self.b.ins().isub(y, x),
                VOp::MulLo => self.b.ins().imul(x, y),
                VOp::And => self.b.ins().band(x, y),
                VOp::Or => self.b.ins().bor(x, y),
                VOp::Xor => self.b.ins().bxor(x, y),
                VOp::MinU => self.b.ins().umin(x, y),
                VOp::MaxU => self.b.ins().umax(x, y),
                VOp::MinI => self.b.ins().smin(x, y),
                VOp::MaxI => self.b.ins().smax(x, y),
                VOp::Lshl => self.b.ins().ishl(y, amount.expect("shift amount")),
                VOp::Lshr => self.b.ins().ushr(y, amount.expect("shift amount")),
                VOp::Ashr => self.b.ins().sshr(y, amount.expect("shift amount")),
                VOp::Cndmask(_) => {
                    let m = self.lane_mask(sel.expect("mask"), j);
                    self.b.ins().bitselect(m, y, x)
                }
            };
        }
        self.write_row(dst, &d);
    }

    /// Writes `d` to row `dst` under EXEC and counts the active lanes.
    fn write_row(&mut self, dst: u32, d: &[Value; CHUNKS]) {
        let exec = self.sgpr64(EXEC_LO as u8);
        let ops = self
            .b
            .ins()
            .load(types::I64, trusted(), self.wave, LANE_OPS_OFFSET as i32);
        let active = self.b.ins().popcnt(exec);
        let ops = self.b.ins().iadd(ops, active);
        self.b
            .ins()
            .store(trusted(), ops, self.wave, LANE_OPS_OFFSET as i32);
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
        let (all, some, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(full, all, &[], some, &[]);
        let row = dst as i32 * ROW_BYTES;
        self.b.switch_to_block(all);
        for (j, &v) in d.iter().enumerate() {
            self.b
                .ins()
                .store(trusted(), v, self.vbase, row + 16 * j as i32);
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(some);
        for (j, &v) in d.iter().enumerate() {
            let off = row + 16 * j as i32;
            let old = self.b.ins().load(types::I32X4, trusted(), self.vbase, off);
            let m = self.lane_mask(exec, j);
            let v = self.b.ins().bitselect(m, v, old);
            self.b.ins().store(trusted(), v, self.vbase, off);
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    fn set_scc(&mut self, bit: Value) {
        self.b
            .ins()
            .store(trusted(), bit, self.wave, SCC_OFFSET as i32);
    }

    fn salu(&mut self, op: SOp, dst: u16, src: [Src; 2]) {
        let a = self.scalar(src[0]);
        let bb = match op {
            SOp::Mov => a,
            _ => self.scalar(src[1]),
        };
        let nonzero = |e: &mut Self, d: Value| e.b.ins().icmp_imm_u(IntCC::NotEqual, d, 0);
        let (d, scc) = match op {
            SOp::Mov => (Some(a), None),
            SOp::AddU => {
                let (d, c) = self.b.ins().uadd_overflow(a, bb);
                (Some(d), Some(c))
            }
            SOp::SubU => {
                let d = self.b.ins().isub(a, bb);
                let c = self.b.ins().icmp(IntCC::UnsignedGreaterThan, bb, a);
                (Some(d), Some(c))
            }
            SOp::AddI => {
                let (d, o) = self.b.ins().sadd_overflow(a, bb);
                (Some(d), Some(o))
            }
            SOp::SubI => {
                let (d, o) = self.b.ins().ssub_overflow(a, bb);
                (Some(d), Some(o))
            }
            SOp::And | SOp::Or | SOp::Xor | SOp::Lshl | SOp::Lshr | SOp::Ashr => {
                let d = match op {
                    SOp::And => self.b.ins().band(a, bb),
                    SOp::Or => self.b.ins().bor(a, bb),
                    SOp::Xor => self.b.ins().bxor(a, bb),
                    _ => {
                        let amount = self.b.ins().band_imm_u(bb, 31);
                        match op {
                            SOp::Lshl => self.b.ins().ishl(a, amount),
                            SOp::Lshr => self.b.ins().ushr(a, amount),
                            _ => self.b.ins().sshr(a, amount),
                        }
                    }
                };
                (Some(d), Some(nonzero(self, d)))
            }
            SOp::Mul => (Some(self.b.ins().imul(a, bb)), None),
            SOp::Cselect => {
                let scc = self
                    .b
                    .ins()
                    .uload8(types::I32, trusted(), self.wave, SCC_OFFSET as i32);
                (Some(self.b.ins().select(scc, a, bb)), None)
            }
            SOp::Cmp(cc) => (None, Some(self.b.ins().icmp(cc, a, bb))),
        };
        if let Some(d) = d {
            // Codes above 127 are read-only: the handler ignores the write.
            if dst < 128 {
                let off = S_OFFSET as i32 + 4 * i32::from(dst);
                self.b.ins().store(trusted(), d, self.wave, off);
            }
        }
        if let Some(bit) = scc {
            self.set_scc(bit);
        }
    }
}
