//! The virtual-time class of each decoded instruction ([`Class`], issue 42): what the
//! model prices it as. Found once per instruction, when the decode cache takes it in
//! (`dispatch::CachedInst`), so counting an executed instruction is one increment.

use crate::api::GfxModel;
use crate::exec::mai::{self, MaiShape, MaiType};
use crate::inst::{Enc, Form, Inst};
use hsasim_vtime::Class;

/// The class `i` counts as when it runs.
pub(crate) fn class_of(i: &Inst) -> Class {
    let name = i.info.name;
    match i.enc {
        Enc::Sopp => sopp_class(i),
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc => {
            // The scalar moves of the program counter are branches to the model (they
            // redirect instruction fetch); `s_getpc_b64` only reads it.
            if matches!(
                name,
                "s_setpc_b64" | "s_swappc_b64" | "s_call_b64" | "s_rfe_b64"
            ) {
                Class::Branch
            } else {
                Class::Salu
            }
        }
        Enc::Smem => Class::Smem,
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => valu_class(i),
        Enc::Ds => match i.info.form {
            // GWS operations go to the queue's Global Wave Sync unit, not to LDS.
            Form::Gws => Class::Other,
            _ => Class::Lds,
        },
        Enc::Flat | Enc::Mubuf | Enc::Mtbuf | Enc::Mimg => match i.info.form {
            Form::Load => load_class(i.info.w[0]),
            Form::Store => store_class(i.info.w[0]),
            Form::Atomic => Class::Atomic,
            // Cache maintenance (`buffer_wbl2`, `buffer_inv`, ...) moves no data.
            _ => Class::Other,
        },
    }
}

fn sopp_class(i: &Inst) -> Class {
    let name = i.info.name;
    if i.info.form == Form::Branch || name.starts_with("s_cbranch") || name == "s_branch" {
        return Class::Branch;
    }
    match name {
        "s_waitcnt" => Class::Waitcnt,
        "s_barrier" => Class::Barrier,
        // Hints and housekeeping: no work the model should charge as scalar ALU.
        "s_nop" | "s_setprio" | "s_sleep" | "s_icache_inv" | "s_incperflevel"
        | "s_decperflevel" | "s_ttracedata" | "s_sethalt" | "s_trap" => Class::Other,
        _ => Class::Salu,
    }
}

fn valu_class(i: &Inst) -> Class {
    let name = i.info.name;
    if i.enc == Enc::Vop3p && name.starts_with("v_mfma") {
        return match mai::lookup(i.op, i.model == GfxModel::Gfx942) {
            Some((_, shape)) => match mfma_passes(&shape, i.model) {
                2 => Class::Mfma2,
                4 => Class::Mfma4,
                8 => Class::Mfma8,
                _ => Class::Mfma16,
            },
            None => Class::Mfma16,
        };
    }
    if name == "v_nop" {
        return Class::Other;
    }
    const TRANS: [&str; 7] = [
        "v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_",
    ];
    if TRANS.iter().any(|p| name.starts_with(p)) {
        return Class::ValuTrans;
    }
    // Any f64 operand or result (arithmetic, compares, conversions) goes through the
    // double-precision path.
    if name.split('_').any(|t| t == "f64") {
        return Class::ValuF64;
    }
    Class::Valu
}

/// Bytes per lane: byte, short and dword accesses are one dword, x3 is priced as x4.
fn load_class(dwords: u8) -> Class {
    match dwords {
        0 | 1 => Class::Load4,
        2 => Class::Load8,
        _ => Class::Load16,
    }
}

fn store_class(dwords: u8) -> Class {
    match dwords {
        0 | 1 => Class::Store4,
        2 => Class::Store8,
        _ => Class::Store16,
    }
}

