//! Decoder for the GFX9-family encodings that gfx90a (CDNA2) and gfx942 (CDNA3) use.
//!
//! Decoding turns one to three instruction words into an [`Inst`]: the encoding family, the
//! opcode's [`OpInfo`] (mnemonic, operand widths, form) and the operand fields normalised
//! so that one handler serves an opcode in every encoding it has (VOP2 and its VOP3 form,
//! VOPC `_e32` writing VCC and `_e64` writing an SGPR pair, ...), and pairs it with the
//! [`Handler`] that runs it ([`Decoded`]). The interpreter decodes each instruction once per
//! dispatch and keeps the result in a cache keyed by its address.
//!
//! The opcode tables are `match`es on the opcode number (compiled to jump tables); an
//! opcode missing from a table is an unknown instruction. An opcode present with no handler
//! (`name as None` in its row) decodes and prints, and stops the dispatch with its name if
//! executed.
//!
//! Layering: the instruction type is `inst`, the semantics are `exec`; this module sits
//! above both, because an opcode table row names the handler of its opcode.

use crate::api::GfxModel;
use crate::exec::{ds, image, salu, smem, sopp, valu, vmem, Handler};
use crate::inst::{Enc, Ext, FloatKind, Form, Inst, OpInfo};

/// Why a word did not decode: the encoding family and opcode, for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub detail: String,
    pub words: [u32; 2],
}

/// One row of an opcode table: what the opcode is, and the handler that runs it (`None`:
/// it decodes and prints, and stops the dispatch with its name if executed).
#[derive(Clone, Copy)]
pub struct Op {
    pub info: OpInfo,
    pub exec: Option<Handler>,
}

/// A decoded instruction and the handler that runs it.
#[derive(Clone, Copy)]
pub struct Decoded {
    pub inst: Inst,
    pub exec: Option<Handler>,
}

const W1: [u8; 4] = [1, 1, 1, 1];
const W2: [u8; 4] = [2, 2, 2, 2];

/// Decodes the instruction at the start of `words`: callers pass up to three words (fewer
/// at the end of readable memory; a missing word needed by the instruction is an error).
pub fn decode(model: GfxModel, words: &[u32]) -> Result<Inst, DecodeError> {
    decode_for_exec(model, words).map(|d| d.inst)
}

/// [`decode`], with the handler that runs the instruction.
pub fn decode_for_exec(model: GfxModel, words: &[u32]) -> Result<Decoded, DecodeError> {
    // The handlers run their AVX2+FMA copies only once someone asked the CPU: ask before
    // handing one out.
    crate::exec::simd::host_has_avx2_fma();
    let w0 = *words.first().ok_or_else(|| DecodeError {
        detail: "no instruction word".into(),
        words: [0, 0],
    })?;
    let w1 = words.get(1).copied();
    let err = |detail: String| DecodeError {
        detail,
        words: [w0, w1.unwrap_or(0)],
    };
    let need1 = || w1.ok_or_else(|| err("instruction runs past readable code".into()));
    let Decoded { mut inst, exec } = if w0 >> 23 == 0x17d {
        decode_sop1(model, w0)
    } else if w0 >> 23 == 0x17e {
        decode_sopc(model, w0)
    } else if w0 >> 23 == 0x17f {
        decode_sopp(model, w0)
    } else if w0 >> 28 == 0xb {
        decode_sopk(model, w0)
    } else if w0 >> 30 == 0b10 {
        decode_sop2(model, w0)
    } else if w0 >> 31 == 0 {
        if w0 >> 25 == 0x3f {
            decode_vop1(model, w0)
        } else if w0 >> 25 == 0x3e {
            decode_vopc(model, w0)
        } else {
            decode_vop2(model, w0)
        }
    } else {
        match w0 >> 26 {
            0b110000 => decode_smem(model, w0, need1()?),
            0b110100 => {
                if w0 >> 23 == 0x1a7 {
                    decode_vop3p(model, w0, need1()?)
                } else {
                    decode_vop3(model, w0, need1()?)
                }
            }
            0b110110 => decode_ds(model, w0, need1()?),
            0b110111 => decode_flat(model, w0, need1()?),
            0b111000 => decode_mubuf(model, w0, need1()?),
            0b111010 => Err(format!("MTBUF opcode {}", (w0 >> 15) & 0xf)),
            0b110101 => Err("VINTRP (graphics interpolation)".into()),
            0b110001 => Err("EXP (graphics export)".into()),
            0b111100 => decode_mimg(model, w0, need1()?),
            other => Err(format!("unknown encoding (bits 31:26 = {other:#08b})")),
        }
    }
    .map_err(err)?;
    inst.words[0] = w0;
    // A literal (source code 255) or a DPP/SDWA control word follows 32-bit encodings.
    let lit_pos = inst.len as usize / 4;
    let needs_extra = match inst.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopc | Enc::Vop1 | Enc::Vop2 | Enc::Vopc => {
            inst.src.contains(&255)
                || matches!(inst.info.form, Form::MadMk | Form::MadAk)
                || inst.ext != Ext::None
        }
        Enc::Sopk => inst.op == 20,
        _ => false,
    };
    if inst.len == 8 {
        inst.words[1] = need1()?;
    }
    if needs_extra {
        let extra = *words
            .get(lit_pos)
            .ok_or_else(|| err("literal runs past readable code".into()))?;
        inst.words[lit_pos] = extra;
        inst.lit = extra;
        inst.len += 4;
        if inst.ext != Ext::None {
            apply_ext(&mut inst, extra);
        }
        let dpp_ctrl = (extra >> 8) & 0x1ff;
        if inst.ext == Ext::Dpp && !dpp_ctrl_defined(dpp_ctrl) {
            return Err(err(format!(
                "DPP control {dpp_ctrl:#x} is not a {} DPP control",
                model.processor()
            )));
        }
    }
    inst.plain = inst.ext == Ext::None
        && inst.opsel == 0
        && inst.abs | inst.neg | inst.neg_hi | inst.omod == 0
        && !inst.clamp;
    Ok(Decoded { inst, exec })
}

/// The DPP_CTRL values GFX9 defines (quad_perm, row shifts and rotates, wave shifts and
/// rotates, mirrors, broadcasts) and gfx90a/gfx942's row_newbcast (0x150..0x15f); the
/// others are reserved.
fn dpp_ctrl_defined(ctrl: u32) -> bool {
    matches!(
        ctrl,
        0x000..=0x0ff
            | 0x101..=0x10f
            | 0x111..=0x11f
            | 0x121..=0x12f
            | 0x130
            | 0x134
            | 0x138
            | 0x13c
            | 0x140..=0x143
            | 0x150..=0x15f
    )
}

fn apply_ext(inst: &mut Inst, extra: u32) {
    // The real src0 is a VGPR in the extra word; SDWA may select an SGPR (bit 23, s0 flag)
    // for src0 and bit 31 for src1 on GFX9.
    let s0 = (extra & 0xff) as u16;
    match inst.ext {
        Ext::Dpp => {
            inst.src[0] = 256 + s0;
            // DPP abs/neg bits: src0_neg 20, src0_abs 21, src1_neg 22, src1_abs 23.
            inst.neg = (((extra >> 20) & 1) | (((extra >> 22) & 1) << 1)) as u8;
            inst.abs = (((extra >> 21) & 1) | (((extra >> 23) & 1) << 1)) as u8;
        }
        Ext::Sdwa => {
            inst.src[0] = if extra & (1 << 23) != 0 { s0 } else { 256 + s0 };
            if extra & (1 << 31) != 0 && inst.enc != Enc::Vop1 {
                inst.src[1] &= 0xff;
            }
            inst.neg = (((extra >> 20) & 1) | (((extra >> 28) & 1) << 1)) as u8;
            inst.abs = (((extra >> 21) & 1) | (((extra >> 29) & 1) << 1)) as u8;
            if inst.enc == Enc::Vopc && extra & (1 << 15) != 0 {
                inst.sdst = ((extra >> 8) & 0x7f) as u16;
            }
        }
        Ext::None => {}
    }
}

/// An opcode table: `op => (name, widths[, form])` rows, matched on the opcode number.
///
/// A row names its opcode once, as an identifier: the mnemonic is the identifier's text and
/// the handler is the function of that name, so the two cannot disagree. `name as handler`
/// runs an opcode with another opcode's function (`s_wakeup as s_nop`, the loads that share
/// one access routine); `name as None` decodes and prints but has no semantics yet.
macro_rules! tab {
    ($($op:pat => ($name:ident $(as $run:tt)?, $w:expr $(, $form:ident)?)),* $(,)?) => {
        |op: u32| -> Option<Op> {
            match op {
                $($op => Some(Op {
                    info: OpInfo {
                        name: stringify!($name),
                        w: $w,
                        form: tab!(@form $($form)?),
                        fk: fk_of(stringify!($name)),
                    },
                    exec: tab!(@exec $name $($run)?),
                }),)*
                _ => None,
            }
        }
    };
    (@form) => { Form::Std };
    (@form $f:ident) => { Form::$f };
    (@exec $name:ident) => { Some($name) };
    (@exec $name:ident None) => { None };
    (@exec $name:ident $run:ident) => { Some($run) };
}

/// One row outside a table, for an opcode whose meaning depends on the model; its inline
/// float constants follow the name as in `tab!` (v_mov_b64 1.0 is the double 1.0).
macro_rules! row {
    ($name:ident, $w:expr, $form:ident) => {
        Op {
            info: OpInfo {
                name: stringify!($name),
                w: $w,
                form: Form::$form,
                fk: fk_of(stringify!($name)),
            },
            exec: Some($name),
        }
    };
}

/// Inline float constants follow the type of the operation's sources: the last type
/// token of its name (`v_cvt_pkrtz_f16_f32` reads f32 sources, `v_cvt_f64_i32` a 32-bit
/// integer whose float constants are f32 patterns). 64-bit integer operands take f64
/// patterns; 16-bit integer tokens leave the kind as it was.
const fn fk_of(name: &str) -> FloatKind {
    let b = name.as_bytes();
    let mut kind = FloatKind::F32;
    let mut i = 1;
    while i + 2 < b.len() {
        let token = b[i - 1] == b'_' && (i + 3 == b.len() || b[i + 3] == b'_');
        if token {
            let (t, x, y) = (b[i], b[i + 1], b[i + 2]);
            let float = t == b'f';
            let int = t == b'b' || t == b'u' || t == b'i';
            if float && x == b'1' && y == b'6' {
                kind = FloatKind::F16;
            } else if (float || int) && x == b'3' && y == b'2' {
                kind = FloatKind::F32;
            } else if float && x == b'6' && y == b'4' {
                kind = FloatKind::F64;
            } else if int && x == b'6' && y == b'4' {
                kind = FloatKind::I64;
            }
        }
        i += 1;
    }
    kind
}

fn missing(enc: Enc, op: u32, model: GfxModel) -> String {
    format!(
        "{} opcode {op} ({op:#x}) is not a {} instruction this decoder knows",
        enc.name(),
        model.processor()
    )
}

// ---------------------------------------------------------------- scalar ALU

