//! `Display` for decoded instructions in LLVM's AMDGPU assembly syntax, so error messages
//! read like `llvm-objdump -d` and the decoder can be checked against it mechanically.

use crate::api::GfxModel;
use crate::inst::{returns, Enc, Ext, Form, Inst};
use std::fmt::{self, Write};

/// Name of an operand code of `width` dwords.
pub fn operand(code: u16, width: u8, lit: u32) -> String {
    let w = width.max(1) as u16;
    let range = |p: &str, n: u16| {
        if w == 1 {
            format!("{p}{n}")
        } else {
            format!("{p}[{n}:{}]", n + w - 1)
        }
    };
    let pair = |lo: &str, hi: &str, full: &str, is_hi: bool| {
        if w >= 2 && !is_hi {
            full.to_string()
        } else if is_hi {
            hi.to_string()
        } else {
            lo.to_string()
        }
    };
    match code {
        0..=101 => range("s", code),
        102 | 103 => pair(
            "flat_scratch_lo",
            "flat_scratch_hi",
            "flat_scratch",
            code == 103,
        ),
        104 | 105 => pair("xnack_mask_lo", "xnack_mask_hi", "xnack_mask", code == 105),
        106 | 107 => pair("vcc_lo", "vcc_hi", "vcc", code == 107),
        108..=123 => range("ttmp", code - 108),
        124 => "m0".into(),
        126 | 127 => pair("exec_lo", "exec_hi", "exec", code == 127),
        128..=192 => format!("{}", code - 128),
        193..=208 => format!("-{}", code - 192),
        235 => "src_shared_base".into(),
        236 => "src_shared_limit".into(),
        237 => "src_private_base".into(),
        238 => "src_private_limit".into(),
        239 => "src_pops_exiting_wave_id".into(),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        248 => "0.15915494".into(),
        251 => "src_vccz".into(),
        252 => "src_execz".into(),
        253 => "src_scc".into(),
        254 => "src_lds_direct".into(),
        255 => literal(lit, width),
        256..=511 => range("v", code - 256),
        512..=767 => range("a", code - 512),
        _ => format!("<operand {code}>"),
    }
}

/// LLVM prints a literal whose value an inline constant could encode in its inline form.
fn literal(lit: u32, width: u8) -> String {
    let v = lit as i32;
    if (-16..=64).contains(&v) {
        return v.to_string();
    }
    // A 32-bit literal of a 64-bit operand is never one of the float inline values
    // (those are 64-bit patterns there): llvm prints it in hex.
    if width >= 2 {
        return format!("0x{lit:x}");
    }
    const FLOATS: [(u32, &str); 9] = [
        (0x3f00_0000, "0.5"),
        (0xbf00_0000, "-0.5"),
        (0x3f80_0000, "1.0"),
        (0xbf80_0000, "-1.0"),
        (0x4000_0000, "2.0"),
        (0xc000_0000, "-2.0"),
        (0x4080_0000, "4.0"),
        (0xc080_0000, "-4.0"),
        (0x3e22_f983, "0.15915494"),
    ];
    match FLOATS.iter().find(|(b, _)| *b == lit) {
        Some((_, s)) => s.to_string(),
        None => format!("0x{lit:x}"),
    }
}

fn src_mod(i: &Inst, n: usize, width: u8) -> String {
    let mut s = operand(i.src[n], width, i.lit);
    if i.abs >> n & 1 != 0 {
        s = format!("|{s}|");
    }
    if i.neg >> n & 1 != 0 {
        s = format!("-{s}");
    }
    s
}

/// Number of VOP3 sources printed for an opcode.
fn vop3_nsrc(i: &Inst) -> usize {
    match i.vop3_of {
        Enc::Vop1 => 1,
        Enc::Vopc => 2,
        Enc::Vop2 => match i.info.form {
            Form::Cndmask | Form::CarryInOut => 3,
            _ => 2,
        },
        _ => match i.op {
            0x280..=0x2ff => 2,
            _ => 3,
        },
    }
}

