//! The decoded instruction: its encoding family, the opcode's static description and its
//! operand fields, normalised so that one handler serves an opcode in every encoding it has.
//! The decoder (`decode`) builds these from instruction words, the handlers (`exec`) run
//! them, `disasm` prints them; this module depends on none of them.

use crate::api::GfxModel;

/// Encoding family of an instruction word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    /// VOP3 (and VOP3b); `Inst::vop3_of` tells which VOP1/VOP2/VOPC opcode it promotes.
    Vop3,
    Vop3p,
    Ds,
    /// FLAT, GLOBAL and SCRATCH (see `Inst::seg`).
    Flat,
    Mubuf,
    Mtbuf,
    /// MIMG image instructions (gfx90a only; see `exec::image` for its `Inst` fields).
    Mimg,
}

impl Enc {
    pub fn name(self) -> &'static str {
        match self {
            Enc::Sop1 => "SOP1",
            Enc::Sop2 => "SOP2",
            Enc::Sopk => "SOPK",
            Enc::Sopc => "SOPC",
            Enc::Sopp => "SOPP",
            Enc::Smem => "SMEM",
            Enc::Vop1 => "VOP1",
            Enc::Vop2 => "VOP2",
            Enc::Vopc => "VOPC",
            Enc::Vop3 => "VOP3",
            Enc::Vop3p => "VOP3P",
            Enc::Ds => "DS",
            Enc::Flat => "FLAT",
            Enc::Mubuf => "MUBUF",
            Enc::Mtbuf => "MTBUF",
            Enc::Mimg => "MIMG",
        }
    }
}

/// How the operands of an opcode are laid out when printed (and, for a few, executed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The encoding's default layout.
    Std,
    /// No operands (`s_endpgm`, `v_nop`, `s_barrier`).
    None,
    /// SOP1 with only a destination (`s_getpc_b64`).
    DstOnly,
    /// SOP1 with only a source (`s_setpc_b64`).
    SrcOnly,
    /// VOP2 with carry-out (`v_add_co_u32`): prints `vdst, vcc, src0, src1`.
    CarryOut,
    /// VOP2 with carry-in and carry-out (`v_addc_co_u32`).
    CarryInOut,
    /// `v_cndmask_b32`: mask operand last.
    Cndmask,
    /// `v_madmk`/`v_fmamk`: literal in the middle.
    MadMk,
    /// `v_madak`/`v_fmaak`: literal last.
    MadAk,
    /// VALU result in an SGPR (`v_readfirstlane_b32`, `v_readlane_b32`).
    SDst,
    /// VOP3b: vdst, sdst, sources (`v_mad_u64_u32`, `v_div_scale_f32`).
    Vop3b,
    /// SOPP branch (simm16 is a word offset).
    Branch,
    /// `s_waitcnt` counters.
    Waitcnt,
    /// SOPK compares / movk: `sdst, simm16` printed as hex.
    SopkImm,
    /// `s_getreg_b32 sdst, hwreg(...)` and friends.
    Hwreg,
    /// Memory: load (has vdst), store (has data), atomic (data, optional return).
    Load,
    Store,
    Atomic,
    /// DS with two offsets (`ds_write2_b32`, `ds_read2_b32`).
    Ds2,
    /// Global Wave Sync (`ds_gws_barrier v0 offset:1 gds`): a data VGPR when `w[1]` is 1.
    Gws,
}

/// Static description of one opcode: what it is, not what it does (the decoder pairs it
/// with its handler, `decode::Op`).
#[derive(Clone, Copy)]
pub struct OpInfo {
    pub name: &'static str,
    /// Widths in dwords of dst, src0, src1, src2 (for memory: vdst/data width, address width).
    pub w: [u8; 4],
    pub form: Form,
    /// Which inline-constant table applies to sources (16/32/64-bit floats).
    pub fk: FloatKind,
}

/// Inline float constants are encoded per operand size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatKind {
    F16,
    F32,
    F64,
    /// 64-bit integer operands: inline float constants are f64 patterns (as for F64), a
    /// 32-bit literal zero-extends (F64 puts it in the high half).
    I64,
}

/// Extra operand modes of VOP1/VOP2/VOPC words whose src0 is 249 (SDWA) or 250 (DPP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ext {
    None,
    Sdwa,
    Dpp,
}