fn sop2_table(op: u32) -> Option<Op> {
    use salu::*;
    let t = tab! {
        0 => (s_add_u32, W1),
        1 => (s_sub_u32, W1),
        2 => (s_add_i32, W1),
        3 => (s_sub_i32, W1),
        4 => (s_addc_u32, W1),
        5 => (s_subb_u32, W1),
        6 => (s_min_i32, W1),
        7 => (s_min_u32, W1),
        8 => (s_max_i32, W1),
        9 => (s_max_u32, W1),
        10 => (s_cselect_b32, W1),
        11 => (s_cselect_b64, W2),
        12 => (s_and_b32, W1),
        13 => (s_and_b64, W2),
        14 => (s_or_b32, W1),
        15 => (s_or_b64, W2),
        16 => (s_xor_b32, W1),
        17 => (s_xor_b64, W2),
        18 => (s_andn2_b32, W1),
        19 => (s_andn2_b64, W2),
        20 => (s_orn2_b32, W1),
        21 => (s_orn2_b64, W2),
        22 => (s_nand_b32, W1),
        23 => (s_nand_b64, W2),
        24 => (s_nor_b32, W1),
        25 => (s_nor_b64, W2),
        26 => (s_xnor_b32, W1),
        27 => (s_xnor_b64, W2),
        28 => (s_lshl_b32, W1),
        29 => (s_lshl_b64, [2, 2, 1, 0]),
        30 => (s_lshr_b32, W1),
        31 => (s_lshr_b64, [2, 2, 1, 0]),
        32 => (s_ashr_i32, W1),
        33 => (s_ashr_i64, [2, 2, 1, 0]),
        34 => (s_bfm_b32, W1),
        35 => (s_bfm_b64, [2, 1, 1, 0]),
        36 => (s_mul_i32, W1),
        37 => (s_bfe_u32, W1),
        38 => (s_bfe_i32, W1),
        39 => (s_bfe_u64, [2, 2, 1, 0]),
        40 => (s_bfe_i64, [2, 2, 1, 0]),
        42 => (s_absdiff_i32, W1),
        44 => (s_mul_hi_u32, W1),
        45 => (s_mul_hi_i32, W1),
        46 => (s_lshl1_add_u32, W1),
        47 => (s_lshl2_add_u32, W1),
        48 => (s_lshl3_add_u32, W1),
        49 => (s_lshl4_add_u32, W1),
        50 => (s_pack_ll_b32_b16, W1),
        51 => (s_pack_lh_b32_b16, W1),
        52 => (s_pack_hh_b32_b16, W1),
    };
    t(op)
}

fn decode_sop2(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 23) & 0x7f;
    let Op { info, exec } = sop2_table(op).ok_or_else(|| missing(Enc::Sop2, op, model))?;
    let mut i = Inst::new(Enc::Sop2, op as u16, info, model);
    i.dst = ((w >> 16) & 0x7f) as u16;
    i.src[0] = (w & 0xff) as u16;
    i.src[1] = ((w >> 8) & 0xff) as u16;
    Ok(Decoded { inst: i, exec })
}

fn sop1_table(op: u32) -> Option<Op> {
    use salu::*;
    let t = tab! {
        0 => (s_mov_b32, W1),
        1 => (s_mov_b64, W2),
        2 => (s_cmov_b32, W1),
        3 => (s_cmov_b64, W2),
        4 => (s_not_b32, W1),
        5 => (s_not_b64, W2),
        6 => (s_wqm_b32 as None, W1),
        7 => (s_wqm_b64 as None, W2),
        8 => (s_brev_b32, W1),
        9 => (s_brev_b64, W2),
        10 => (s_bcnt0_i32_b32, W1),
        11 => (s_bcnt0_i32_b64, [1, 2, 0, 0]),
        12 => (s_bcnt1_i32_b32, W1),
        13 => (s_bcnt1_i32_b64, [1, 2, 0, 0]),
        14 => (s_ff0_i32_b32, W1),
        15 => (s_ff0_i32_b64, [1, 2, 0, 0]),
        16 => (s_ff1_i32_b32, W1),
        17 => (s_ff1_i32_b64, [1, 2, 0, 0]),
        18 => (s_flbit_i32_b32, W1),
        19 => (s_flbit_i32_b64, [1, 2, 0, 0]),
        20 => (s_flbit_i32, W1),
        21 => (s_flbit_i32_i64, [1, 2, 0, 0]),
        22 => (s_sext_i32_i8, W1),
        23 => (s_sext_i32_i16, W1),
        24 => (s_bitset0_b32, W1),
        25 => (s_bitset0_b64, [2, 1, 0, 0]),
        26 => (s_bitset1_b32, W1),
        27 => (s_bitset1_b64, [2, 1, 0, 0]),
        28 => (s_getpc_b64, W2, DstOnly),
        29 => (s_setpc_b64, W2, SrcOnly),
        30 => (s_swappc_b64, W2),
        31 => (s_rfe_b64 as None, W2, SrcOnly),
        32 => (s_and_saveexec_b64, W2),
        33 => (s_or_saveexec_b64, W2),
        34 => (s_xor_saveexec_b64, W2),
        35 => (s_andn2_saveexec_b64, W2),
        36 => (s_orn2_saveexec_b64, W2),
        37 => (s_nand_saveexec_b64, W2),
        38 => (s_nor_saveexec_b64, W2),
        39 => (s_xnor_saveexec_b64, W2),
        40 => (s_quadmask_b32 as None, W1),
        41 => (s_quadmask_b64 as None, W2),
        42 => (s_movrels_b32 as None, W1),
        43 => (s_movrels_b64 as None, W2),
        44 => (s_movreld_b32 as None, W1),
        45 => (s_movreld_b64 as None, W2),
        48 => (s_abs_i32, W1),
        51 => (s_andn1_saveexec_b64, W2),
        52 => (s_orn1_saveexec_b64, W2),
        53 => (s_andn1_wrexec_b64, W2),
        54 => (s_andn2_wrexec_b64, W2),
        55 => (s_bitreplicate_b64_b32 as None, [2, 1, 0, 0]),
    };
    t(op)
}

fn decode_sop1(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 8) & 0xff;
    let Op { info, exec } = sop1_table(op).ok_or_else(|| missing(Enc::Sop1, op, model))?;
    let mut i = Inst::new(Enc::Sop1, op as u16, info, model);
    i.dst = ((w >> 16) & 0x7f) as u16;
    i.src[0] = (w & 0xff) as u16;
    if info.form == Form::DstOnly {
        i.src[0] = 0;
    }
    Ok(Decoded { inst: i, exec })
}

fn sopc_table(op: u32) -> Option<Op> {
    use salu::*;
    let t = tab! {
        0 => (s_cmp_eq_i32, W1),
        1 => (s_cmp_lg_i32, W1),
        2 => (s_cmp_gt_i32, W1),
        3 => (s_cmp_ge_i32, W1),
        4 => (s_cmp_lt_i32, W1),
        5 => (s_cmp_le_i32, W1),
        6 => (s_cmp_eq_u32, W1),
        7 => (s_cmp_lg_u32, W1),
        8 => (s_cmp_gt_u32, W1),
        9 => (s_cmp_ge_u32, W1),
        10 => (s_cmp_lt_u32, W1),
        11 => (s_cmp_le_u32, W1),
        12 => (s_bitcmp0_b32, W1),
        13 => (s_bitcmp1_b32, W1),
        14 => (s_bitcmp0_b64, [0, 2, 1, 0]),
        15 => (s_bitcmp1_b64, [0, 2, 1, 0]),
        16 => (s_setvskip as None, W1),
        18 => (s_cmp_eq_u64, W2),
        19 => (s_cmp_lg_u64, W2),
    };
    t(op)
}

fn decode_sopc(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 16) & 0x7f;
    let Op { info, exec } = sopc_table(op).ok_or_else(|| missing(Enc::Sopc, op, model))?;
    let mut i = Inst::new(Enc::Sopc, op as u16, info, model);
    i.src[0] = (w & 0xff) as u16;
    i.src[1] = ((w >> 8) & 0xff) as u16;
    Ok(Decoded { inst: i, exec })
}

fn sopk_table(op: u32) -> Option<Op> {
    use salu::*;
    let t = tab! {
        0 => (s_movk_i32, W1, SopkImm),
        1 => (s_cmovk_i32, W1, SopkImm),
        2 => (s_cmpk_eq_i32, W1, SopkImm),
        3 => (s_cmpk_lg_i32, W1, SopkImm),
        4 => (s_cmpk_gt_i32, W1, SopkImm),
        5 => (s_cmpk_ge_i32, W1, SopkImm),
        6 => (s_cmpk_lt_i32, W1, SopkImm),
        7 => (s_cmpk_le_i32, W1, SopkImm),
        8 => (s_cmpk_eq_u32, W1, SopkImm),
        9 => (s_cmpk_lg_u32, W1, SopkImm),
        10 => (s_cmpk_gt_u32, W1, SopkImm),
        11 => (s_cmpk_ge_u32, W1, SopkImm),
        12 => (s_cmpk_lt_u32, W1, SopkImm),
        13 => (s_cmpk_le_u32, W1, SopkImm),
        14 => (s_addk_i32, W1, SopkImm),
        15 => (s_mulk_i32, W1, SopkImm),
        17 => (s_getreg_b32, W1, Hwreg),
        18 => (s_setreg_b32, W1, Hwreg),
        20 => (s_setreg_imm32_b32, W1, Hwreg),
        21 => (s_call_b64, W2, Branch),
    };
    t(op)
}

fn decode_sopk(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 23) & 0x1f;
    let Op { info, exec } = sopk_table(op).ok_or_else(|| missing(Enc::Sopk, op, model))?;
    let mut i = Inst::new(Enc::Sopk, op as u16, info, model);
    i.dst = ((w >> 16) & 0x7f) as u16;
    i.imm = (w & 0xffff) as i16 as i32;
    Ok(Decoded { inst: i, exec })
}

fn sopp_table(op: u32) -> Option<Op> {
    use sopp::*;
    let t = tab! {
        0 => (s_nop, W1),
        1 => (s_endpgm, W1, None),
        2 => (s_branch, W1, Branch),
        3 => (s_wakeup as s_nop, W1, None),
        4 => (s_cbranch_scc0, W1, Branch),
        5 => (s_cbranch_scc1, W1, Branch),
        6 => (s_cbranch_vccz, W1, Branch),
        7 => (s_cbranch_vccnz, W1, Branch),
        8 => (s_cbranch_execz, W1, Branch),
        9 => (s_cbranch_execnz, W1, Branch),
        10 => (s_barrier, W1, None),
        11 => (s_setkill as s_nop, W1),
        12 => (s_waitcnt as s_nop, W1, Waitcnt),
        13 => (s_sethalt, W1),
        14 => (s_sleep, W1),
        15 => (s_setprio as s_nop, W1),
        16 => (s_sendmsg, W1),
        17 => (s_sendmsghalt as s_sethalt, W1),
        18 => (s_trap, W1),
        19 => (s_icache_inv as s_nop, W1, None),
        20 => (s_incperflevel as s_nop, W1),
        21 => (s_decperflevel as s_nop, W1),
        22 => (s_ttracedata as s_nop, W1, None),
        23 => (s_cbranch_cdbgsys as None, W1, Branch),
        24 => (s_cbranch_cdbguser as None, W1, Branch),
        25 => (s_cbranch_cdbgsys_or_user as None, W1, Branch),
        26 => (s_cbranch_cdbgsys_and_user as None, W1, Branch),
        27 => (s_endpgm_saved as None, W1, None),
        28 => (s_set_gpr_idx_off as None, W1, None),
        29 => (s_set_gpr_idx_mode as None, W1),
    };
    t(op)
}