/// MFMA passes (4 cycles each) of a shape: the MFMA tables of AMD's CDNA2 (MI200) and
/// CDNA3 (MI300) ISA reference guides, as LLVM's AMDGPU scheduling model and hazard
/// recognizer also use them (2/4/8/16-pass XDL and DGEMM instructions). Per block the
/// work is m x n x k; the 4x4 shapes take 2 passes, 16x16 8 and 32x32 16, but for the
/// double-rate single-block shapes of CDNA3 (32x32x8 f16/bf16 and 32x32x16 i8: 8;
/// 16x16x16 f16/bf16 and 16x16x32 i8: 4) and f64 (16x16x4: 8, 4x4x4: 4).
pub(crate) fn mfma_passes(shape: &MaiShape, model: GfxModel) -> u32 {
    if shape.ty == MaiType::F64 {
        return if shape.m == 4 { 4 } else { 8 };
    }
    let base = match shape.m {
        4 => 2,
        16 => 8,
        _ => 16,
    };
    let double_rate = model == GfxModel::Gfx942
        && shape.blocks == 1
        && matches!(shape.ty, MaiType::F16 | MaiType::Bf16x4 | MaiType::I8x8);
    if double_rate {
        base / 2
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;
    use std::collections::HashSet;

    /// Assembles `text` for `model` with llvm-mc-19 and returns its instruction words.
    fn assemble(model: GfxModel, text: &str) -> Vec<u32> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new("llvm-mc-19")
            .args([
                "-triple=amdgcn-amd-amdhsa",
                &format!("-mcpu={}", model.processor()),
                "-show-encoding",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("llvm-mc-19 (the tests assemble with it)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("writes");
        let out = child.wait_with_output().expect("llvm-mc-19 runs");
        assert!(out.status.success(), "llvm-mc-19 failed on {text}");
        let listing = String::from_utf8(out.stdout).expect("utf-8");
        let line = listing
            .lines()
            .find(|l| l.contains("encoding: ["))
            .unwrap_or_else(|| panic!("no encoding for {text}: {listing}"));
        let start = line.find("encoding: [").expect("encoding") + "encoding: [".len();
        let bytes: Vec<u8> = line[start..]
            .trim_end_matches(']')
            .split(',')
            .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("hex"))
            .collect();
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// Every class on assembled instructions of both models, and the MFMA pass counts of
    /// every shape against the ISA guides' tables.
    #[test]
    fn every_class_from_assembled_words() {
        let cases: &[(&str, Class)] = &[
            ("s_add_u32 s0, s1, s2", Class::Salu),
            ("s_mov_b64 s[0:1], s[2:3]", Class::Salu),
            ("s_cmp_eq_u32 s0, s1", Class::Salu),
            ("s_movk_i32 s0, 0x7", Class::Salu),
            ("s_getpc_b64 s[0:1]", Class::Salu),
            ("s_endpgm", Class::Salu),
            ("s_sendmsg sendmsg(MSG_INTERRUPT)", Class::Salu),
            ("s_load_dwordx2 s[0:1], s[4:5], 0x0", Class::Smem),
            ("s_buffer_load_dword s0, s[4:7], 0x0", Class::Smem),
            ("s_store_dword s0, s[4:5], 0x0", Class::Smem),
            ("s_memtime s[0:1]", Class::Smem),
            ("s_memrealtime s[0:1]", Class::Smem),
            ("s_branch 1", Class::Branch),
            ("s_cbranch_scc0 1", Class::Branch),
            ("s_cbranch_execz 1", Class::Branch),
            ("s_setpc_b64 s[0:1]", Class::Branch),
            ("s_swappc_b64 s[0:1], s[2:3]", Class::Branch),
            ("s_waitcnt vmcnt(0) lgkmcnt(0)", Class::Waitcnt),
            ("s_barrier", Class::Barrier),
            ("v_add_u32_e32 v0, v1, v2", Class::Valu),
            ("v_fma_f32 v0, v1, v2, v3", Class::Valu),
            ("v_pk_fma_f16 v0, v1, v2, v3", Class::Valu),
            ("v_cmp_lt_f32_e32 vcc, v1, v2", Class::Valu),
            ("v_readfirstlane_b32 s0, v1", Class::Valu),
            ("v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]", Class::ValuF64),
            ("v_add_f64 v[0:1], v[2:3], v[4:5]", Class::ValuF64),
            ("v_cvt_f64_i32_e32 v[0:1], v2", Class::ValuF64),
            ("v_cmp_lt_f64_e32 vcc, v[0:1], v[2:3]", Class::ValuF64),
            ("v_exp_f32_e32 v0, v1", Class::ValuTrans),
            ("v_rcp_f32_e32 v0, v1", Class::ValuTrans),
            ("v_rsq_f64_e32 v[0:1], v[2:3]", Class::ValuTrans),
            ("v_sqrt_f32_e32 v0, v1", Class::ValuTrans),
            ("v_sin_f32_e32 v0, v1", Class::ValuTrans),
            ("v_log_f32_e32 v0, v1", Class::ValuTrans),
            ("ds_read_b32 v0, v1", Class::Lds),
            ("ds_write_b64 v0, v[2:3]", Class::Lds),
            ("ds_add_u32 v0, v1", Class::Lds),
            ("global_load_dword v0, v[2:3], off", Class::Load4),
            ("global_load_ubyte v0, v[2:3], off", Class::Load4),
            ("flat_load_dwordx2 v[0:1], v[2:3]", Class::Load8),
            ("global_load_dwordx3 v[0:2], v[4:5], off", Class::Load16),
            ("global_load_dwordx4 v[0:3], v[4:5], off", Class::Load16),
            ("buffer_load_dword v0, off, s[0:3], 0", Class::Load4),
            ("scratch_load_dwordx2 v[0:1], v2, off", Class::Load8),
            ("global_store_dword v[0:1], v2, off", Class::Store4),
            ("global_store_short v[0:1], v2, off", Class::Store4),
            ("flat_store_dwordx2 v[0:1], v[2:3]", Class::Store8),
            ("global_store_dwordx4 v[0:1], v[2:5], off", Class::Store16),
            (
                "buffer_store_dwordx3 v[0:2], off, s[0:3], 0",
                Class::Store16,
            ),
            ("scratch_store_dword off, v0, s0", Class::Store4),
            ("global_atomic_add v[0:1], v2, off", Class::Atomic),
            ("flat_atomic_cmpswap v[2:3], v[4:5]", Class::Atomic),
            ("buffer_atomic_add v0, off, s[0:3], 0", Class::Atomic),
            ("s_nop 0", Class::Other),
            ("s_setprio 1", Class::Other),
            ("v_nop", Class::Other),
            ("ds_gws_barrier v0 gds", Class::Other),
        ];
        let mut seen = HashSet::new();
        for model in [GfxModel::Gfx942, GfxModel::Gfx90a] {
            for &(text, want) in cases {
                let words = assemble(model, text);
                let i = decode(model, &words).unwrap_or_else(|e| panic!("{text}: {e:?}"));
                assert_eq!(class_of(&i), want, "{model:?} `{text}` ({})", i.info.name);
                seen.insert(want as usize);
            }
        }
        let mfma: &[(GfxModel, &str, Class)] = &[
            (
                GfxModel::Gfx942,
                "v_mfma_f32_4x4x1_16b_f32 a[0:3], v0, v1, a[0:3]",
                Class::Mfma2,
            ),
            (
                GfxModel::Gfx942,
                "v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]",
                Class::Mfma4,
            ),
            (
                GfxModel::Gfx942,
                "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]",
                Class::Mfma8,
            ),
            (
                GfxModel::Gfx942,
                "v_mfma_f32_16x16x4_f32 a[0:3], v0, v1, a[0:3]",
                Class::Mfma8,
            ),
            (
                GfxModel::Gfx942,
                "v_mfma_f32_32x32x2_f32 a[0:15], v0, v1, a[0:15]",
                Class::Mfma16,
            ),
            (
                GfxModel::Gfx942,
                "v_mfma_f64_4x4x4_4b_f64 v[0:1], v[2:3], v[4:5], v[0:1]",
                Class::Mfma4,
            ),
            (
                GfxModel::Gfx90a,
                "v_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3]",
                Class::Mfma8,
            ),
            (
                GfxModel::Gfx90a,
                "v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]",
                Class::Mfma16,
            ),
            (
                GfxModel::Gfx90a,
                "v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], v[0:7]",
                Class::Mfma8,
            ),
        ];
        for &(model, text, want) in mfma {
            let words = assemble(model, text);
            let i = decode(model, &words).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(class_of(&i), want, "{model:?} `{text}`");
            seen.insert(want as usize);
        }
        assert_eq!(seen.len(), Class::COUNT, "every class has a case");
    }

    /// The pass count of every MAI opcode of both models, against the guides' tables
    /// (CDNA3: section 7.1 "Dependency Resolution"; CDNA2: the same section).
    #[test]
    fn mfma_passes_of_every_shape() {
        let want_942: &[(&str, u32)] = &[
            ("v_mfma_f32_32x32x1_2b_f32", 16),
            ("v_mfma_f32_16x16x1_4b_f32", 8),
            ("v_mfma_f32_4x4x1_16b_f32", 2),
            ("v_mfma_f32_32x32x2_f32", 16),
            ("v_mfma_f32_16x16x4_f32", 8),
            ("v_mfma_f32_32x32x4_2b_f16", 16),
            ("v_mfma_f32_16x16x4_4b_f16", 8),
            ("v_mfma_f32_4x4x4_16b_f16", 2),
            ("v_mfma_f32_32x32x8_f16", 8),
            ("v_mfma_f32_16x16x16_f16", 4),
            ("v_mfma_i32_32x32x4_2b_i8", 16),
            ("v_mfma_i32_16x16x4_4b_i8", 8),
            ("v_mfma_i32_4x4x4_16b_i8", 2),
            ("v_mfma_i32_32x32x16_i8", 8),
            ("v_mfma_i32_16x16x32_i8", 4),
            ("v_mfma_f32_32x32x4_2b_bf16", 16),
            ("v_mfma_f32_16x16x4_4b_bf16", 8),
            ("v_mfma_f32_4x4x4_16b_bf16", 2),
            ("v_mfma_f32_32x32x8_bf16", 8),
            ("v_mfma_f32_16x16x16_bf16", 4),
            ("v_mfma_f64_16x16x4_f64", 8),
            ("v_mfma_f64_4x4x4_4b_f64", 4),
        ];
        let want_90a: &[(&str, u32)] = &[
            ("v_mfma_f32_32x32x1f32", 16),
            ("v_mfma_f32_16x16x1f32", 8),
            ("v_mfma_f32_4x4x1f32", 2),
            ("v_mfma_f32_32x32x2f32", 16),
            ("v_mfma_f32_16x16x4f32", 8),
            ("v_mfma_f32_32x32x4f16", 16),
            ("v_mfma_f32_16x16x4f16", 8),
            ("v_mfma_f32_4x4x4f16", 2),
            ("v_mfma_f32_32x32x8f16", 16),
            ("v_mfma_f32_16x16x16f16", 8),
            ("v_mfma_i32_32x32x4i8", 16),
            ("v_mfma_i32_16x16x4i8", 8),
            ("v_mfma_i32_4x4x4i8", 2),
            ("v_mfma_i32_32x32x8i8", 16),
            ("v_mfma_i32_16x16x16i8", 8),
            ("v_mfma_f32_32x32x4bf16_1k", 16),
            ("v_mfma_f32_16x16x4bf16_1k", 8),
            ("v_mfma_f32_4x4x4bf16_1k", 2),
            ("v_mfma_f32_32x32x8bf16_1k", 16),
            ("v_mfma_f32_16x16x16bf16_1k", 8),
            ("v_mfma_f32_32x32x2bf16", 16),
            ("v_mfma_f32_16x16x2bf16", 8),
            ("v_mfma_f32_4x4x2bf16", 2),
            ("v_mfma_f32_32x32x4bf16", 16),
            ("v_mfma_f32_16x16x8bf16", 8),
            ("v_mfma_f64_16x16x4f64", 8),
            ("v_mfma_f64_4x4x4f64", 4),
        ];
        for (model, want) in [(GfxModel::Gfx942, want_942), (GfxModel::Gfx90a, want_90a)] {
            let gfx942 = model == GfxModel::Gfx942;
            let mut checked = 0;
            for &(op, n942, n90a, shape) in mai::MAI_OPS {
                let name = if gfx942 { n942 } else { n90a };
                if name.is_empty() {
                    continue;
                }
                let &(_, passes) = want
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap_or_else(|| panic!("{name} missing from the table"));
                assert_eq!(mfma_passes(&shape, model), passes, "{model:?} {name}");
                assert!(mai::lookup(op, gfx942).is_some());
                checked += 1;
            }
            assert_eq!(checked, want.len(), "{model:?}: every opcode of the table");
        }
    }
}