fn w(i: &Inst, k: usize) -> u8 {
    i.info.w[k]
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self;
        let mut s = i.mnemonic();
        let name_len = s.len();
        let op = |code: u16, width: u8| operand(code, width, i.lit);
        let mut args: Vec<String> = Vec::new();
        let mut tail = String::new();
        match i.enc {
            Enc::Sop2 => {
                args.push(op(i.dst, w(i, 0)));
                args.push(op(i.src[0], w(i, 1)));
                args.push(op(i.src[1], w(i, 2)));
            }
            Enc::Sop1 => match i.info.form {
                Form::DstOnly => args.push(op(i.dst, w(i, 0))),
                Form::SrcOnly => args.push(op(i.src[0], w(i, 1))),
                _ => {
                    args.push(op(i.dst, w(i, 0)));
                    args.push(op(i.src[0], w(i, 1)));
                }
            },
            Enc::Sopc => {
                args.push(op(i.src[0], w(i, 1)));
                args.push(op(i.src[1], w(i, 2)));
            }
            Enc::Sopk => match i.info.form {
                Form::Hwreg => {
                    let simm = i.imm as u32 & 0xffff;
                    let hw = hwreg(simm);
                    match i.op {
                        17 => {
                            args.push(op(i.dst, 1));
                            args.push(hw);
                        }
                        18 => {
                            args.push(hw);
                            args.push(op(i.dst, 1));
                        }
                        _ => {
                            args.push(hw);
                            args.push(format!("0x{:x}", i.lit));
                        }
                    }
                }
                Form::Branch => {
                    args.push(op(i.dst, 2));
                    args.push(format!("{}", i.imm));
                }
                _ => {
                    args.push(op(i.dst, 1));
                    args.push(format!("0x{:x}", i.imm as u32 & 0xffff));
                }
            },
            Enc::Sopp => match i.info.form {
                Form::None => {}
                Form::Waitcnt => args.push(waitcnt(i.imm as u32 & 0xffff)),
                // LLVM prints the branch offset as the raw unsigned 16-bit field.
                Form::Branch => args.push(format!("{}", i.imm as u32 & 0xffff)),
                _ => {
                    if i.op == 16 || i.op == 17 {
                        args.push(format!("sendmsg({})", i.imm as u32 & 0xffff));
                    } else {
                        args.push(format!("{}", i.imm as u32 & 0xffff));
                    }
                }
            },
            Enc::Smem => {
                if i.info.form == Form::None {
                } else if i.info.form == Form::DstOnly {
                    args.push(op(i.dst, 2));
                } else {
                    args.push(op(i.dst, w(i, 0)));
                    args.push(op(i.saddr, w(i, 1)));
                    let imm = (i.words[0] >> 17) & 1 != 0;
                    if imm {
                        // A 21-bit signed byte offset: llvm prints negative ones as -0xN.
                        args.push(if i.imm < 0 {
                            format!("-0x{:x}", i.imm.unsigned_abs())
                        } else {
                            format!("0x{:x}", i.imm)
                        });
                    } else {
                        args.push(op(i.seg, 1));
                    }
                }
                if i.mflags & 1 != 0 {
                    tail.push_str(" glc");
                }
            }
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc => {
                let s0 = if i.ext == Ext::None {
                    op(i.src[0], w(i, 1))
                } else {
                    src_mod(i, 0, w(i, 1))
                };
                let s1 = if i.ext == Ext::None {
                    op(i.src[1], w(i, 2))
                } else {
                    src_mod(i, 1, w(i, 2))
                };
                match (i.enc, i.info.form) {
                    (Enc::Vop1, Form::None) => {}
                    (Enc::Vop1, _) => {
                        args.push(op(i.dst, w(i, 0)));
                        args.push(s0);
                    }
                    (Enc::Vopc, _) => {
                        if i.ext != Ext::Sdwa || i.sdst != 106 {
                            args.push(op(i.sdst, 2));
                        } else {
                            args.push("vcc".into());
                        }
                        args.push(s0);
                        args.push(s1);
                    }
                    (_, Form::CarryOut) => {
                        args.extend([op(i.dst, 1), "vcc".into(), s0, s1]);
                    }
                    (_, Form::CarryInOut) => {
                        args.extend([op(i.dst, 1), "vcc".into(), s0, s1, "vcc".into()]);
                    }
                    (_, Form::Cndmask) => {
                        args.extend([op(i.dst, 1), s0, s1, "vcc".into()]);
                    }
                    (_, Form::MadMk) => {
                        args.extend([op(i.dst, 1), s0, format!("0x{:x}", i.lit), s1]);
                    }
                    (_, Form::MadAk) => {
                        args.extend([op(i.dst, 1), s0, s1, format!("0x{:x}", i.lit)]);
                    }
                    _ => {
                        args.extend([op(i.dst, w(i, 0)), s0, s1]);
                    }
                }
                match i.ext {
                    Ext::Dpp => tail.push_str(&dpp_text(i.lit)),
                    Ext::Sdwa => tail.push_str(&sdwa_text(i)),
                    Ext::None => {}
                }
            }
            Enc::Vop3 => {
                let n = vop3_nsrc(i);
                let form = i.info.form;
                if i.vop3_of == Enc::Vopc {
                    args.push(op(i.sdst, 2));
                } else if matches!(form, Form::Vop3b | Form::CarryOut | Form::CarryInOut) {
                    args.push(op(i.dst, w(i, 0)));
                    args.push(op(i.sdst, 2));
                } else {
                    args.push(op(i.dst, w(i, 0)));
                }
                for k in 0..n {
                    let width = match (form, k) {
                        (Form::Cndmask | Form::CarryInOut, 2) => 2,
                        _ => w(i, k + 1),
                    };
                    args.push(src_mod(i, k, width));
                }
                if i.clamp {
                    tail.push_str(" clamp");
                }
                match i.omod {
                    1 => tail.push_str(" mul:2"),
                    2 => tail.push_str(" mul:4"),
                    3 => tail.push_str(" div:2"),
                    _ => {}
                }
                if i.opsel != 0 {
                    let bits: Vec<String> = (0..n)
                        .map(|k| ((i.opsel >> k) & 1).to_string())
                        .chain(std::iter::once(((i.opsel >> 3) & 1).to_string()))
                        .collect();
                    let _ = write!(tail, " op_sel:[{}]", bits.join(","));
                }
            }
            Enc::Vop3p if i.op >= 0x40 && !matches!(i.op, 0x58 | 0x59) => {
                // MAI: vdst, A, B, C, then the broadcast controls when set.
                args.push(op(i.dst, w(i, 0)));
                for k in 0..3 {
                    args.push(op(i.src[k], w(i, k + 1)));
                }
                let (cbsz, abid, blgp) = (i.imm & 7, (i.imm >> 3) & 15, (i.imm >> 7) & 7);
                if cbsz != 0 {
                    let _ = write!(tail, " cbsz:{cbsz}");
                }
                if abid != 0 {
                    let _ = write!(tail, " abid:{abid}");
                }
                if blgp != 0 {
                    let _ = write!(tail, " blgp:{blgp}");
                }
            }
            Enc::Vop3p => {
                let n = match i.op {
                    0x58 | 0x59 => 1,
                    0x00 | 0x09 | 0x0e | 0x20..=0x2b | 0x30 => 3,
                    _ => 2,
                };
                args.push(op(i.dst, w(i, 0)));
                for k in 0..n {
                    args.push(op(i.src[k], w(i, k + 1)));
                }
                let list = |v: u8, n: usize| {
                    (0..n)
                        .map(|k| ((v >> k) & 1).to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                };
                if i.op != 0x58 && i.op != 0x59 {
                    let full = (1u8 << n) - 1;
                    if i.opsel & full != 0 {
                        let _ = write!(tail, " op_sel:[{}]", list(i.opsel, n));
                    }
                    // op_sel_hi defaults to all ones, except for the mix ops where it
                    // selects f16 sources and defaults to zeros.
                    let mix = matches!(i.op, 0x20..=0x22);
                    if (mix && i.opsel_hi & full != 0) || (!mix && i.opsel_hi & full != full) {
                        let _ = write!(tail, " op_sel_hi:[{}]", list(i.opsel_hi, n));
                    }
                    if i.neg & full != 0 {
                        let _ = write!(tail, " neg_lo:[{}]", list(i.neg, n));
                    }
                    if i.neg_hi & full != 0 {
                        let _ = write!(tail, " neg_hi:[{}]", list(i.neg_hi, n));
                    }
                }
                if i.clamp {
                    tail.push_str(" clamp");
                }
            }
            Enc::Ds => {
                let ret = returns(i);
                match i.info.form {
                    Form::None => {}
                    Form::Gws => {
                        if w(i, 1) > 0 {
                            args.push(op(i.src[0], 1));
                        }
                        if i.imm != 0 {
                            let _ = write!(tail, " offset:{}", i.imm & 0xffff);
                        }
                        tail.push_str(" gds");
                    }
                    Form::Ds2 => {
                        if ret {
                            args.push(op(i.dst, w(i, 0)));
                            args.push(op(i.src[0], 1));
                        } else {
                            args.push(op(i.src[0], 1));
                            args.push(op(i.src[1], w(i, 2)));
                            args.push(op(i.src[2], w(i, 3)));
                        }
                        if i.imm & 0xff != 0 {
                            let _ = write!(tail, " offset0:{}", i.imm & 0xff);
                        }
                        if i.imm2 != 0 {
                            let _ = write!(tail, " offset1:{}", i.imm2);
                        }
                    }
                    _ => {
                        if ret {
                            args.push(op(i.dst, w(i, 0)));
                        }
                        args.push(op(i.src[0], 1));
                        if w(i, 2) > 0 {
                            args.push(op(i.src[1], w(i, 2)));
                        }
                        if w(i, 3) > 0 {
                            args.push(op(i.src[2], w(i, 3)));
                        }
                        if i.op == 61 {
                            let _ = write!(tail, " offset:{}", swizzle(i.imm as u32 & 0xffff));
                        } else if i.imm != 0 {
                            let _ = write!(tail, " offset:{}", i.imm & 0xffff);
                        }
                    }
                }
            }
            Enc::Flat => {
                let ret = returns(i);
                let vaddr = if i.src[0] == 0xffff {
                    "off".to_string()
                } else {
                    op(i.src[0], w(i, 1))
                };
                let data_w = match i.info.form {
                    Form::Atomic => w(i, 2),
                    _ => w(i, 0),
                };
                if ret {
                    args.push(op(i.dst, w(i, 0)));
                }
                args.push(vaddr);
                if i.info.form != Form::Load {
                    args.push(op(i.src[1], data_w));
                }
                if i.seg != 0 {
                    args.push(if i.saddr == 0x7f {
                        "off".into()
                    } else {
                        op(i.saddr, if i.seg == 2 { 2 } else { 1 })
                    });
                }
                if i.imm != 0 {
                    let _ = write!(tail, " offset:{}", i.imm);
                }
                tail.push_str(&cache_bits(i));
            }
            Enc::Mubuf => {
                if i.info.form != Form::None {
                    let offen = i.mflags & (1 << 6) != 0;
                    let idxen = i.mflags & (1 << 7) != 0;
                    let data_w = if i.info.form == Form::Atomic {
                        w(i, 2)
                    } else {
                        w(i, 0)
                    };
                    args.push(op(i.src[1], data_w));
                    args.push(if offen || idxen {
                        op(i.src[0], w(i, 1))
                    } else {
                        "off".into()
                    });
                    args.push(op(i.saddr, 4));
                    args.push(op(i.imm2, 1));
                    if idxen {
                        tail.push_str(" idxen");
                    }
                    if offen {
                        tail.push_str(" offen");
                    }
                    if i.imm != 0 {
                        let _ = write!(tail, " offset:{}", i.imm);
                    }
                    tail.push_str(&cache_bits(i));
                }
            }
            Enc::Mtbuf => {}
            Enc::Mimg => {
                use crate::exec::image::{A16, D16, DA, LWE, OP_SAMPLE, UNORM};
                args.push(op(i.src[1], w(i, 0)));
                args.push(op(i.src[0], 1));
                args.push(op(i.saddr, 8));
                if i.op == OP_SAMPLE {
                    args.push(op(i.imm2, 4));
                }
                let _ = write!(tail, " dmask:{:#x}", i.imm);
                let flag = |b: u16| i.seg & b != 0;
                for (on, name) in [
                    (flag(UNORM), " unorm"),
                    (i.mflags & 1 != 0, " glc"),
                    (i.mflags & 2 != 0, " slc"),
                    (flag(A16), " a16"),
                    (flag(LWE), " lwe"),
                    (flag(DA), " da"),
                    (flag(D16), " d16"),
                ] {
                    if on {
                        tail.push_str(name);
                    }
                }
            }
        }
        if !args.is_empty() {
            s.push(' ');
            s.push_str(&args.join(", "));
        }
        s.push_str(&tail);
        let _ = name_len;
        f.write_str(&s)
    }
}