fn decode_sopp(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 16) & 0x7f;
    let Op { info, exec } = sopp_table(op).ok_or_else(|| missing(Enc::Sopp, op, model))?;
    let mut i = Inst::new(Enc::Sopp, op as u16, info, model);
    i.imm = (w & 0xffff) as i16 as i32;
    Ok(Decoded { inst: i, exec })
}

// ---------------------------------------------------------------- scalar memory

fn decode_smem(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use smem::*;
    let op = (w0 >> 18) & 0xff;
    let t = tab! {
        0 => (s_load_dword as s_load, [1, 2, 0, 0], Load),
        1 => (s_load_dwordx2 as s_load, [2, 2, 0, 0], Load),
        2 => (s_load_dwordx4 as s_load, [4, 2, 0, 0], Load),
        3 => (s_load_dwordx8 as s_load, [8, 2, 0, 0], Load),
        4 => (s_load_dwordx16 as s_load, [16, 2, 0, 0], Load),
        5 => (s_scratch_load_dword as None, [1, 2, 0, 0], Load),
        6 => (s_scratch_load_dwordx2 as None, [2, 2, 0, 0], Load),
        7 => (s_scratch_load_dwordx4 as None, [4, 2, 0, 0], Load),
        8 => (s_buffer_load_dword as s_buffer_load, [1, 4, 0, 0], Load),
        9 => (s_buffer_load_dwordx2 as s_buffer_load, [2, 4, 0, 0], Load),
        10 => (s_buffer_load_dwordx4 as s_buffer_load, [4, 4, 0, 0], Load),
        11 => (s_buffer_load_dwordx8 as s_buffer_load, [8, 4, 0, 0], Load),
        12 => (s_buffer_load_dwordx16 as s_buffer_load, [16, 4, 0, 0], Load),
        16 => (s_store_dword as s_store, [1, 2, 0, 0], Store),
        17 => (s_store_dwordx2 as s_store, [2, 2, 0, 0], Store),
        18 => (s_store_dwordx4 as s_store, [4, 2, 0, 0], Store),
        32 => (s_dcache_inv as s_cache_nop, [0, 0, 0, 0], None),
        33 => (s_dcache_wb as s_cache_nop, [0, 0, 0, 0], None),
        34 => (s_dcache_inv_vol as s_cache_nop, [0, 0, 0, 0], None),
        35 => (s_dcache_wb_vol as s_cache_nop, [0, 0, 0, 0], None),
        36 => (s_memtime, [2, 0, 0, 0], DstOnly),
        37 => (s_memrealtime, [2, 0, 0, 0], DstOnly),
    };
    let Op { info, exec } = t(op).ok_or_else(|| missing(Enc::Smem, op, model))?;
    let mut i = Inst::new(Enc::Smem, op as u16, info, model);
    i.len = 8;
    i.saddr = ((w0 & 0x3f) << 1) as u16;
    i.dst = ((w0 >> 6) & 0x7f) as u16;
    i.mflags = (((w0 >> 16) & 1) | (((w0 >> 15) & 1) << 3)) as u8;
    let imm = (w0 >> 17) & 1 != 0;
    let soe = (w0 >> 14) & 1 != 0;
    i.seg = 0xffff;
    if imm {
        // 21-bit signed byte offset.
        i.imm = (((w1 & 0x1f_ffff) << 11) as i32) >> 11;
        if soe {
            i.seg = ((w1 >> 25) & 0x7f) as u16;
        }
    } else if soe {
        i.seg = ((w1 >> 25) & 0x7f) as u16;
    } else {
        i.seg = (w1 & 0xff) as u16;
    }
    Ok(Decoded { inst: i, exec })
}

// ---------------------------------------------------------------- vector ALU

/// VOP2 opcodes (also VOP3 0x100 + op).
fn vop2_table(op: u32, model: GfxModel) -> Option<Op> {
    use valu::*;
    let g942 = model == GfxModel::Gfx942;
    match op {
        22 if g942 => return None,
        23 if g942 => return Some(row!(v_fmamk_f32, W1, MadMk)),
        24 if g942 => return Some(row!(v_fmaak_f32, W1, MadAk)),
        _ => {}
    }
    let t = tab! {
        0 => (v_cndmask_b32, W1, Cndmask),
        1 => (v_add_f32, W1),
        2 => (v_sub_f32, W1),
        3 => (v_subrev_f32, W1),
        4 => (v_fmac_f64, W2),
        5 => (v_mul_f32, W1),
        6 => (v_mul_i32_i24, W1),
        7 => (v_mul_hi_i32_i24, W1),
        8 => (v_mul_u32_u24, W1),
        9 => (v_mul_hi_u32_u24, W1),
        10 => (v_min_f32, W1),
        11 => (v_max_f32, W1),
        12 => (v_min_i32, W1),
        13 => (v_max_i32, W1),
        14 => (v_min_u32, W1),
        15 => (v_max_u32, W1),
        16 => (v_lshrrev_b32, W1),
        17 => (v_ashrrev_i32, W1),
        18 => (v_lshlrev_b32, W1),
        19 => (v_and_b32, W1),
        20 => (v_or_b32, W1),
        21 => (v_xor_b32, W1),
        22 => (v_mac_f32, W1),
        23 => (v_madmk_f32, W1, MadMk),
        24 => (v_madak_f32, W1, MadAk),
        25 => (v_add_co_u32, W1, CarryOut),
        26 => (v_sub_co_u32, W1, CarryOut),
        27 => (v_subrev_co_u32, W1, CarryOut),
        28 => (v_addc_co_u32, W1, CarryInOut),
        29 => (v_subb_co_u32, W1, CarryInOut),
        30 => (v_subbrev_co_u32, W1, CarryInOut),
        31 => (v_add_f16, W1),
        32 => (v_sub_f16, W1),
        33 => (v_subrev_f16, W1),
        34 => (v_mul_f16, W1),
        35 => (v_mac_f16 as None, W1),
        36 => (v_madmk_f16 as None, W1, MadMk),
        37 => (v_madak_f16 as None, W1, MadAk),
        38 => (v_add_u16, W1),
        39 => (v_sub_u16, W1),
        40 => (v_subrev_u16, W1),
        41 => (v_mul_lo_u16, W1),
        42 => (v_lshlrev_b16, W1),
        43 => (v_lshrrev_b16, W1),
        44 => (v_ashrrev_i16, W1),
        45 => (v_max_f16, W1),
        46 => (v_min_f16, W1),
        47 => (v_max_u16, W1),
        48 => (v_max_i16, W1),
        49 => (v_min_u16, W1),
        50 => (v_min_i16, W1),
        51 => (v_ldexp_f16 as None, W1),
        52 => (v_add_u32, W1),
        53 => (v_sub_u32, W1),
        54 => (v_subrev_u32, W1),
        55 => (v_dot2c_f32_f16, W1),
        56 => (v_dot2c_i32_i16, W1),
        57 => (v_dot4c_i32_i8, W1),
        58 => (v_dot8c_i32_i4, W1),
        59 => (v_fmac_f32, W1),
        60 => (v_pk_fmac_f16 as None, W1),
        61 => (v_xnor_b32, W1),
    };
    t(op)
}

fn decode_vop2(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 25) & 0x3f;
    let Op { info, exec } = vop2_table(op, model).ok_or_else(|| missing(Enc::Vop2, op, model))?;
    let mut i = Inst::new(Enc::Vop2, op as u16, info, model);
    i.dst = 256 + ((w >> 17) & 0xff) as u16;
    i.src[0] = (w & 0x1ff) as u16;
    i.src[1] = 256 + ((w >> 9) & 0xff) as u16;
    i.ext = ext_of(i.src[0]);
    // Implicit VCC operands of the 32-bit forms, made explicit so VOP3 shares handlers.
    match info.form {
        Form::CarryOut => i.sdst = 106,
        Form::CarryInOut => {
            i.sdst = 106;
            i.src[2] = 106;
        }
        Form::Cndmask => i.src[2] = 106,
        _ if vop2_accumulates(op) => i.src[2] = i.dst,
        Form::MadMk | Form::MadAk => {}
        _ => {}
    }
    Ok(Decoded { inst: i, exec })
}

/// VOP2 v_fmac_f64, v_mac_f32, v_fmac_f32: the accumulator is the destination, in the
/// VOP3 form too (whose SRC2 field is unused: LLVM encodes it as 0, which would read s0).
fn vop2_accumulates(op: u32) -> bool {
    matches!(op, 4 | 22 | 59)
}

fn ext_of(src0: u16) -> Ext {
    match src0 {
        249 => Ext::Sdwa,
        250 => Ext::Dpp,
        _ => Ext::None,
    }
}