/// One decoded instruction. Operand "codes" use the 9-bit source encoding everywhere:
/// 0..=127 scalar registers, 128..=255 constants/special, 256..=511 VGPRs (AGPRs are
/// 512..=767, a model-private extension used only by VOP3P/MAI and memory `acc` forms).
#[derive(Clone, Copy)]
pub struct Inst {
    pub enc: Enc,
    /// For `Enc::Vop3`: the family the opcode comes from (Vop1/Vop2/Vopc) or Vop3 itself.
    pub vop3_of: Enc,
    pub op: u16,
    pub info: OpInfo,
    /// Size in bytes (4, 8 or 12).
    pub len: u8,
    pub words: [u32; 3],
    /// Destination register code (VGPR dst as 256 + n; SGPR dst as n).
    pub dst: u16,
    /// Scalar destination of VOPC / VOP3b (carry-out, compare mask).
    pub sdst: u16,
    pub src: [u16; 3],
    /// The literal constant (source code 255), the DPP/SDWA control word, or the SOPK /
    /// `s_setreg_imm32` literal.
    pub lit: u32,
    pub ext: Ext,
    /// SOPP/SOPK simm16, SMEM/FLAT/DS/MUBUF offset (sign-extended where the encoding is).
    pub imm: i32,
    pub abs: u8,
    pub neg: u8,
    pub neg_hi: u8,
    pub opsel: u8,
    pub opsel_hi: u8,
    pub clamp: bool,
    pub omod: u8,
    /// No DPP/SDWA, op_sel, abs/neg or output modifier: what the handlers' fast paths test
    /// first, found once by the decoder (false where it was not asked, as in `Inst::new`).
    pub plain: bool,
    /// Memory cache bits as encoded: bit0 glc/sc0, bit1 slc/nt, bit2 sc1, bit3 dlc/nv,
    /// bit4 lds, bit5 acc (AGPR data), bit6 offen, bit7 idxen.
    pub mflags: u8,
    /// FLAT segment: 0 flat, 1 scratch, 2 global. For SMEM: soffset code or 0xffff. For
    /// MIMG: the unorm/da/a16/lwe/d16 bits (`exec::image::UNORM`...).
    pub seg: u16,
    /// FLAT saddr / MUBUF srsrc / SMEM sbase (SGPR code); 0x7f means off.
    pub saddr: u16,
    /// Second DS offset; MUBUF soffset code.
    pub imm2: u16,
    pub model: GfxModel,
}

impl Inst {
    pub(crate) fn new(enc: Enc, op: u16, info: OpInfo, model: GfxModel) -> Inst {
        Inst {
            enc,
            vop3_of: enc,
            op,
            info,
            len: 4,
            words: [0; 3],
            dst: 0,
            sdst: 0,
            src: [0; 3],
            lit: 0,
            ext: Ext::None,
            imm: 0,
            abs: 0,
            neg: 0,
            neg_hi: 0,
            opsel: 0,
            opsel_hi: 0,
            clamp: false,
            omod: 0,
            plain: false,
            mflags: 0,
            seg: 0,
            saddr: 0x7f,
            imm2: 0,
            model,
        }
    }

    /// The mnemonic as llvm-objdump prints it (with `_e32`/`_e64`/`_dpp`/`_sdwa` suffix).
    pub fn mnemonic(&self) -> String {
        let base = self.info.name;
        match self.enc {
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc => {
                let plain = matches!(self.info.form, Form::MadMk | Form::MadAk)
                    || (self.enc == Enc::Vop1 && (base == "v_nop" || self.info.form == Form::SDst));
                match self.ext {
                    Ext::Dpp => format!("{base}_dpp"),
                    Ext::Sdwa => format!("{base}_sdwa"),
                    Ext::None if plain => base.to_string(),
                    Ext::None => format!("{base}_e32"),
                }
            }
            Enc::Vop3 if self.vop3_of != Enc::Vop3 => format!("{base}_e64"),
            _ => base.to_string(),
        }
    }
}

/// True when `form` has a result register (for printing memory instructions).
pub fn returns(i: &Inst) -> bool {
    match i.info.form {
        Form::Load => true,
        // ds_read2 returns two values; ds_write2 returns nothing.
        Form::Ds2 => i.info.w[0] != 0,
        Form::Atomic => match i.enc {
            Enc::Ds => i.info.w[0] != 0,
            _ => i.mflags & 1 != 0,
        },
        _ => false,
    }
}