fn cache_bits(i: &Inst) -> String {
    let mut t = String::new();
    if i.model == GfxModel::Gfx942 {
        if i.mflags & 1 != 0 {
            t.push_str(" sc0");
        }
        if i.mflags & 2 != 0 {
            t.push_str(" nt");
        }
        if i.mflags & 4 != 0 {
            t.push_str(" sc1");
        }
    } else {
        if i.mflags & 1 != 0 {
            t.push_str(" glc");
        }
        if i.mflags & 2 != 0 {
            t.push_str(" slc");
        }
    }
    if i.mflags & 0x10 != 0 {
        t.push_str(" lds");
    }
    t
}

fn waitcnt(v: u32) -> String {
    let vm = (v & 0xf) | ((v >> 14) & 3) << 4;
    let exp = (v >> 4) & 7;
    let lgkm = (v >> 8) & 0xf;
    let mut parts = Vec::new();
    if vm != 63 {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 15 {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        return "vmcnt(63) expcnt(7) lgkmcnt(15)".into();
    }
    parts.join(" ")
}

fn hwreg(simm: u32) -> String {
    let id = simm & 0x3f;
    let off = (simm >> 6) & 0x1f;
    let size = ((simm >> 11) & 0x1f) + 1;
    let name = match id {
        1 => "HW_REG_MODE".to_string(),
        2 => "HW_REG_STATUS".to_string(),
        3 => "HW_REG_TRAPSTS".to_string(),
        4 => "HW_REG_HW_ID".to_string(),
        5 => "HW_REG_GPR_ALLOC".to_string(),
        6 => "HW_REG_LDS_ALLOC".to_string(),
        7 => "HW_REG_IB_STS".to_string(),
        n => n.to_string(),
    };
    if off == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {off}, {size})")
    }
}