/// VOP1 opcodes (also VOP3 0x140 + op).
fn vop1_table(op: u32, model: GfxModel) -> Option<Op> {
    use valu::*;
    let g942 = model == GfxModel::Gfx942;
    match op {
        56 if g942 => return Some(row!(v_mov_b64, W2, Std)),
        // fp8/bf8 to f32 (gfx940 family).
        0x54 if g942 => return Some(row!(v_cvt_f32_fp8, W1, Std)),
        0x55 if g942 => return Some(row!(v_cvt_f32_bf8, W1, Std)),
        0x56 if g942 => return Some(row!(v_cvt_pk_f32_fp8, [2, 1, 0, 0], Std)),
        0x57 if g942 => return Some(row!(v_cvt_pk_f32_bf8, [2, 1, 0, 0], Std)),
        _ => {}
    }
    let t = tab! {
        0 => (v_nop, W1, None),
        1 => (v_mov_b32, W1),
        2 => (v_readfirstlane_b32, W1, SDst),
        3 => (v_cvt_i32_f64, [1, 2, 0, 0]),
        4 => (v_cvt_f64_i32, [2, 1, 0, 0]),
        5 => (v_cvt_f32_i32, W1),
        6 => (v_cvt_f32_u32, W1),
        7 => (v_cvt_u32_f32, W1),
        8 => (v_cvt_i32_f32, W1),
        10 => (v_cvt_f16_f32, W1),
        11 => (v_cvt_f32_f16, W1),
        12 => (v_cvt_rpi_i32_f32, W1),
        13 => (v_cvt_flr_i32_f32, W1),
        14 => (v_cvt_off_f32_i4 as None, W1),
        15 => (v_cvt_f32_f64, [1, 2, 0, 0]),
        16 => (v_cvt_f64_f32, [2, 1, 0, 0]),
        17 => (v_cvt_f32_ubyte0, W1),
        18 => (v_cvt_f32_ubyte1, W1),
        19 => (v_cvt_f32_ubyte2, W1),
        20 => (v_cvt_f32_ubyte3, W1),
        21 => (v_cvt_u32_f64, [1, 2, 0, 0]),
        22 => (v_cvt_f64_u32, [2, 1, 0, 0]),
        23 => (v_trunc_f64, W2),
        24 => (v_ceil_f64, W2),
        25 => (v_rndne_f64, W2),
        26 => (v_floor_f64, W2),
        27 => (v_fract_f32, W1),
        28 => (v_trunc_f32, W1),
        29 => (v_ceil_f32, W1),
        30 => (v_rndne_f32, W1),
        31 => (v_floor_f32, W1),
        32 => (v_exp_f32, W1),
        33 => (v_log_f32, W1),
        34 => (v_rcp_f32, W1),
        35 => (v_rcp_iflag_f32 as v_rcp_f32, W1),
        36 => (v_rsq_f32, W1),
        37 => (v_rcp_f64, W2),
        38 => (v_rsq_f64, W2),
        39 => (v_sqrt_f32, W1),
        40 => (v_sqrt_f64, W2),
        41 => (v_sin_f32, W1),
        42 => (v_cos_f32, W1),
        43 => (v_not_b32, W1),
        44 => (v_bfrev_b32, W1),
        45 => (v_ffbh_u32, W1),
        46 => (v_ffbl_b32, W1),
        47 => (v_ffbh_i32, W1),
        48 => (v_frexp_exp_i32_f64, [1, 2, 0, 0]),
        49 => (v_frexp_mant_f64, W2),
        50 => (v_fract_f64, W2),
        51 => (v_frexp_exp_i32_f32, W1),
        52 => (v_frexp_mant_f32, W1),
        53 => (v_clrexcp as v_nop, W1, None),
        57 => (v_cvt_f16_u16, W1),
        58 => (v_cvt_f16_i16, W1),
        59 => (v_cvt_u16_f16, W1),
        60 => (v_cvt_i16_f16, W1),
        61 => (v_rcp_f16, W1),
        62 => (v_sqrt_f16, W1),
        63 => (v_rsq_f16, W1),
        64 => (v_log_f16, W1),
        65 => (v_exp_f16, W1),
        66 => (v_frexp_mant_f16 as None, W1),
        67 => (v_frexp_exp_i16_f16 as None, W1),
        68 => (v_floor_f16, W1),
        69 => (v_ceil_f16, W1),
        70 => (v_trunc_f16, W1),
        71 => (v_rndne_f16, W1),
        72 => (v_fract_f16 as None, W1),
        73 => (v_sin_f16 as None, W1),
        74 => (v_cos_f16 as None, W1),
        75 => (v_exp_legacy_f32 as None, W1),
        76 => (v_log_legacy_f32 as None, W1),
        77 => (v_cvt_norm_i16_f16 as None, W1),
        78 => (v_cvt_norm_u16_f16 as None, W1),
        79 => (v_sat_pk_u8_i16 as None, W1),
        81 => (v_swap_b32, W1),
        82 => (v_accvgpr_mov_b32 as v_mov_b32, W1),
    };
    t(op)
}

fn decode_vop1(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 9) & 0xff;
    let Op { info, exec } = vop1_table(op, model).ok_or_else(|| missing(Enc::Vop1, op, model))?;
    let mut i = Inst::new(Enc::Vop1, op as u16, info, model);
    i.dst = 256 + ((w >> 17) & 0xff) as u16;
    if info.form == Form::SDst {
        i.dst = ((w >> 17) & 0xff) as u16;
    }
    i.src[0] = (w & 0x1ff) as u16;
    if op == 82 {
        // v_accvgpr_mov_b32 moves between AGPRs.
        i.dst = 512 + ((w >> 17) & 0xff) as u16;
        i.src[0] = 512 + (w & 0xff) as u16;
    }
    i.ext = ext_of(i.src[0]);
    Ok(Decoded { inst: i, exec })
}

/// VOPC opcodes (also VOP3 0x000 + op).
fn vopc_table(op: u32) -> Option<Op> {
    const F16: [&str; 16] = [
        "v_cmp_f_f16",
        "v_cmp_lt_f16",
        "v_cmp_eq_f16",
        "v_cmp_le_f16",
        "v_cmp_gt_f16",
        "v_cmp_lg_f16",
        "v_cmp_ge_f16",
        "v_cmp_o_f16",
        "v_cmp_u_f16",
        "v_cmp_nge_f16",
        "v_cmp_nlg_f16",
        "v_cmp_ngt_f16",
        "v_cmp_nle_f16",
        "v_cmp_neq_f16",
        "v_cmp_nlt_f16",
        "v_cmp_tru_f16",
    ];
    const F16X: [&str; 16] = [
        "v_cmpx_f_f16",
        "v_cmpx_lt_f16",
        "v_cmpx_eq_f16",
        "v_cmpx_le_f16",
        "v_cmpx_gt_f16",
        "v_cmpx_lg_f16",
        "v_cmpx_ge_f16",
        "v_cmpx_o_f16",
        "v_cmpx_u_f16",
        "v_cmpx_nge_f16",
        "v_cmpx_nlg_f16",
        "v_cmpx_ngt_f16",
        "v_cmpx_nle_f16",
        "v_cmpx_neq_f16",
        "v_cmpx_nlt_f16",
        "v_cmpx_tru_f16",
    ];
    const F32: [&str; 16] = [
        "v_cmp_f_f32",
        "v_cmp_lt_f32",
        "v_cmp_eq_f32",
        "v_cmp_le_f32",
        "v_cmp_gt_f32",
        "v_cmp_lg_f32",
        "v_cmp_ge_f32",
        "v_cmp_o_f32",
        "v_cmp_u_f32",
        "v_cmp_nge_f32",
        "v_cmp_nlg_f32",
        "v_cmp_ngt_f32",
        "v_cmp_nle_f32",
        "v_cmp_neq_f32",
        "v_cmp_nlt_f32",
        "v_cmp_tru_f32",
    ];
    const F32X: [&str; 16] = [
        "v_cmpx_f_f32",
        "v_cmpx_lt_f32",
        "v_cmpx_eq_f32",
        "v_cmpx_le_f32",
        "v_cmpx_gt_f32",
        "v_cmpx_lg_f32",
        "v_cmpx_ge_f32",
        "v_cmpx_o_f32",
        "v_cmpx_u_f32",
        "v_cmpx_nge_f32",
        "v_cmpx_nlg_f32",
        "v_cmpx_ngt_f32",
        "v_cmpx_nle_f32",
        "v_cmpx_neq_f32",
        "v_cmpx_nlt_f32",
        "v_cmpx_tru_f32",
    ];
    const F64: [&str; 16] = [
        "v_cmp_f_f64",
        "v_cmp_lt_f64",
        "v_cmp_eq_f64",
        "v_cmp_le_f64",
        "v_cmp_gt_f64",
        "v_cmp_lg_f64",
        "v_cmp_ge_f64",
        "v_cmp_o_f64",
        "v_cmp_u_f64",
        "v_cmp_nge_f64",
        "v_cmp_nlg_f64",
        "v_cmp_ngt_f64",
        "v_cmp_nle_f64",
        "v_cmp_neq_f64",
        "v_cmp_nlt_f64",
        "v_cmp_tru_f64",
    ];
    const F64X: [&str; 16] = [
        "v_cmpx_f_f64",
        "v_cmpx_lt_f64",
        "v_cmpx_eq_f64",
        "v_cmpx_le_f64",
        "v_cmpx_gt_f64",
        "v_cmpx_lg_f64",
        "v_cmpx_ge_f64",
        "v_cmpx_o_f64",
        "v_cmpx_u_f64",
        "v_cmpx_nge_f64",
        "v_cmpx_nlg_f64",
        "v_cmpx_ngt_f64",
        "v_cmpx_nle_f64",
        "v_cmpx_neq_f64",
        "v_cmpx_nlt_f64",
        "v_cmpx_tru_f64",
    ];
    const INT: [[&str; 8]; 16] = [
        [
            "v_cmp_f_i16",
            "v_cmp_lt_i16",
            "v_cmp_eq_i16",
            "v_cmp_le_i16",
            "v_cmp_gt_i16",
            "v_cmp_ne_i16",
            "v_cmp_ge_i16",
            "v_cmp_t_i16",
        ],
        [
            "v_cmp_f_u16",
            "v_cmp_lt_u16",
            "v_cmp_eq_u16",
            "v_cmp_le_u16",
            "v_cmp_gt_u16",
            "v_cmp_ne_u16",
            "v_cmp_ge_u16",
            "v_cmp_t_u16",
        ],
        [
            "v_cmpx_f_i16",
            "v_cmpx_lt_i16",
            "v_cmpx_eq_i16",
            "v_cmpx_le_i16",
            "v_cmpx_gt_i16",
            "v_cmpx_ne_i16",
            "v_cmpx_ge_i16",
            "v_cmpx_t_i16",
        ],
        [
            "v_cmpx_f_u16",
            "v_cmpx_lt_u16",
            "v_cmpx_eq_u16",
            "v_cmpx_le_u16",
            "v_cmpx_gt_u16",
            "v_cmpx_ne_u16",
            "v_cmpx_ge_u16",
            "v_cmpx_t_u16",
        ],
        [
            "v_cmp_f_i32",
            "v_cmp_lt_i32",
            "v_cmp_eq_i32",
            "v_cmp_le_i32",
            "v_cmp_gt_i32",
            "v_cmp_ne_i32",
            "v_cmp_ge_i32",
            "v_cmp_t_i32",
        ],
        [
            "v_cmp_f_u32",
            "v_cmp_lt_u32",
            "v_cmp_eq_u32",
            "v_cmp_le_u32",
            "v_cmp_gt_u32",
            "v_cmp_ne_u32",
            "v_cmp_ge_u32",
            "v_cmp_t_u32",
        ],
        [
            "v_cmpx_f_i32",
            "v_cmpx_lt_i32",
            "v_cmpx_eq_i32",
            "v_cmpx_le_i32",
            "v_cmpx_gt_i32",
            "v_cmpx_ne_i32",
            "v_cmpx_ge_i32",
            "v_cmpx_t_i32",
        ],
        [
            "v_cmpx_f_u32",
            "v_cmpx_lt_u32",
            "v_cmpx_eq_u32",
            "v_cmpx_le_u32",
            "v_cmpx_gt_u32",
            "v_cmpx_ne_u32",
            "v_cmpx_ge_u32",
            "v_cmpx_t_u32",
        ],
        [
            "v_cmp_f_i64",
            "v_cmp_lt_i64",
            "v_cmp_eq_i64",
            "v_cmp_le_i64",
            "v_cmp_gt_i64",
            "v_cmp_ne_i64",
            "v_cmp_ge_i64",
            "v_cmp_t_i64",
        ],
        [
            "v_cmp_f_u64",
            "v_cmp_lt_u64",
            "v_cmp_eq_u64",
            "v_cmp_le_u64",
            "v_cmp_gt_u64",
            "v_cmp_ne_u64",
            "v_cmp_ge_u64",
            "v_cmp_t_u64",
        ],
        [
            "v_cmpx_f_i64",
            "v_cmpx_lt_i64",
            "v_cmpx_eq_i64",
            "v_cmpx_le_i64",
            "v_cmpx_gt_i64",
            "v_cmpx_ne_i64",
            "v_cmpx_ge_i64",
            "v_cmpx_t_i64",
        ],
        [
            "v_cmpx_f_u64",
            "v_cmpx_lt_u64",
            "v_cmpx_eq_u64",
            "v_cmpx_le_u64",
            "v_cmpx_gt_u64",
            "v_cmpx_ne_u64",
            "v_cmpx_ge_u64",
            "v_cmpx_t_u64",
        ],
        [""; 8],
        [""; 8],
        [""; 8],
        [""; 8],
    ];
    // The common compares have a handler each (the type and condition constants in it).
    let h: Handler = match op {
        0x40..=0x4f => valu::CMP_F32[(op & 15) as usize],
        0xc0..=0xc7 => valu::CMP_I32[(op & 7) as usize],
        0xc8..=0xcf => valu::CMP_U32[(op & 7) as usize],
        _ => valu::v_cmp,
    };
    let (name, w, fk) = match op {
        0x10 => ("v_cmp_class_f32", W1, FloatKind::F32),
        0x11 => ("v_cmpx_class_f32", W1, FloatKind::F32),
        0x12 => ("v_cmp_class_f64", [1, 2, 1, 0], FloatKind::F64),
        0x13 => ("v_cmpx_class_f64", [1, 2, 1, 0], FloatKind::F64),
        0x14 => ("v_cmp_class_f16", W1, FloatKind::F16),
        0x15 => ("v_cmpx_class_f16", W1, FloatKind::F16),
        0x20..=0x2f => (F16[(op & 15) as usize], W1, FloatKind::F16),
        0x30..=0x3f => (F16X[(op & 15) as usize], W1, FloatKind::F16),
        0x40..=0x4f => (F32[(op & 15) as usize], W1, FloatKind::F32),
        0x50..=0x5f => (F32X[(op & 15) as usize], W1, FloatKind::F32),
        0x60..=0x6f => (F64[(op & 15) as usize], [1, 2, 2, 0], FloatKind::F64),
        0x70..=0x7f => (F64X[(op & 15) as usize], [1, 2, 2, 0], FloatKind::F64),
        0xa0..=0xff => {
            let name = INT[((op - 0xa0) >> 3) as usize][(op & 7) as usize];
            let w = if op >= 0xe0 { [1, 2, 2, 0] } else { W1 };
            (
                name,
                w,
                if op >= 0xe0 {
                    FloatKind::I64
                } else {
                    FloatKind::F32
                },
            )
        }
        _ => return None,
    };
    Some(Op {
        info: OpInfo {
            name,
            w,
            form: Form::Std,
            fk,
        },
        exec: Some(h),
    })
}

