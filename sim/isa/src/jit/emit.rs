//! Native code for the instructions the translator handles itself: which ones
//! ([`Native::of`]) and their Cranelift IR ([`Emitter::emit`]). Each one does what its
//! interpreter handler does on the handler's fast path (MODE as [`Native::is_float`] says
//! the region checked on entry): runs of vector instructions as a loop over 4-lane chunks
//! ([`Emitter::valu_run`]), results written under EXEC (without blending when EXEC is all
//! ones), `lane_ops` counted by the active lanes; scalar instructions on the wave's
//! registers in memory.

use crate::exec::Ctx;
use crate::inst::{Enc, Inst};
use crate::wave::{Wave, EXEC_LO, LANES};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

pub(super) const S_OFFSET: usize = std::mem::offset_of!(Wave, s);
pub(super) const V_OFFSET: usize = std::mem::offset_of!(Wave, v);
pub(super) const PC_OFFSET: usize = std::mem::offset_of!(Wave, pc);
pub(super) const SCC_OFFSET: usize = std::mem::offset_of!(Wave, scc);
pub(super) const MODE_OFFSET: usize = std::mem::offset_of!(Wave, mode);
pub(super) const LANE_OPS_OFFSET: usize = std::mem::offset_of!(Wave, lane_ops);
/// The wave's class counts ([`Wave::mix`]), one u64 per class.
pub(super) const MIX_OFFSET: usize =
    std::mem::offset_of!(Wave, mix) + std::mem::offset_of!(hsasim_vtime::Mix, count);
pub(super) const CTX_PC_OFFSET: usize = std::mem::offset_of!(Ctx<'static>, pc);

/// Bytes of one VGPR (64 lanes of 4 bytes) in the register file.
const ROW_BYTES: i32 = (LANES * 4) as i32;

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

/// What a vector compare tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Test {
    Int(IntCC),
    Float(FloatCC),
    /// The always-false and always-true conditions.
    Never,
    Always,
}

/// 64-bit scalar operations (`s_*_b64`), on operand codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SOp64 {
    Mov,
    And,
    Or,
    Xor,
    Andn2,
    Orn2,
    Cselect,
    /// `s_*_saveexec_b64`: dst = EXEC, EXEC = f(src, EXEC), SCC = EXEC != 0.
    SaveExec(Logic64),
}

/// The logic of a saveexec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Logic64 {
    And,
    Or,
    Xor,
    Andn2,
    Orn2,
}

/// A 64-bit scalar source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src64 {
    /// The pair at this operand code (below 127).
    Sgpr(u8),
    Const(u64),
}

impl Src64 {
    fn of(code: u16, i: &Inst, w: &Wave) -> Option<Src64> {
        match code {
            0..=126 => Some(Src64::Sgpr(code as u8)),
            127 | 251..=253 | 256.. => None,
            // As for 32-bit sources: the interpreter's reader gives the fixed value.
            _ => Some(Src64::Const(w.sread64(code, i.lit, i.info.fk))),
        }
    }
}

/// What a conditional branch tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cond {
    Always,
    SccZero,
    SccSet,
    VccZero,
    VccNonZero,
    ExecZero,
    ExecNonZero,
}

/// One instruction's native form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Native {
    Valu {
        op: VOp,
        dst: u32,
        src: [Src; 3],
    },
    Salu {
        op: SOp,
        dst: u16,
        src: [Src; 2],
    },
    Salu64 {
        op: SOp64,
        dst: u16,
        src: [Src64; 2],
    },
    /// A 32-bit vector compare (not the `v_cmpx` forms): the lanes where `test` holds,
    /// of the active ones, to the SGPR pair `dst`.
    Cmp {
        test: Test,
        dst: u16,
        src: [Src; 2],
    },
    /// Nothing to do in this in-order model (`s_nop`, `s_waitcnt`, `s_setprio`).
    Nop,
    /// A branch by `offset` bytes from the next instruction when `cond` holds: always the
    /// last instruction of its region ([`ends_region`](super::ends_region)).
    Branch {
        cond: Cond,
        offset: i64,
    },
}