fn swizzle(off: u32) -> String {
    if off & 0x8000 != 0 {
        let l: Vec<String> = (0..4).map(|k| ((off >> (2 * k)) & 3).to_string()).collect();
        format!("swizzle(QUAD_PERM,{})", l.join(","))
    } else {
        format!("0x{off:x}")
    }
}

fn dpp_text(e: u32) -> String {
    let ctrl = (e >> 8) & 0x1ff;
    let c = match ctrl {
        0x000..=0x0ff => format!(
            "quad_perm:[{},{},{},{}]",
            ctrl & 3,
            (ctrl >> 2) & 3,
            (ctrl >> 4) & 3,
            (ctrl >> 6) & 3
        ),
        0x101..=0x10f => format!("row_shl:{}", ctrl & 0xf),
        0x111..=0x11f => format!("row_shr:{}", ctrl & 0xf),
        0x121..=0x12f => format!("row_ror:{}", ctrl & 0xf),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13c => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x142 => "row_bcast:15".into(),
        0x143 => "row_bcast:31".into(),
        0x150..=0x15f => format!("row_newbcast:{}", ctrl & 0xf),
        _ => format!("dpp_ctrl:{ctrl:#x}"),
    };
    let mut s = format!(
        " {c} row_mask:0x{:x} bank_mask:0x{:x}",
        (e >> 28) & 0xf,
        (e >> 24) & 0xf
    );
    if (e >> 19) & 1 != 0 {
        s.push_str(" bound_ctrl:1");
    }
    s
}

fn sdwa_text(i: &Inst) -> String {
    const SEL: [&str; 8] = [
        "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "?",
    ];
    const UNUSED: [&str; 4] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "?"];
    let e = i.lit;
    let mut s = String::new();
    if i.enc != Enc::Vopc {
        let _ = write!(
            s,
            " dst_sel:{} dst_unused:{}",
            SEL[((e >> 8) & 7) as usize],
            UNUSED[((e >> 11) & 3) as usize]
        );
    }
    let _ = write!(s, " src0_sel:{}", SEL[((e >> 16) & 7) as usize]);
    if i.enc != Enc::Vop1 {
        let _ = write!(s, " src1_sel:{}", SEL[((e >> 24) & 7) as usize]);
    }
    s
}