fn decode_vopc(model: GfxModel, w: u32) -> Result<Decoded, String> {
    let op = (w >> 17) & 0xff;
    let Op { info, exec } = vopc_table(op).ok_or_else(|| missing(Enc::Vopc, op, model))?;
    let mut i = Inst::new(Enc::Vopc, op as u16, info, model);
    i.sdst = 106;
    i.src[0] = (w & 0x1ff) as u16;
    i.src[1] = 256 + ((w >> 9) & 0xff) as u16;
    i.ext = ext_of(i.src[0]);
    Ok(Decoded { inst: i, exec })
}

/// VOP3-only opcodes (0x1c0 and up).
fn vop3_table(op: u32, model: GfxModel) -> Option<Op> {
    use valu::*;
    let g942 = model == GfxModel::Gfx942;
    match op {
        0x208 if g942 => return Some(row!(v_lshl_add_u64, [2, 2, 1, 2], Std)),
        // CDNA3 dropped the non-fused f32 multiply-add.
        0x1c0 | 0x1c1 if g942 => return None,
        _ => {}
    }
    let t = tab! {
        0x1c0 => (v_mad_legacy_f32, W1),
        0x1c1 => (v_mad_f32, W1),
        0x1c2 => (v_mad_i32_i24, W1),
        0x1c3 => (v_mad_u32_u24, W1),
        0x1c4 => (v_cubeid_f32 as None, W1),
        0x1c5 => (v_cubesc_f32 as None, W1),
        0x1c6 => (v_cubetc_f32 as None, W1),
        0x1c7 => (v_cubema_f32 as None, W1),
        0x1c8 => (v_bfe_u32, W1),
        0x1c9 => (v_bfe_i32, W1),
        0x1ca => (v_bfi_b32, W1),
        0x1cb => (v_fma_f32, W1),
        0x1cc => (v_fma_f64, W2),
        0x1cd => (v_lerp_u8 as None, W1),
        0x1ce => (v_alignbit_b32, W1),
        0x1cf => (v_alignbyte_b32, W1),
        0x1d0 => (v_min3_f32, W1),
        0x1d1 => (v_min3_i32, W1),
        0x1d2 => (v_min3_u32, W1),
        0x1d3 => (v_max3_f32, W1),
        0x1d4 => (v_max3_i32, W1),
        0x1d5 => (v_max3_u32, W1),
        0x1d6 => (v_med3_f32, W1),
        0x1d7 => (v_med3_i32, W1),
        0x1d8 => (v_med3_u32, W1),
        0x1d9 => (v_sad_u8 as None, W1),
        0x1da => (v_sad_hi_u8 as None, W1),
        0x1db => (v_sad_u16 as None, W1),
        0x1dc => (v_sad_u32, W1),
        0x1dd => (v_cvt_pk_u8_f32 as None, W1),
        0x1de => (v_div_fixup_f32, W1),
        0x1df => (v_div_fixup_f64, W2),
        0x1e0 => (v_div_scale_f32, W1, Vop3b),
        0x1e1 => (v_div_scale_f64, W2, Vop3b),
        0x1e2 => (v_div_fmas_f32, W1),
        0x1e3 => (v_div_fmas_f64, W2),
        0x1e4 => (v_msad_u8 as None, W1),
        0x1e5 => (v_qsad_pk_u16_u8 as None, [2, 2, 1, 2]),
        0x1e6 => (v_mqsad_pk_u16_u8 as None, [2, 2, 1, 2]),
        0x1e7 => (v_mqsad_u32_u8 as None, [4, 2, 1, 4]),
        0x1e8 => (v_mad_u64_u32, [2, 1, 1, 2], Vop3b),
        0x1e9 => (v_mad_i64_i32, [2, 1, 1, 2], Vop3b),
        0x1ea => (v_mad_legacy_f16 as None, W1),
        0x1eb => (v_mad_legacy_u16, W1),
        0x1ec => (v_mad_legacy_i16, W1),
        0x1ed => (v_perm_b32, W1),
        0x1ee => (v_fma_legacy_f16 as None, W1),
        0x1ef => (v_div_fixup_legacy_f16 as None, W1),
        0x1f0 => (v_cvt_pkaccum_u8_f32 as None, W1),
        0x1f1 => (v_mad_u32_u16, W1),
        0x1f2 => (v_mad_i32_i16, W1),
        0x1f3 => (v_xad_u32, W1),
        0x1f4 => (v_min3_f16, W1),
        0x1f5 => (v_min3_i16, W1),
        0x1f6 => (v_min3_u16, W1),
        0x1f7 => (v_max3_f16, W1),
        0x1f8 => (v_max3_i16, W1),
        0x1f9 => (v_max3_u16, W1),
        0x1fa => (v_med3_f16, W1),
        0x1fb => (v_med3_i16, W1),
        0x1fc => (v_med3_u16, W1),
        0x1fd => (v_lshl_add_u32, W1),
        0x1fe => (v_add_lshl_u32, W1),
        0x1ff => (v_add3_u32, W1),
        0x200 => (v_lshl_or_b32, W1),
        0x201 => (v_and_or_b32, W1),
        0x202 => (v_or3_b32, W1),
        0x203 => (v_mad_f16, W1),
        0x204 => (v_mad_u16, W1),
        0x205 => (v_mad_i16, W1),
        0x206 => (v_fma_f16, W1),
        0x207 => (v_div_fixup_f16, W1),
        0x280 => (v_add_f64, W2),
        0x281 => (v_mul_f64, W2),
        0x282 => (v_min_f64, W2),
        0x283 => (v_max_f64, W2),
        0x284 => (v_ldexp_f64, [2, 2, 1, 0]),
        0x285 => (v_mul_lo_u32, W1),
        0x286 => (v_mul_hi_u32, W1),
        0x287 => (v_mul_hi_i32, W1),
        0x288 => (v_ldexp_f32, W1),
        0x289 => (v_readlane_b32, W1, SDst),
        0x28a => (v_writelane_b32, W1),
        0x28b => (v_bcnt_u32_b32, W1),
        0x28c => (v_mbcnt_lo_u32_b32, W1),
        0x28d => (v_mbcnt_hi_u32_b32, W1),
        0x28f => (v_lshlrev_b64, [2, 1, 2, 0]),
        0x290 => (v_lshrrev_b64, [2, 1, 2, 0]),
        0x291 => (v_ashrrev_i64, [2, 1, 2, 0]),
        0x292 => (v_trig_preop_f64, [2, 2, 1, 0]),
        0x293 => (v_bfm_b32, W1),
        0x294 => (v_cvt_pknorm_i16_f32 as None, W1),
        0x295 => (v_cvt_pknorm_u16_f32 as None, W1),
        0x296 => (v_cvt_pkrtz_f16_f32, W1),
        0x297 => (v_cvt_pk_u16_u32 as None, W1),
        0x298 => (v_cvt_pk_i16_i32 as None, W1),
        0x299 => (v_cvt_pknorm_i16_f16 as None, W1),
        0x29a => (v_cvt_pknorm_u16_f16 as None, W1),
        0x29c => (v_add_i32, W1),
        0x29d => (v_sub_i32, W1),
        0x29e => (v_add_i16 as None, W1),
        0x29f => (v_sub_i16 as None, W1),
        0x2a0 => (v_pack_b32_f16, W1),
    };
    t(op)
}

fn decode_vop3(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    let op = (w0 >> 16) & 0x3ff;
    let (info, from) = match op {
        0..=0xff => (vopc_table(op), Enc::Vopc),
        0x100..=0x13f => (vop2_table(op - 0x100, model), Enc::Vop2),
        0x140..=0x1bf => (vop1_table(op - 0x140, model), Enc::Vop1),
        _ => (vop3_table(op, model), Enc::Vop3),
    };
    let Op { mut info, exec } = info.ok_or_else(|| missing(Enc::Vop3, op, model))?;
    // madmk/madak/fmamk/fmaak have no VOP3 form.
    if matches!(info.form, Form::MadMk | Form::MadAk) {
        return Err(missing(Enc::Vop3, op, model));
    }
    let mut i = Inst::new(Enc::Vop3, op as u16, info, model);
    i.vop3_of = from;
    i.len = 8;
    i.words[1] = w1;
    let vdst = (w0 & 0xff) as u16;
    i.src = [
        (w1 & 0x1ff) as u16,
        ((w1 >> 9) & 0x1ff) as u16,
        ((w1 >> 18) & 0x1ff) as u16,
    ];
    i.neg = ((w1 >> 29) & 7) as u8;
    i.omod = ((w1 >> 27) & 3) as u8;
    i.clamp = (w0 >> 15) & 1 != 0;
    let vop3b = matches!(info.form, Form::CarryOut | Form::CarryInOut | Form::Vop3b);
    if vop3b {
        i.sdst = ((w0 >> 8) & 0x7f) as u16;
        i.dst = 256 + vdst;
        if info.form == Form::CarryOut {
            info.form = Form::Vop3b;
        }
    } else if from == Enc::Vopc {
        i.sdst = vdst;
        i.abs = ((w0 >> 8) & 7) as u8;
    } else {
        i.abs = ((w0 >> 8) & 7) as u8;
        i.opsel = ((w0 >> 11) & 0xf) as u8;
        i.dst = if info.form == Form::SDst {
            vdst
        } else {
            256 + vdst
        };
    }
    if from == Enc::Vop2 && vop2_accumulates(op - 0x100) {
        i.src[2] = i.dst;
    }
    if op == 0x28a {
        // v_writelane_b32 keeps the other lanes of vdst: it reads it.
        i.dst = 256 + vdst;
    }
    if i.src.contains(&255) {
        return Err(format!(
            "VOP3 opcode {op} ({op:#x}) uses a literal, which GFX9 VOP3 cannot encode"
        ));
    }
    i.info = info;
    Ok(Decoded { inst: i, exec })
}