impl Native {
    /// The native form of `i`, or `None` (a call-out). `fma`: the host has FMA.
    pub(super) fn of(i: &Inst, w: &Wave, fma: bool) -> Option<Native> {
        if i.enc == Enc::Vopc || (i.enc == Enc::Vop3 && i.vop3_of == Enc::Vopc) {
            return Self::compare(i, w);
        }
        match i.enc {
            Enc::Vop1 | Enc::Vop2 | Enc::Vop3 => Self::valu(i, w, fma),
            Enc::Sop1 | Enc::Sop2 | Enc::Sopc => Self::salu(i, w),
            Enc::Sopp => Self::sopp(i),
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
            // The literal K: fmamk/madmk src0 * K + vsrc1, fmaak/madak src0 * vsrc1 + K.
            "v_fmamk_f32" | "v_fmaak_f32" if fma => (VOp::Fma, 0),
            "v_madmk_f32" | "v_madak_f32" => (VOp::Mac, 0),
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
        if sources == 0 {
            let (a, b, k) = (
                Src::of(i.src[0], i, w)?,
                Src::of(i.src[1], i, w)?,
                Src::Const(i.lit),
            );
            src = if i.info.name.ends_with("mk_f32") {
                [a, k, b]
            } else {
                [a, b, k]
            };
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

    fn compare(i: &Inst, w: &Wave) -> Option<Native> {
        if !i.plain || i.sdst >= 127 {
            return None;
        }
        let op = u32::from(i.op);
        let cond = op & 7;
        let int = |signed: bool| match cond {
            0 => Test::Never,
            1 if signed => Test::Int(IntCC::SignedLessThan),
            1 => Test::Int(IntCC::UnsignedLessThan),
            2 => Test::Int(IntCC::Equal),
            3 if signed => Test::Int(IntCC::SignedLessThanOrEqual),
            3 => Test::Int(IntCC::UnsignedLessThanOrEqual),
            4 if signed => Test::Int(IntCC::SignedGreaterThan),
            4 => Test::Int(IntCC::UnsignedGreaterThan),
            5 => Test::Int(IntCC::NotEqual),
            6 if signed => Test::Int(IntCC::SignedGreaterThanOrEqual),
            6 => Test::Int(IntCC::UnsignedGreaterThanOrEqual),
            _ => Test::Always,
        };
        let test = match op {
            0xc0..=0xc7 => int(true),
            0xc8..=0xcf => int(false),
            // As the handlers' `fcmp`: the negated conditions hold for unordered operands.
            0x40..=0x4f => match op & 15 {
                0 => Test::Never,
                1 => Test::Float(FloatCC::LessThan),
                2 => Test::Float(FloatCC::Equal),
                3 => Test::Float(FloatCC::LessThanOrEqual),
                4 => Test::Float(FloatCC::GreaterThan),
                5 => Test::Float(FloatCC::OrderedNotEqual),
                6 => Test::Float(FloatCC::GreaterThanOrEqual),
                7 => Test::Float(FloatCC::Ordered),
                8 => Test::Float(FloatCC::Unordered),
                9 => Test::Float(FloatCC::UnorderedOrLessThan),
                10 => Test::Float(FloatCC::UnorderedOrEqual),
                11 => Test::Float(FloatCC::UnorderedOrLessThanOrEqual),
                12 => Test::Float(FloatCC::UnorderedOrGreaterThan),
                13 => Test::Float(FloatCC::NotEqual),
                14 => Test::Float(FloatCC::UnorderedOrGreaterThanOrEqual),
                _ => Test::Always,
            },
            _ => return None,
        };
        Some(Native::Cmp {
            test,
            dst: i.sdst,
            src: [Src::of(i.src[0], i, w)?, Src::of(i.src[1], i, w)?],
        })
    }

    fn sopp(i: &Inst) -> Option<Native> {
        let cond = match i.info.name {
            "s_nop" | "s_waitcnt" | "s_setprio" => return Some(Native::Nop),
            "s_branch" => Cond::Always,
            "s_cbranch_scc0" => Cond::SccZero,
            "s_cbranch_scc1" => Cond::SccSet,
            "s_cbranch_vccz" => Cond::VccZero,
            "s_cbranch_vccnz" => Cond::VccNonZero,
            "s_cbranch_execz" => Cond::ExecZero,
            "s_cbranch_execnz" => Cond::ExecNonZero,
            _ => return None,
        };
        // As the handler: the target is the next instruction + simm16 words.
        Some(Native::Branch {
            cond,
            offset: i64::from(i.imm) * 4,
        })
    }

    fn salu64(i: &Inst, w: &Wave) -> Option<Native> {
        let op = match i.info.name {
            "s_mov_b64" => SOp64::Mov,
            "s_and_b64" => SOp64::And,
            "s_or_b64" => SOp64::Or,
            "s_xor_b64" => SOp64::Xor,
            "s_andn2_b64" => SOp64::Andn2,
            "s_orn2_b64" => SOp64::Orn2,
            "s_cselect_b64" => SOp64::Cselect,
            "s_and_saveexec_b64" => SOp64::SaveExec(Logic64::And),
            "s_or_saveexec_b64" => SOp64::SaveExec(Logic64::Or),
            "s_xor_saveexec_b64" => SOp64::SaveExec(Logic64::Xor),
            "s_andn2_saveexec_b64" => SOp64::SaveExec(Logic64::Andn2),
            "s_orn2_saveexec_b64" => SOp64::SaveExec(Logic64::Orn2),
            _ => return None,
        };
        let two = !matches!(op, SOp64::Mov | SOp64::SaveExec(_));
        let a = Src64::of(i.src[0], i, w)?;
        let b = if two {
            Src64::of(i.src[1], i, w)?
        } else {
            Src64::Const(0)
        };
        Some(Native::Salu64 {
            op,
            dst: i.dst,
            src: [a, b],
        })
    }

    fn salu(i: &Inst, w: &Wave) -> Option<Native> {
        if i.info.name.ends_with("_b64") {
            return Self::salu64(i, w);
        }
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

/// A vector instruction of a run, with the scalar values it reads, captured at its place.
struct Capture {
    op: VOp,
    dst: u32,
    src: [Src; 3],
    exec: Value,
    /// Scalar operands, splat.
    scalars: [Option<Value>; 3],
    /// `v_cndmask_b32`'s mask.
    sel: Option<Value>,
    /// A shift's amount, masked to 5 bits.
    amount: Option<Value>,
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
    /// Whether a branch on `cond` is taken: an i8, 0 or 1.
    pub(super) fn taken(&mut self, cond: Cond) -> Value {
        let zero64 = |e: &mut Self, code: usize, cc: IntCC| {
            let v = e.sgpr64(code as u8);
            e.b.ins().icmp_imm_u(cc, v, 0)
        };
        match cond {
            Cond::Always => self.b.ins().iconst(types::I8, 1),
            Cond::SccZero | Cond::SccSet => {
                let scc = self
                    .b
                    .ins()
                    .load(types::I8, trusted(), self.wave, SCC_OFFSET as i32);
                let cc = if cond == Cond::SccSet {
                    IntCC::NotEqual
                } else {
                    IntCC::Equal
                };
                self.b.ins().icmp_imm_u(cc, scc, 0)
            }
            Cond::VccZero => zero64(self, crate::wave::VCC_LO, IntCC::Equal),
            Cond::VccNonZero => zero64(self, crate::wave::VCC_LO, IntCC::NotEqual),
            Cond::ExecZero => zero64(self, EXEC_LO, IntCC::Equal),
            Cond::ExecNonZero => zero64(self, EXEC_LO, IntCC::NotEqual),
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

    /// A lane mask (all ones where set) for the 4 lanes of a 64-bit mask at `lane` (an i64
    /// multiple of 4, the first lane of the chunk).
    fn lane_mask(&mut self, mask: Value, lane: Value) -> Value {
        let bits = self.b.ins().ushr(mask, lane);
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

    /// A run of consecutive native instructions other than branches. The scalar ones run
    /// first, in order; each vector one captures, at its place among them, the scalar
    /// values it reads (EXEC, scalar operands, masks, shift amounts). Then the vector ones
    /// run 4 lanes at a time: a loop over the 16 chunks of the registers whose body runs
    /// every vector instruction of the run on one chunk, keeping registers in host
    /// registers within the chunk (each register read is loaded once, each one written is
    /// stored once). This order gives what running them one after the other gives: lanes do
    /// not interact in these vector instructions, none of them writes a scalar register or
    /// SCC, and no scalar one reads a vector register. With EXEC all ones for every vector
    /// instruction, a second copy of the loop stores without blending.
    pub(super) fn run(&mut self, run: &[Native]) {
        let mut caps: Vec<Capture> = Vec::new();
        let mut active = self.b.ins().iconst(types::I64, 0);
        let mut full = self.b.ins().iconst(types::I8, 1);
        for n in run {
            let (op, dst, src) = match *n {
                Native::Salu { op, dst, src } => {
                    self.salu(op, dst, src);
                    continue;
                }
                Native::Salu64 { op, dst, src } => {
                    self.salu64(op, dst, src);
                    continue;
                }
                Native::Cmp { test, dst, src } => {
                    // It reads what the vector instructions before it wrote: they run
                    // first. Later ones read its result through their own captures.
                    self.vector_loops(std::mem::take(&mut caps), active, full);
                    active = self.b.ins().iconst(types::I64, 0);
                    full = self.b.ins().iconst(types::I8, 1);
                    self.compare(test, dst, src);
                    continue;
                }
                Native::Nop | Native::Branch { .. } => continue,
                Native::Valu { op, dst, src } => (op, dst, src),
            };
            let exec = self.sgpr64(EXEC_LO as u8);
            let lanes = self.b.ins().popcnt(exec);
            active = self.b.ins().iadd(active, lanes);
            let all = self.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
            full = self.b.ins().band(full, all);
            let sources = match op {
                VOp::Mov => 1,
                VOp::Fma | VOp::Mac => 3,
                _ => 2,
            };
            let mut scalars = [None; 3];
            for (k, s) in src.iter().enumerate().take(sources) {
                if !matches!(s, Src::Row(_)) {
                    let v = self.scalar(*s);
                    scalars[k] = Some(self.b.ins().splat(types::I32X4, v));
                }
            }
            let sel = match op {
                VOp::Cndmask(code) => Some(self.sgpr64(code)),
                _ => None,
            };
            let amount = match op {
                VOp::Lshl | VOp::Lshr | VOp::Ashr => {
                    let v = self.scalar(src[0]);
                    Some(self.b.ins().band_imm_u(v, 31))
                }
                _ => None,
            };
            caps.push(Capture {
                op,
                dst,
                src,
                exec,
                scalars,
                sel,
                amount,
            });
        }
        self.vector_loops(caps, active, full);
    }

    /// The chunk loops of captured vector instructions (`active`: their active lanes
    /// summed; `full`: EXEC was all ones for each).
    fn vector_loops(&mut self, caps: Vec<Capture>, active: Value, full: Value) {
        if caps.is_empty() {
            return;
        }
        let ops = self
            .b
            .ins()
            .load(types::I64, trusted(), self.wave, LANE_OPS_OFFSET as i32);
        let ops = self.b.ins().iadd(ops, active);
        self.b
            .ins()
            .store(trusted(), ops, self.wave, LANE_OPS_OFFSET as i32);
        let (unmasked, masked, after) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().brif(
            full,
            unmasked,
            &[BlockArg::Value(zero)],
            masked,
            &[BlockArg::Value(zero)],
        );
        for (block, blend) in [(unmasked, false), (masked, true)] {
            let lane = self.b.append_block_param(block, types::I64);
            self.b.switch_to_block(block);
            self.chunk(&caps, lane, blend);
            let next = self.b.ins().iadd_imm_s(lane, 4);
            let more = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThan, next, LANES as i64);
            self.b
                .ins()
                .brif(more, block, &[BlockArg::Value(next)], after, &[]);
        }
        self.b.switch_to_block(after);
    }

    /// A vector compare: a loop over the chunks gathering each one's 4 result bits.
    fn compare(&mut self, test: Test, dst: u16, src: [Src; 2]) {
        let exec = self.sgpr64(EXEC_LO as u8);
        let active = self.b.ins().popcnt(exec);
        let ops = self
            .b
            .ins()
            .load(types::I64, trusted(), self.wave, LANE_OPS_OFFSET as i32);
        let ops = self.b.ins().iadd(ops, active);
        self.b
            .ins()
            .store(trusted(), ops, self.wave, LANE_OPS_OFFSET as i32);
        let bits = match test {
            Test::Never => self.b.ins().iconst(types::I64, 0),
            Test::Always => self.b.ins().iconst(types::I64, -1),
            Test::Int(_) | Test::Float(_) => {
                let scalars: Vec<Option<Value>> = src
                    .iter()
                    .map(|s| match s {
                        Src::Row(_) => None,
                        _ => {
                            let v = self.scalar(*s);
                            Some(self.b.ins().splat(types::I32X4, v))
                        }
                    })
                    .collect();
                let (body, after) = (self.b.create_block(), self.b.create_block());
                let lane = self.b.append_block_param(body, types::I64);
                let acc = self.b.append_block_param(body, types::I64);
                let result = self.b.append_block_param(after, types::I64);
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b
                    .ins()
                    .jump(body, &[BlockArg::Value(zero), BlockArg::Value(zero)]);
                self.b.switch_to_block(body);
                let lane_bytes = self.b.ins().ishl_imm_u(lane, 2);
                let at = self.b.ins().iadd(self.vbase, lane_bytes);
                let operand = |e: &mut Self, k: usize| match (src[k], scalars[k]) {
                    (Src::Row(r), _) => {
                        e.b.ins()
                            .load(types::I32X4, trusted(), at, r as i32 * ROW_BYTES)
                    }
                    (_, Some(v)) => v,
                    _ => unreachable!("scalar operands are splat before the loop"),
                };
                let (x, y) = (operand(self, 0), operand(self, 1));
                let m = match test {
                    Test::Int(cc) => self.b.ins().icmp(cc, x, y),
                    Test::Float(cc) => {
                        let (fx, fy) = (self.float(x), self.float(y));
                        let m = self.fcmp4(cc, fx, fy);
                        self.int(m)
                    }
                    Test::Never | Test::Always => unreachable!("constant tests have no loop"),
                };
                let four = self.b.ins().vhigh_bits(types::I64, m);
                let placed = self.b.ins().ishl(four, lane);
                let acc = self.b.ins().bor(acc, placed);
                let next = self.b.ins().iadd_imm_s(lane, 4);
                let more = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::UnsignedLessThan, next, LANES as i64);
                self.b.ins().brif(
                    more,
                    body,
                    &[BlockArg::Value(next), BlockArg::Value(acc)],
                    after,
                    &[BlockArg::Value(acc)],
                );
                self.b.switch_to_block(after);
                result
            }
        };
        let bits = self.b.ins().band(bits, exec);
        self.store_sgpr64(dst, bits);
    }

    /// A 4-lane float compare. Cranelift's x86 backend has the conditions that one SSE
    /// compare gives; the others are their complements or pairs of them.
    fn fcmp4(&mut self, cc: FloatCC, x: Value, y: Value) -> Value {
        let not = |e: &mut Self, cc: FloatCC| {
            let m = e.b.ins().fcmp(cc, x, y);
            e.b.ins().bnot(m)
        };
        match cc {
            FloatCC::OrderedNotEqual => {
                let ordered = self.b.ins().fcmp(FloatCC::Ordered, x, y);
                let ne = self.b.ins().fcmp(FloatCC::NotEqual, x, y);
                self.b.ins().band(ordered, ne)
            }
            FloatCC::UnorderedOrEqual => {
                let unordered = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                let eq = self.b.ins().fcmp(FloatCC::Equal, x, y);
                self.b.ins().bor(unordered, eq)
            }
            FloatCC::UnorderedOrLessThan => not(self, FloatCC::GreaterThanOrEqual),
            FloatCC::UnorderedOrLessThanOrEqual => not(self, FloatCC::GreaterThan),
            FloatCC::UnorderedOrGreaterThan => not(self, FloatCC::LessThanOrEqual),
            FloatCC::UnorderedOrGreaterThanOrEqual => not(self, FloatCC::LessThan),
            _ => self.b.ins().fcmp(cc, x, y),
        }
    }

    fn store_sgpr64(&mut self, code: u16, v: Value) {
        // As `write_s64`: pairs from 127 up are not writable.
        if code < 127 {
            let off = S_OFFSET as i32 + 4 * i32::from(code);
            self.b.ins().store(trusted(), v, self.wave, off);
        }
    }

    fn scalar64(&mut self, s: Src64) -> Value {
        match s {
            Src64::Sgpr(code) => self.sgpr64(code),
            Src64::Const(v) => self.b.ins().iconst(types::I64, v as i64),
        }
    }

    fn salu64(&mut self, op: SOp64, dst: u16, src: [Src64; 2]) {
        let a = self.scalar64(src[0]);
        let logic = |e: &mut Self, l: Logic64, a: Value, b: Value| match l {
            Logic64::And => e.b.ins().band(a, b),
            Logic64::Or => e.b.ins().bor(a, b),
            Logic64::Xor => e.b.ins().bxor(a, b),
            Logic64::Andn2 => {
                let nb = e.b.ins().bnot(b);
                e.b.ins().band(a, nb)
            }
            Logic64::Orn2 => {
                let nb = e.b.ins().bnot(b);
                e.b.ins().bor(a, nb)
            }
        };
        let nonzero = |e: &mut Self, d: Value| e.b.ins().icmp_imm_u(IntCC::NotEqual, d, 0);
        match op {
            SOp64::SaveExec(l) => {
                let exec = self.sgpr64(EXEC_LO as u8);
                let new = logic(self, l, a, exec);
                self.store_sgpr64(dst, exec);
                self.store_sgpr64(EXEC_LO as u16, new);
                let scc = nonzero(self, new);
                self.set_scc(scc);
            }
            SOp64::Mov => self.store_sgpr64(dst, a),
            SOp64::Cselect => {
                let b = self.scalar64(src[1]);
                let scc = self
                    .b
                    .ins()
                    .uload8(types::I32, trusted(), self.wave, SCC_OFFSET as i32);
                let d = self.b.ins().select(scc, a, b);
                self.store_sgpr64(dst, d);
            }
            SOp64::And | SOp64::Or | SOp64::Xor | SOp64::Andn2 | SOp64::Orn2 => {
                let b = self.scalar64(src[1]);
                let l = match op {
                    SOp64::And => Logic64::And,
                    SOp64::Or => Logic64::Or,
                    SOp64::Xor => Logic64::Xor,
                    SOp64::Andn2 => Logic64::Andn2,
                    _ => Logic64::Orn2,
                };
                let d = logic(self, l, a, b);
                self.store_sgpr64(dst, d);
                let scc = nonzero(self, d);
                self.set_scc(scc);
            }
        }
    }

    /// One chunk (4 lanes from `lane`) of every vector instruction of a run; `blend`: EXEC
    /// is not all ones somewhere, so results blend with the registers' old values.
    fn chunk(&mut self, caps: &[Capture], lane: Value, blend: bool) {
        // The chunk's address in row 0; rows are ROW_BYTES apart.
        let lane_bytes = self.b.ins().ishl_imm_u(lane, 2);
        let at = self.b.ins().iadd(self.vbase, lane_bytes);
        // Current value of each register touched, and whether it was written.
        let mut rows: Vec<(u32, Value, bool)> = Vec::new();
        let read = |e: &mut Self, rows: &mut Vec<(u32, Value, bool)>, r: u32| -> Value {
            if let Some(&(_, v, _)) = rows.iter().find(|(row, _, _)| *row == r) {
                return v;
            }
            let v =
                e.b.ins()
                    .load(types::I32X4, trusted(), at, r as i32 * ROW_BYTES);
            rows.push((r, v, false));
            v
        };
        for c in caps {
            let operand =
                |e: &mut Self, rows: &mut Vec<(u32, Value, bool)>, k: usize| match c.src[k] {
                    Src::Row(r) => read(e, rows, r),
                    _ => c.scalars[k].expect("scalar operands are splat before the loop"),
                };
            let x = operand(self, &mut rows, 0);
            let y = match c.op {
                VOp::Mov => x,
                _ => operand(self, &mut rows, 1),
            };
            let d = match c.op {
                VOp::Mov => x,
                VOp::AddF | VOp::SubF | VOp::SubrevF | VOp::MulF => {
                    let (fx, fy) = (self.float(x), self.float(y));
                    let r = match c.op {
                        VOp::AddF => self.b.ins().fadd(fx, fy),
                        VOp::SubF => self.b.ins().fsub(fx, fy),
                        VOp::SubrevF => self.b.ins().fsub(fy, fx),
                        _ => self.b.ins().fmul(fx, fy),
                    };
                    self.int(r)
                }
                VOp::Fma | VOp::Mac => {
                    let z = operand(self, &mut rows, 2);
                    let (fx, fy, fz) = (self.float(x), self.float(y), self.float(z));
                    let r = if c.op == VOp::Fma {
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
                VOp::Lshl => self.b.ins().ishl(y, c.amount.expect("shift amount")),
                VOp::Lshr => self.b.ins().ushr(y, c.amount.expect("shift amount")),
                VOp::Ashr => self.b.ins().sshr(y, c.amount.expect("shift amount")),
                VOp::Cndmask(_) => {
                    let m = self.lane_mask(c.sel.expect("mask"), lane);
                    self.b.ins().bitselect(m, y, x)
                }
            };
            let d = if blend {
                let m = self.lane_mask(c.exec, lane);
                let old = read(self, &mut rows, c.dst);
                self.b.ins().bitselect(m, d, old)
            } else {
                d
            };
            match rows.iter_mut().find(|(row, _, _)| *row == c.dst) {
                Some(slot) => *slot = (c.dst, d, true),
                None => rows.push((c.dst, d, true)),
            }
        }
        for &(r, v, written) in &rows {
            if written {
                self.b.ins().store(trusted(), v, at, r as i32 * ROW_BYTES);
            }
        }
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