fn decode_vop3p(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use valu::*;
    let op = (w0 >> 16) & 0x7f;
    let t = tab! {
        0x00 => (v_pk_mad_i16, W1),
        0x01 => (v_pk_mul_lo_u16, W1),
        0x02 => (v_pk_add_i16, W1),
        0x03 => (v_pk_sub_i16, W1),
        0x04 => (v_pk_lshlrev_b16, W1),
        0x05 => (v_pk_lshrrev_b16, W1),
        0x06 => (v_pk_ashrrev_i16, W1),
        0x07 => (v_pk_max_i16, W1),
        0x08 => (v_pk_min_i16, W1),
        0x09 => (v_pk_mad_u16, W1),
        0x0a => (v_pk_add_u16, W1),
        0x0b => (v_pk_sub_u16, W1),
        0x0c => (v_pk_max_u16, W1),
        0x0d => (v_pk_min_u16, W1),
        0x0e => (v_pk_fma_f16, W1),
        0x0f => (v_pk_add_f16, W1),
        0x10 => (v_pk_mul_f16, W1),
        0x11 => (v_pk_min_f16, W1),
        0x12 => (v_pk_max_f16, W1),
        0x20 => (v_fma_mix_f32, W1),
        0x21 => (v_fma_mixlo_f16, W1),
        0x22 => (v_fma_mixhi_f16, W1),
        0x23 => (v_dot2_f32_f16, W1),
        0x26 => (v_dot2_i32_i16, W1),
        0x27 => (v_dot2_u32_u16, W1),
        0x28 => (v_dot4_i32_i8, W1),
        0x29 => (v_dot4_u32_u8, W1),
        0x2a => (v_dot8_i32_i4, W1),
        0x2b => (v_dot8_u32_u4, W1),
        0x30 => (v_pk_fma_f32, W2),
        0x31 => (v_pk_mul_f32, W2),
        0x32 => (v_pk_add_f32, W2),
        0x33 => (v_pk_mov_b32, W2),
        0x58 => (v_accvgpr_read_b32 as v_mov_b32, W1),
        0x59 => (v_accvgpr_write_b32 as v_mov_b32, W1),
    };
    // Matrix instructions share the opcode space from 0x40 up with the AGPR moves
    // (v_accvgpr_read/write at 0x58/0x59).
    if op >= 0x40 && crate::exec::mai::lookup(op as u16, model == GfxModel::Gfx942).is_some() {
        return decode_mai(model, op as u16, w0, w1);
    }
    let Op { info, exec } = t(op).ok_or_else(|| {
        if op >= 0x40 {
            format!(
                "VOP3P opcode {op} ({op:#x}) (MAI/MFMA) is not implemented for {}",
                model.processor()
            )
        } else {
            missing(Enc::Vop3p, op, model)
        }
    })?;
    let mut i = Inst::new(Enc::Vop3p, op as u16, info, model);
    i.len = 8;
    i.words[1] = w1;
    i.dst = 256 + (w0 & 0xff) as u16;
    i.src = [
        (w1 & 0x1ff) as u16,
        ((w1 >> 9) & 0x1ff) as u16,
        ((w1 >> 18) & 0x1ff) as u16,
    ];
    i.neg = ((w1 >> 29) & 7) as u8;
    i.neg_hi = ((w0 >> 8) & 7) as u8;
    i.opsel = ((w0 >> 11) & 7) as u8;
    i.opsel_hi = (((w1 >> 27) & 3) | (((w0 >> 14) & 1) << 2)) as u8;
    i.clamp = (w0 >> 15) & 1 != 0;
    match op {
        0x58 => {
            i.src[0] = 512 + (i.src[0] & 0xff);
        }
        0x59 => {
            i.dst = 512 + (w0 & 0xff) as u16;
        }
        _ => {}
    }
    if i.src.contains(&255) {
        return Err(format!("VOP3P opcode {op} ({op:#x}) with a literal"));
    }
    Ok(Decoded { inst: i, exec })
}

/// MAI (matrix) instructions share the VOP3P opcode space from 0x40 up. Fields: vdst
/// [7:0], cbsz [10:8], abid [14:11], acc_cd [15] (C and D are AGPRs), src0/1/2 as VOP3P,
/// acc [28:27] (A/B are AGPRs), blgp [31:29].
fn decode_mai(model: GfxModel, op: u16, w0: u32, w1: u32) -> Result<Decoded, String> {
    use crate::exec::mai;
    let (name, shape) = mai::lookup(op, model == GfxModel::Gfx942).ok_or_else(|| {
        format!(
            "VOP3P opcode {op} ({op:#x}) (MAI/MFMA) is not a {} matrix instruction this decoder knows",
            model.processor()
        )
    })?;
    let (_, ab) = shape.ty.per_lane();
    let d = shape.d_regs();
    let info = OpInfo {
        name,
        w: [d, ab, ab, d],
        form: Form::Std,
        fk: FloatKind::F32,
    };
    let exec = Some(mai::v_mfma as Handler);
    let mut i = Inst::new(Enc::Vop3p, op, info, model);
    i.len = 8;
    i.words[1] = w1;
    let acc_cd = (w0 >> 15) & 1 != 0;
    let acc = (w1 >> 27) & 3;
    let cd = if acc_cd { 512 } else { 256 };
    i.dst = cd + (w0 & 0xff) as u16;
    let mut src = [
        (w1 & 0x1ff) as u16,
        ((w1 >> 9) & 0x1ff) as u16,
        ((w1 >> 18) & 0x1ff) as u16,
    ];
    for (k, s) in src.iter_mut().enumerate().take(2) {
        if *s >= 256 && (acc >> k) & 1 != 0 {
            *s += 256;
        }
    }
    if src[2] >= 256 && acc_cd {
        src[2] += 256;
    }
    if src.contains(&255) {
        return Err(format!("MAI opcode {op} ({op:#x}) with a literal"));
    }
    i.src = src;
    // cbsz | abid << 3 | blgp << 7: nonzero only for broadcast forms.
    i.imm = (((w0 >> 8) & 7) | ((w0 >> 11) & 0xf) << 3 | ((w1 >> 29) & 7) << 7) as i32;
    Ok(Decoded { inst: i, exec })
}

// ---------------------------------------------------------------- LDS

fn decode_ds(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use ds::*;
    let op = (w0 >> 17) & 0xff;
    let t = tab! {
        0 => (ds_add_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        1 => (ds_sub_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        2 => (ds_rsub_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        3 => (ds_inc_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        4 => (ds_dec_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        5 => (ds_min_i32 as ds_atomic, [0, 1, 1, 0], Atomic),
        6 => (ds_max_i32 as ds_atomic, [0, 1, 1, 0], Atomic),
        7 => (ds_min_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        8 => (ds_max_u32 as ds_atomic, [0, 1, 1, 0], Atomic),
        9 => (ds_and_b32 as ds_atomic, [0, 1, 1, 0], Atomic),
        10 => (ds_or_b32 as ds_atomic, [0, 1, 1, 0], Atomic),
        11 => (ds_xor_b32 as ds_atomic, [0, 1, 1, 0], Atomic),
        12 => (ds_mskor_b32 as ds_atomic, [0, 1, 1, 1], Atomic),
        13 => (ds_write_b32 as ds_write, [0, 1, 1, 0], Store),
        14 => (ds_write2_b32 as ds_write2, [0, 1, 1, 1], Ds2),
        15 => (ds_write2st64_b32 as ds_write2, [0, 1, 1, 1], Ds2),
        16 => (ds_cmpst_b32 as ds_atomic, [0, 1, 1, 1], Atomic),
        17 => (ds_cmpst_f32 as ds_atomic, [0, 1, 1, 1], Atomic),
        18 => (ds_min_f32 as ds_atomic, [0, 1, 1, 0], Atomic),
        19 => (ds_max_f32 as ds_atomic, [0, 1, 1, 0], Atomic),
        20 => (ds_nop, [0, 0, 0, 0], None),
        21 => (ds_add_f32 as ds_atomic, [0, 1, 1, 0], Atomic),
        30 => (ds_write_b8 as ds_write, [0, 1, 1, 0], Store),
        31 => (ds_write_b16 as ds_write, [0, 1, 1, 0], Store),
        32 => (ds_add_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        33 => (ds_sub_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        34 => (ds_rsub_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        35 => (ds_inc_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        36 => (ds_dec_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        37 => (ds_min_rtn_i32 as ds_atomic, [1, 1, 1, 0], Atomic),
        38 => (ds_max_rtn_i32 as ds_atomic, [1, 1, 1, 0], Atomic),
        39 => (ds_min_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        40 => (ds_max_rtn_u32 as ds_atomic, [1, 1, 1, 0], Atomic),
        41 => (ds_and_rtn_b32 as ds_atomic, [1, 1, 1, 0], Atomic),
        42 => (ds_or_rtn_b32 as ds_atomic, [1, 1, 1, 0], Atomic),
        43 => (ds_xor_rtn_b32 as ds_atomic, [1, 1, 1, 0], Atomic),
        44 => (ds_mskor_rtn_b32 as ds_atomic, [1, 1, 1, 1], Atomic),
        45 => (ds_wrxchg_rtn_b32 as ds_atomic, [1, 1, 1, 0], Atomic),
        48 => (ds_cmpst_rtn_b32 as ds_atomic, [1, 1, 1, 1], Atomic),
        49 => (ds_cmpst_rtn_f32 as ds_atomic, [1, 1, 1, 1], Atomic),
        50 => (ds_min_rtn_f32 as ds_atomic, [1, 1, 1, 0], Atomic),
        51 => (ds_max_rtn_f32 as ds_atomic, [1, 1, 1, 0], Atomic),
        53 => (ds_add_rtn_f32 as ds_atomic, [1, 1, 1, 0], Atomic),
        54 => (ds_read_b32 as ds_read, [1, 1, 0, 0], Load),
        55 => (ds_read2_b32 as ds_read2_dword, [2, 1, 0, 0], Ds2),
        56 => (ds_read2st64_b32 as ds_read2_dword, [2, 1, 0, 0], Ds2),
        57 => (ds_read_i8 as ds_read, [1, 1, 0, 0], Load),
        58 => (ds_read_u8 as ds_read, [1, 1, 0, 0], Load),
        59 => (ds_read_i16 as ds_read, [1, 1, 0, 0], Load),
        60 => (ds_read_u16 as ds_read, [1, 1, 0, 0], Load),
        61 => (ds_swizzle_b32 as ds_swizzle, [1, 1, 0, 0], Load),
        62 => (ds_permute_b32 as ds_permute, [1, 1, 1, 0], Load),
        63 => (ds_bpermute_b32 as ds_permute, [1, 1, 1, 0], Load),
        64 => (ds_add_u64 as ds_atomic, [0, 1, 2, 0], Atomic),
        65 => (ds_sub_u64 as ds_atomic, [0, 1, 2, 0], Atomic),
        69 => (ds_min_i64 as ds_atomic, [0, 1, 2, 0], Atomic),
        70 => (ds_max_i64 as ds_atomic, [0, 1, 2, 0], Atomic),
        71 => (ds_min_u64 as ds_atomic, [0, 1, 2, 0], Atomic),
        72 => (ds_max_u64 as ds_atomic, [0, 1, 2, 0], Atomic),
        73 => (ds_and_b64 as ds_atomic, [0, 1, 2, 0], Atomic),
        74 => (ds_or_b64 as ds_atomic, [0, 1, 2, 0], Atomic),
        75 => (ds_xor_b64 as ds_atomic, [0, 1, 2, 0], Atomic),
        77 => (ds_write_b64 as ds_write, [0, 1, 2, 0], Store),
        78 => (ds_write2_b64 as ds_write2, [0, 1, 2, 2], Ds2),
        79 => (ds_write2st64_b64 as ds_write2, [0, 1, 2, 2], Ds2),
        80 => (ds_cmpst_b64 as ds_atomic, [0, 1, 2, 2], Atomic),
        92 => (ds_add_f64 as ds_atomic, [0, 1, 2, 0], Atomic),
        96 => (ds_add_rtn_u64 as ds_atomic, [2, 1, 2, 0], Atomic),
        97 => (ds_sub_rtn_u64 as ds_atomic, [2, 1, 2, 0], Atomic),
        109 => (ds_wrxchg_rtn_b64 as ds_atomic, [2, 1, 2, 0], Atomic),
        112 => (ds_cmpst_rtn_b64 as ds_atomic, [2, 1, 2, 2], Atomic),
        118 => (ds_read_b64 as ds_read, [2, 1, 0, 0], Load),
        119 => (ds_read2_b64 as ds_read2, [4, 1, 0, 0], Ds2),
        120 => (ds_read2st64_b64 as ds_read2, [4, 1, 0, 0], Ds2),
        124 => (ds_add_rtn_f64 as ds_atomic, [2, 1, 2, 0], Atomic),
        152 => (ds_gws_sema_release_all as ds_gws_sema, [0, 0, 0, 0], Gws),
        153 => (ds_gws_init, [0, 1, 0, 0], Gws),
        154 => (ds_gws_sema_v as ds_gws_sema, [0, 0, 0, 0], Gws),
        155 => (ds_gws_sema_br as ds_gws_sema, [0, 1, 0, 0], Gws),
        156 => (ds_gws_sema_p as ds_gws_sema, [0, 0, 0, 0], Gws),
        157 => (ds_gws_barrier, [0, 1, 0, 0], Gws),
        0x54 => (ds_write_b8_d16_hi as ds_write, [0, 1, 1, 0], Store),
        0x55 => (ds_write_b16_d16_hi as ds_write, [0, 1, 1, 0], Store),
        0xde => (ds_write_b96 as ds_write, [0, 1, 3, 0], Store),
        0xdf => (ds_write_b128 as ds_write, [0, 1, 4, 0], Store),
        0xfe => (ds_read_b96 as ds_read, [3, 1, 0, 0], Load),
        0xff => (ds_read_b128 as ds_read, [4, 1, 0, 0], Load),
    };
    let Op { info, exec } = t(op).ok_or_else(|| missing(Enc::Ds, op, model))?;
    let mut i = Inst::new(Enc::Ds, op as u16, info, model);
    i.len = 8;
    i.words[1] = w1;
    i.imm = (w0 & 0xff) as i32;
    i.imm2 = ((w0 >> 8) & 0xff) as u16;
    if info.form != Form::Ds2 {
        i.imm = (w0 & 0xffff) as i32;
    }
    // The gds bit: the Global Wave Sync operations are encoded with it; hsasim has no GDS
    // memory for the others.
    let gds = (w0 >> 16) & 1 != 0;
    if gds != (info.form == Form::Gws) {
        return Err(if gds {
            format!("DS opcode {op} with gds (global data share)")
        } else {
            format!("DS opcode {op} ({}) without gds", info.name)
        });
    }
    let acc = if (w0 >> 25) & 1 != 0 { 512 } else { 256 };
    i.mflags = if acc == 512 { 1 << 5 } else { 0 };
    i.src = [
        256 + (w1 & 0xff) as u16,
        acc + ((w1 >> 8) & 0xff) as u16,
        acc + ((w1 >> 16) & 0xff) as u16,
    ];
    i.dst = acc + ((w1 >> 24) & 0xff) as u16;
    Ok(Decoded { inst: i, exec })
}

// ---------------------------------------------------------------- vector memory

fn decode_flat(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use vmem::*;
    let op = (w0 >> 18) & 0x7f;
    let seg = (w0 >> 14) & 3;
    let t = tab! {
        16 => (load_ubyte as flat_load, [1, 2, 0, 0], Load),
        17 => (load_sbyte as flat_load, [1, 2, 0, 0], Load),
        18 => (load_ushort as flat_load, [1, 2, 0, 0], Load),
        19 => (load_sshort as flat_load, [1, 2, 0, 0], Load),
        20 => (load_dword as flat_load_dword, [1, 2, 0, 0], Load),
        21 => (load_dwordx2 as flat_load, [2, 2, 0, 0], Load),
        22 => (load_dwordx3 as flat_load, [3, 2, 0, 0], Load),
        23 => (load_dwordx4 as flat_load, [4, 2, 0, 0], Load),
        24 => (store_byte as flat_store, [1, 2, 0, 0], Store),
        25 => (store_byte_d16_hi as flat_store, [1, 2, 0, 0], Store),
        26 => (store_short as flat_store, [1, 2, 0, 0], Store),
        27 => (store_short_d16_hi as flat_store, [1, 2, 0, 0], Store),
        28 => (store_dword as flat_store_dword, [1, 2, 0, 0], Store),
        29 => (store_dwordx2 as flat_store, [2, 2, 0, 0], Store),
        30 => (store_dwordx3 as flat_store, [3, 2, 0, 0], Store),
        31 => (store_dwordx4 as flat_store, [4, 2, 0, 0], Store),
        32 => (load_ubyte_d16 as flat_load, [1, 2, 0, 0], Load),
        33 => (load_ubyte_d16_hi as flat_load, [1, 2, 0, 0], Load),
        34 => (load_sbyte_d16 as flat_load, [1, 2, 0, 0], Load),
        35 => (load_sbyte_d16_hi as flat_load, [1, 2, 0, 0], Load),
        36 => (load_short_d16 as flat_load, [1, 2, 0, 0], Load),
        37 => (load_short_d16_hi as flat_load, [1, 2, 0, 0], Load),
        64 => (atomic_swap as flat_atomic, [1, 2, 1, 0], Atomic),
        65 => (atomic_cmpswap as flat_atomic, [1, 2, 2, 0], Atomic),
        66 => (atomic_add as flat_atomic, [1, 2, 1, 0], Atomic),
        67 => (atomic_sub as flat_atomic, [1, 2, 1, 0], Atomic),
        68 => (atomic_smin as flat_atomic, [1, 2, 1, 0], Atomic),
        69 => (atomic_umin as flat_atomic, [1, 2, 1, 0], Atomic),
        70 => (atomic_smax as flat_atomic, [1, 2, 1, 0], Atomic),
        71 => (atomic_umax as flat_atomic, [1, 2, 1, 0], Atomic),
        72 => (atomic_and as flat_atomic, [1, 2, 1, 0], Atomic),
        73 => (atomic_or as flat_atomic, [1, 2, 1, 0], Atomic),
        74 => (atomic_xor as flat_atomic, [1, 2, 1, 0], Atomic),
        75 => (atomic_inc as flat_atomic, [1, 2, 1, 0], Atomic),
        76 => (atomic_dec as flat_atomic, [1, 2, 1, 0], Atomic),
        77 => (atomic_add_f32 as flat_atomic, [1, 2, 1, 0], Atomic),
        78 => (atomic_pk_add_f16 as None, [1, 2, 1, 0], Atomic),
        79 => (atomic_add_f64 as flat_atomic, [2, 2, 2, 0], Atomic),
        80 => (atomic_min_f64 as flat_atomic, [2, 2, 2, 0], Atomic),
        81 => (atomic_max_f64 as flat_atomic, [2, 2, 2, 0], Atomic),
        82 => (atomic_pk_add_bf16 as None, [1, 2, 1, 0], Atomic),
        96 => (atomic_swap_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        97 => (atomic_cmpswap_x2 as flat_atomic, [2, 2, 4, 0], Atomic),
        98 => (atomic_add_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        99 => (atomic_sub_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        100 => (atomic_smin_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        101 => (atomic_umin_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        102 => (atomic_smax_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        103 => (atomic_umax_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        104 => (atomic_and_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        105 => (atomic_or_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        106 => (atomic_xor_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        107 => (atomic_inc_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
        108 => (atomic_dec_x2 as flat_atomic, [2, 2, 2, 0], Atomic),
    };
    let Op { mut info, exec } = t(op).ok_or_else(|| {
        format!(
            "FLAT opcode {op} ({op:#x}) segment {seg} is not a {} instruction this decoder knows",
            model.processor()
        )
    })?;
    if seg == 3 || (seg == 1 && op >= 64) || (seg == 0 && op == 82) {
        return Err(format!("FLAT opcode {op} with segment {seg}"));
    }
    // The mnemonic carries the segment prefix; the tables hold the common suffix.
    info.name = flat_name(seg, info.name);
    let mut i = Inst::new(Enc::Flat, op as u16, info, model);
    i.len = 8;
    i.words[1] = w1;
    i.seg = seg as u16;
    i.imm = if seg == 0 {
        (w0 & 0xfff) as i32
    } else {
        (((w0 & 0x1fff) << 19) as i32) >> 19
    };
    let mut fl = ((w0 >> 16) & 1) | (((w0 >> 17) & 1) << 1) | (((w0 >> 13) & 1) << 4);
    if model == GfxModel::Gfx942 {
        fl |= ((w0 >> 25) & 1) << 2;
    }
    let acc = (w1 >> 23) & 1 != 0;
    if acc {
        fl |= 1 << 5;
    }
    i.mflags = fl as u8;
    let reg = if acc { 512 } else { 256 };
    i.src[0] = 256 + (w1 & 0xff) as u16;
    i.src[1] = reg + ((w1 >> 8) & 0xff) as u16;
    i.dst = reg + ((w1 >> 24) & 0xff) as u16;
    i.saddr = ((w1 >> 16) & 0x7f) as u16;
    if seg == 0 {
        i.saddr = 0x7f;
    }
    // Which scratch forms read an address VGPR: on gfx942 the SVE bit (13, the LDS bit of
    // other segments) says so, whether saddr is off or not (`v0, off, off` reads neither,
    // `v0, v1, s2` both); earlier GFX9 uses vaddr exactly when saddr is off.
    if seg == 1 {
        let uses_vaddr = if model == GfxModel::Gfx942 {
            i.mflags &= !0x10;
            (w0 >> 13) & 1 != 0
        } else {
            i.saddr == 0x7f
        };
        if !uses_vaddr {
            i.src[0] = 0xffff;
        }
    }
    // Global with an SGPR base and scratch address with a 32-bit VGPR offset.
    if (seg == 2 && i.saddr != 0x7f) || seg == 1 {
        i.info.w[1] = 1;
    }
    Ok(Decoded { inst: i, exec })
}

fn flat_name(seg: u32, suffix: &'static str) -> &'static str {
    // All names are static strings: build them from a fixed list, never allocate.
    macro_rules! names {
        ($($s:literal),*) => {
            match suffix {
                $($s => match seg {
                    0 => concat!("flat_", $s),
                    1 => concat!("scratch_", $s),
                    _ => concat!("global_", $s),
                },)*
                _ => suffix,
            }
        };
    }
    names!(
        "load_ubyte",
        "load_sbyte",
        "load_ushort",
        "load_sshort",
        "load_dword",
        "load_dwordx2",
        "load_dwordx3",
        "load_dwordx4",
        "store_byte",
        "store_byte_d16_hi",
        "store_short",
        "store_short_d16_hi",
        "store_dword",
        "store_dwordx2",
        "store_dwordx3",
        "store_dwordx4",
        "load_ubyte_d16",
        "load_ubyte_d16_hi",
        "load_sbyte_d16",
        "load_sbyte_d16_hi",
        "load_short_d16",
        "load_short_d16_hi",
        "atomic_swap",
        "atomic_cmpswap",
        "atomic_add",
        "atomic_sub",
        "atomic_smin",
        "atomic_umin",
        "atomic_smax",
        "atomic_umax",
        "atomic_and",
        "atomic_or",
        "atomic_xor",
        "atomic_inc",
        "atomic_dec",
        "atomic_add_f32",
        "atomic_pk_add_f16",
        "atomic_add_f64",
        "atomic_min_f64",
        "atomic_max_f64",
        "atomic_pk_add_bf16",
        "atomic_swap_x2",
        "atomic_cmpswap_x2",
        "atomic_add_x2",
        "atomic_sub_x2",
        "atomic_smin_x2",
        "atomic_umin_x2",
        "atomic_smax_x2",
        "atomic_umax_x2",
        "atomic_and_x2",
        "atomic_or_x2",
        "atomic_xor_x2",
        "atomic_inc_x2",
        "atomic_dec_x2"
    )
}

fn decode_mubuf(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use image::buffer_load_format;
    use vmem::*;
    let op = (w0 >> 18) & 0x7f;
    let t = tab! {
        0x00 => (buffer_load_format_x as buffer_load_format, [1, 1, 0, 0], Load),
        0x01 => (buffer_load_format_xy as buffer_load_format, [2, 1, 0, 0], Load),
        0x02 => (buffer_load_format_xyz as buffer_load_format, [3, 1, 0, 0], Load),
        0x03 => (buffer_load_format_xyzw as buffer_load_format, [4, 1, 0, 0], Load),
        0x10 => (buffer_load_ubyte as buffer_access, [1, 1, 0, 0], Load),
        0x11 => (buffer_load_sbyte as buffer_access, [1, 1, 0, 0], Load),
        0x12 => (buffer_load_ushort as buffer_access, [1, 1, 0, 0], Load),
        0x13 => (buffer_load_sshort as buffer_access, [1, 1, 0, 0], Load),
        0x14 => (buffer_load_dword as buffer_access, [1, 1, 0, 0], Load),
        0x15 => (buffer_load_dwordx2 as buffer_access, [2, 1, 0, 0], Load),
        0x16 => (buffer_load_dwordx3 as buffer_access, [3, 1, 0, 0], Load),
        0x17 => (buffer_load_dwordx4 as buffer_access, [4, 1, 0, 0], Load),
        0x18 => (buffer_store_byte as buffer_access, [1, 1, 0, 0], Store),
        0x19 => (buffer_store_byte_d16_hi as buffer_access, [1, 1, 0, 0], Store),
        0x1a => (buffer_store_short as buffer_access, [1, 1, 0, 0], Store),
        0x1b => (buffer_store_short_d16_hi as buffer_access, [1, 1, 0, 0], Store),
        0x1c => (buffer_store_dword as buffer_access, [1, 1, 0, 0], Store),
        0x1d => (buffer_store_dwordx2 as buffer_access, [2, 1, 0, 0], Store),
        0x1e => (buffer_store_dwordx3 as buffer_access, [3, 1, 0, 0], Store),
        0x1f => (buffer_store_dwordx4 as buffer_access, [4, 1, 0, 0], Store),
        0x20 => (buffer_load_ubyte_d16 as buffer_access, [1, 1, 0, 0], Load),
        0x21 => (buffer_load_ubyte_d16_hi as buffer_access, [1, 1, 0, 0], Load),
        0x22 => (buffer_load_sbyte_d16 as buffer_access, [1, 1, 0, 0], Load),
        0x23 => (buffer_load_sbyte_d16_hi as buffer_access, [1, 1, 0, 0], Load),
        0x24 => (buffer_load_short_d16 as buffer_access, [1, 1, 0, 0], Load),
        0x25 => (buffer_load_short_d16_hi as buffer_access, [1, 1, 0, 0], Load),
        // Cache maintenance: hsasim has no caches, so these order nothing and cost nothing.
        0x28 => (buffer_wbl2 as buffer_nop, [0, 0, 0, 0], None),
        0x29 => (buffer_invl2 as buffer_nop, [0, 0, 0, 0], None),
        0x3e => (buffer_wbinvl1 as buffer_nop, [0, 0, 0, 0], None),
        0x3f => (buffer_wbinvl1_vol as buffer_nop, [0, 0, 0, 0], None),
        0x40 => (buffer_atomic_swap as None, [1, 1, 1, 0], Atomic),
        0x41 => (buffer_atomic_cmpswap as None, [2, 1, 2, 0], Atomic),
        0x42 => (buffer_atomic_add as None, [1, 1, 1, 0], Atomic),
    };
    let Op { mut info, exec } = t(op).ok_or_else(|| missing(Enc::Mubuf, op, model))?;
    if op == 0x29 && model == GfxModel::Gfx942 {
        info.name = "buffer_inv";
    }
    let mut i = Inst::new(Enc::Mubuf, op as u16, info, model);
    i.len = 8;
    i.words[1] = w1;
    i.imm = (w0 & 0xfff) as i32;
    let mut fl = ((w0 >> 14) & 1)
        | (((w0 >> 17) & 1) << 1)
        | (((w0 >> 16) & 1) << 4)
        | (((w0 >> 12) & 1) << 6)
        | (((w0 >> 13) & 1) << 7);
    if model == GfxModel::Gfx942 {
        fl |= ((w0 >> 15) & 1) << 2;
    }
    let acc = (w1 >> 23) & 1 != 0;
    if acc {
        fl |= 1 << 5;
    }
    i.mflags = fl as u8;
    let reg = if acc { 512 } else { 256 };
    i.src[0] = 256 + (w1 & 0xff) as u16;
    i.src[1] = reg + ((w1 >> 8) & 0xff) as u16;
    i.dst = i.src[1];
    i.saddr = (((w1 >> 16) & 0x1f) << 2) as u16;
    i.imm2 = ((w1 >> 24) & 0xff) as u16;
    // offen and idxen together address two VGPRs.
    if fl & 0xc0 == 0xc0 {
        i.info.w[1] = 2;
    }
    Ok(Decoded { inst: i, exec })
}

/// MIMG (gfx90a only). `dst`/`src[1]` is vdata, `src[0]` vaddr, `saddr` the T#, `imm2`
/// the S#, `imm` the dmask; `mflags` holds glc, slc and acc as for MUBUF, `seg` the
/// unorm/da/a16/lwe/d16 bits. The address width depends on the image's type, known only
/// at run time, so `w[1]` is 1 (llvm-objdump prints one register too).
fn decode_mimg(model: GfxModel, w0: u32, w1: u32) -> Result<Decoded, String> {
    use image::*;
    if model != GfxModel::Gfx90a {
        return Err(format!(
            "MIMG (image) instructions are not supported on {}",
            model.processor()
        ));
    }
    let op = (w0 >> 18) & 0x7f;
    let t = tab! {
        0 => (image_load as image_access, [1, 1, 0, 0], Load),
        1 => (image_load_mip as image_access, [1, 1, 0, 0], Load),
        8 => (image_store as image_access, [1, 1, 0, 0], Store),
        9 => (image_store_mip as image_access, [1, 1, 0, 0], Store),
        14 => (image_get_resinfo, [1, 1, 0, 0], Load),
        32 => (image_sample, [1, 1, 0, 0], Load),
    };
    let Op { info, exec } = t(op).ok_or_else(|| missing(Enc::Mimg, op, model))?;
    let mut i = Inst::new(Enc::Mimg, op as u16, info, model);
    i.len = 8;
    i.words[1] = w1;
    let dmask = (w0 >> 8) & 0xf;
    i.imm = dmask as i32;
    let d16 = w1 >> 31 != 0;
    let n = dmask.count_ones().max(1);
    i.info.w[0] = if d16 { n.div_ceil(2) } else { n } as u8;
    let acc = (w0 >> 16) & 1 != 0;
    i.mflags = (((w0 >> 13) & 1) | (((w0 >> 25) & 1) << 1) | (u32::from(acc) << 5)) as u8;
    i.seg = (((w0 >> 12) & 1) as u16 * UNORM)
        | (((w0 >> 14) & 1) as u16 * DA)
        | (((w0 >> 15) & 1) as u16 * A16)
        | (((w0 >> 17) & 1) as u16 * LWE)
        | (u16::from(d16) * D16);
    let reg = if acc { 512 } else { 256 };
    i.src[0] = 256 + (w1 & 0xff) as u16;
    i.src[1] = reg + ((w1 >> 8) & 0xff) as u16;
    i.dst = i.src[1];
    i.saddr = (((w1 >> 16) & 0x1f) << 2) as u16;
    i.imm2 = (((w1 >> 21) & 0x1f) << 2) as u16;
    Ok(Decoded { inst: i, exec })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_vector_add_words() {
        let m = GfxModel::Gfx942;
        let i = decode(m, &[0xC00200C0, 0x0000002C]).unwrap();
        assert_eq!(i.info.name, "s_load_dword");
        assert_eq!(i.len, 8);
        let i = decode(m, &[0x8603FF03, 0x0000FFFF]).unwrap();
        assert_eq!(i.info.name, "s_and_b32");
        assert_eq!(i.lit, 0xffff);
        assert_eq!(i.len, 8);
        let i = decode(m, &[0xD2080004, 0x04010004]).unwrap();
        assert_eq!(i.info.name, "v_lshl_add_u64");
        assert!(decode(GfxModel::Gfx90a, &[0xD2080004, 0x04010004]).is_err());
    }

    #[test]
    fn literal_past_the_end_is_an_error_not_a_panic() {
        assert!(decode(GfxModel::Gfx942, &[0x8603FF03]).is_err());
        assert!(decode(GfxModel::Gfx942, &[]).is_err());
    }
}
