//! Every native instruction against its interpreter handler: each opcode of the encodings
//! the translator handles that [`Native::of`] takes, in random operand forms (VGPRs,
//! SGPRs, inline constants, literals), on random registers, EXEC masks and MODE values.
//! Results must be the same bits (but for NaN lanes where both give a NaN: the handlers'
//! payloads depend on which operand order the host compiler chose, as the differential
//! tester allows), and the same SCC, EXEC, `lane_ops` and program counters.

use super::emit::Native;
use super::*;
use crate::api::{GfxModel, GuestMemory};
use crate::decode::decode_for_exec;
use crate::exec::tlb::Tlb;
use crate::exec::DispatchInfo;
use crate::inst::Enc;
use crate::wave::LANES;

struct NoMemory;

impl GuestMemory for NoMemory {
    fn translate(&self, _address: u64, _len: u64) -> Option<u64> {
        None
    }
}

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A lane value: random bits, or a float that tests the corners.
    fn lane(&mut self) -> u32 {
        const SPECIAL: [u32; 12] = [
            0,
            0x8000_0000,
            0x3f80_0000, // 1.0
            0xbf80_0000, // -1.0
            0x0000_0001, // smallest denormal
            0x807f_ffff, // largest negative denormal
            0x7f80_0000, // inf
            0xff80_0000, // -inf
            0x7fc0_0000, // quiet NaN
            0x7f80_0001, // signalling NaN
            0x7f7f_ffff, // largest finite
            0x0080_0000, // smallest normal
        ];
        match self.below(4) {
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            // Small integers, so integer compares and shifts see equal and small values.
            1 => self.below(8) as u32,
            _ => self.next() as u32,
        }
    }
}

/// A 9-bit source operand code: VGPR, SGPR, inline constant or literal.
fn source(r: &mut Rng) -> u32 {
    match r.below(5) {
        0 | 1 => 256 + r.below(8) as u32,
        2 => r.below(8) as u32,
        3 => [128, 129, 192, 193, 200, 240, 241, 242, 243, 246, 248][r.below(11) as usize],
        _ => 255,
    }
}

fn scalar_source(r: &mut Rng) -> u32 {
    match r.below(4) {
        0 | 1 => r.below(8) as u32,
        2 => [128, 129, 192, 193, 240, 242][r.below(6) as usize],
        _ => 255,
    }
}

/// Instruction words of each encoding with opcode `op` and random operands.
fn words(enc: Enc, op: u32, r: &mut Rng) -> Vec<u32> {
    let lit = r.lane();
    let vdst = r.below(8) as u32;
    let mut w = match enc {
        Enc::Vop1 => vec![0x7e00_0000 | vdst << 17 | op << 9 | source(r)],
        Enc::Vop2 => vec![op << 25 | vdst << 17 | (r.below(8) as u32) << 9 | source(r)],
        Enc::Vopc => vec![0x7c00_0000 | op << 17 | (r.below(8) as u32) << 9 | source(r)],
        Enc::Vop3 => {
            // Literals are not allowed in VOP3 on GFX9: registers and constants only.
            let s = |r: &mut Rng| loop {
                let c = source(r);
                if c != 255 {
                    break c;
                }
            };
            vec![0xd000_0000 | op << 16 | vdst, s(r) | s(r) << 9 | s(r) << 18]
        }
        Enc::Sop1 => vec![0xbe80_0000 | (r.below(8) as u32) << 16 | op << 8 | scalar_source(r)],
        Enc::Sop2 => vec![
            0x8000_0000
                | op << 23
                | (r.below(8) as u32) << 16
                | scalar_source(r) << 8
                | scalar_source(r),
        ],
        Enc::Sopc => vec![0xbf00_0000 | op << 16 | scalar_source(r) << 8 | scalar_source(r)],
        // Branch offsets around the instruction itself (-1: to itself).
        Enc::Sopp => vec![0xbf80_0000 | op << 16 | (r.below(5) as u32).wrapping_sub(2) & 0xffff],
        _ => unreachable!(),
    };
    w.push(lit);
    w.push(lit);
    w
}

fn random_wave(r: &mut Rng) -> Wave {
    let mut w = Wave::new();
    for s in w.s.iter_mut() {
        *s = r.lane();
    }
    for row in 0..8 {
        for l in 0..LANES {
            w.v[256 + row][l] = r.lane();
            w.v[row][l] = r.lane();
        }
    }
    let exec = match r.below(4) {
        0 => u64::MAX,
        1 => 0,
        _ => r.next(),
    };
    w.set_exec(exec);
    w.scc = r.below(2) == 1;
    // HIP's default (nearest even, denormals kept) most of the time, so that most trials
    // run native code; otherwise anything, which the region's entry check must refuse
    // for float code.
    w.mode = match r.below(3) {
        0 | 1 => 0x30 | (r.below(4) as u32) << 6 | 0x200,
        _ => r.below(0x400) as u32,
    };
    w.pc = 0x1000;
    w
}

fn same_wave(a: &Wave, b: &Wave, what: &str) {
    for k in 0..128 {
        assert_eq!(a.s[k], b.s[k], "{what}: s[{k}]");
    }
    for row in 0..512 {
        for l in 0..LANES {
            let (x, y) = (a.v[row][l], b.v[row][l]);
            let both_nan = f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan();
            assert!(
                x == y || both_nan,
                "{what}: v[{row}][{l}] = {x:#010x}, handler {y:#010x}"
            );
        }
    }
    assert_eq!(a.scc, b.scc, "{what}: scc");
    assert_eq!(a.lane_ops, b.lane_ops, "{what}: lane_ops");
    assert_eq!(a.pc, b.pc, "{what}: pc");
    assert_eq!(a.mode, b.mode, "{what}: mode");
}

fn copy_wave(w: &Wave) -> Wave {
    let mut c = Wave::new();
    c.s = w.s;
    c.v.0.copy_from_slice(&w.v.0);
    c.pc = w.pc;
    c.scc = w.scc;
    c.mode = w.mode;
    c
}

/// Opcode ranges per encoding (VOP3 covers the promoted VOP1/VOP2 ops and VOP3-only ones).
const ENCODINGS: [(Enc, u32); 8] = [
    (Enc::Vop1, 128),
    (Enc::Vop2, 64),
    (Enc::Vop3, 0x200),
    (Enc::Sop1, 64),
    (Enc::Sop2, 64),
    (Enc::Sopc, 32),
    (Enc::Vopc, 256),
    (Enc::Sopp, 16),
];

#[test]
fn every_native_instruction_matches_its_handler() {
    let info = DispatchInfo {
        model: GfxModel::Gfx942,
        compute_units: 80,
        private_segment_size: 0,
        cooperative: false,
        timing: None,
    };
    let tlb = Tlb::default();
    let mut lds = [0u8; 16];
    let mut jit = Jit::new().expect("a translator for this host");
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut covered = std::collections::BTreeSet::new();
    for model in [GfxModel::Gfx942, GfxModel::Gfx90a] {
        for (enc, ops) in ENCODINGS {
            for op in 0..ops {
                for trial in 0..24 {
                    let words = words(enc, op, &mut r);
                    let Ok(d) = decode_for_exec(model, &words) else {
                        break;
                    };
                    let (Some(run), true) = (d.exec, d.inst.enc == enc) else {
                        break;
                    };
                    let w = random_wave(&mut r);
                    let Some(native) = Native::of(&d.inst, &w, jit.fma) else {
                        continue;
                    };
                    let name = d.inst.info.name;
                    covered.insert(name);
                    let what = format!("{model:?} {} trial {trial} ({native:?})", d.inst);
                    let next_pc = w.pc + u64::from(d.inst.len);
                    let id = jit
                        .translate(
                            vec![RegionInst {
                                run,
                                class: crate::mix::class_of(&d.inst),
                                inst: d.inst,
                                pc: w.pc,
                                next_pc,
                                called_out: 0,
                            }],
                            &w,
                        )
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let mut by_handler = copy_wave(&w);
                    let mut by_region = copy_wave(&w);
                    let mem = NoMemory;
                    let mut ctx = Ctx::new(&mem, &tlb, &mut lds, &info, [0; 3], 0);
                    by_handler.pc = next_pc;
                    ctx.pc = w.pc;
                    let step = run(&mut by_handler, &d.inst, &mut ctx).expect("handler");
                    assert_eq!(step, Step::Continue);
                    let (n, exit) = jit.region(id).run(&mut by_region, &mut ctx, 1);
                    assert_eq!(exit.called_out, 0, "{what}");
                    let refused = native.is_float() && w.mode & 0x3f != 0x30;
                    if refused {
                        // The entry check refused the mode: nothing ran (the run loop
                        // would interpret it).
                        assert_eq!(n, 0, "{what}");
                        same_wave(&by_region, &w, &what);
                        continue;
                    }
                    assert_eq!(n, 1, "{what}");
                    same_wave(&by_region, &by_handler, &what);
                    assert_eq!(by_region.exec(), by_handler.exec());
                    assert_eq!(ctx.pc, w.pc, "{what}: ctx.pc");
                }
            }
        }
    }
    // The families the translator is meant to cover are all exercised.
    for name in [
        "v_mov_b32",
        "v_add_f32",
        "v_fma_f32",
        "v_fmac_f32",
        "v_mac_f32",
        "v_fmamk_f32",
        "v_fmaak_f32",
        "v_add_u32",
        "v_lshlrev_b32",
        "v_cndmask_b32",
        "v_max_i32",
        "s_mov_b32",
        "s_add_u32",
        "s_sub_i32",
        "s_lshl_b32",
        "s_cselect_b32",
        "s_cmp_lt_i32",
        "s_cmp_ge_u32",
        "s_waitcnt",
        "v_cmp_lt_u32",
        "v_cmp_ge_i32",
        "v_cmp_gt_f32",
        "v_cmp_nlt_f32",
        "s_and_saveexec_b64",
        "s_or_b64",
        "s_andn2_b64",
        "s_cselect_b64",
        "s_branch",
        "s_cbranch_scc0",
        "s_cbranch_vccnz",
        "s_cbranch_execz",
    ] {
        assert!(covered.contains(name), "{name} not exercised: {covered:?}");
    }
}

/// A region of native instructions and call-outs: a call-out that fails leaves the region
/// with the instructions before it counted and its error; one that returns a step leaves
/// with the step; the program counters are the interpreter's throughout.
#[test]
fn call_outs_leave_the_region_with_their_outcome() {
    let info = DispatchInfo {
        model: GfxModel::Gfx942,
        compute_units: 80,
        private_segment_size: 0,
        cooperative: false,
        timing: None,
    };
    let tlb = Tlb::default();
    let mut lds = [0u8; 16];
    let mut jit = Jit::new().expect("a translator for this host");
    let model = GfxModel::Gfx942;
    let decode = |words: &[u32]| decode_for_exec(model, words).expect("decodes");
    // v_add_u32 v1, v2, v3; s_movk_i32 s5, 7 (a call-out); global_load_dword v0, v[0:1],
    // off (a call-out that faults: nothing is mapped); v_mov_b32 v4, v1.
    let code: [&[u32]; 4] = [
        &[0x6802_0702],
        &[0xb005_0007],
        &[0xdc50_8000, 0x007f_0000],
        &[0x7e08_0301],
    ];
    let mut pc = 0x2000u64;
    let mut insts = Vec::new();
    for words in code {
        let d = decode(words);
        let next_pc = pc + u64::from(d.inst.len);
        insts.push(RegionInst {
            run: d.exec.expect("a handler"),
            class: crate::mix::class_of(&d.inst),
            inst: d.inst,
            pc,
            next_pc,
            called_out: 0,
        });
        pc = next_pc;
    }
    let pcs: Vec<(u64, u64)> = insts.iter().map(|ri| (ri.pc, ri.next_pc)).collect();
    let id = jit.translate(insts, &Wave::new()).expect("translates");
    let mut w = Wave::new();
    w.set_exec(u64::MAX);
    w.mode = 0x3f0;
    for l in 0..LANES {
        w.v[2][l] = l as u32;
        w.v[3][l] = 1000;
    }
    let mem = NoMemory;
    let mut ctx = Ctx::new(&mem, &tlb, &mut lds, &info, [0; 3], 0);
    let (n, exit) = jit.region(id).run(&mut w, &mut ctx, 4);
    assert_eq!(n, 3, "the add, the move and the faulting load ran");
    assert_eq!(w.s[5], 7);
    assert_eq!(exit.called_out, 2);
    match exit.leave {
        Leave::Error(e) => match *e {
            DispatchError::MemoryFault { pc, .. } => assert_eq!(pc, pcs[2].0),
            e => panic!("expected a memory fault, got {e}"),
        },
        _ => panic!("expected the load's error"),
    }
    assert_eq!(
        w.pc, pcs[2].1,
        "the wave's pc is past the faulting instruction"
    );
    assert_eq!(ctx.pc, pcs[2].0);
    assert_eq!(w.v[1][5], 1005, "the add before the fault ran");
    assert_eq!(w.v[4][5], 0, "the move after it did not");
    assert_eq!(
        w.lane_ops, 64,
        "lanes of the add (the load faulted before counting)"
    );
}

/// Runs of native instructions go scalar ones first, then the vector ones chunk by chunk
/// (all of them on 4 lanes before the next 4): random runs of both over a few registers
/// (so that they read what earlier ones wrote, in place too, vector ones the SGPRs and
/// EXEC that scalar ones wrote) must leave what the handlers leave one after the other.
#[test]
fn native_runs_match_their_handlers_in_order() {
    let info = DispatchInfo {
        model: GfxModel::Gfx942,
        compute_units: 80,
        private_segment_size: 0,
        cooperative: false,
        timing: None,
    };
    let tlb = Tlb::default();
    let mut lds = [0u8; 16];
    let mut jit = Jit::new().expect("a translator for this host");
    let mut r = Rng(0x1234_5678_9abc_def1);
    let model = GfxModel::Gfx942;
    for trial in 0..300 {
        let mut w = random_wave(&mut r);
        w.mode = 0x3f0;
        let len = 2 + r.below(7) as usize;
        let mut insts = Vec::new();
        let mut pc = w.pc;
        while insts.len() < len {
            let (enc, ops) = ENCODINGS[r.below(ENCODINGS.len() as u64) as usize];
            let words = words(enc, r.below(u64::from(ops)) as u32, &mut r);
            let Ok(mut d) = decode_for_exec(model, &words) else {
                continue;
            };
            if matches!(d.inst.enc, Enc::Sop1 | Enc::Sop2) && r.below(4) == 0 {
                // Now and then a scalar result goes to EXEC, which later vector
                // instructions must see.
                d.inst.dst = 126 + r.below(2) as u16;
            }
            if !matches!(
                Native::of(&d.inst, &w, jit.fma),
                Some(
                    Native::Valu { .. }
                        | Native::Salu { .. }
                        | Native::Salu64 { .. }
                        | Native::Cmp { .. }
                )
            ) {
                continue;
            }
            let next_pc = pc + u64::from(d.inst.len);
            insts.push(RegionInst {
                run: d.exec.expect("a handler"),
                class: crate::mix::class_of(&d.inst),
                inst: d.inst,
                pc,
                next_pc,
                called_out: 0,
            });
            pc = next_pc;
        }
        let listing: Vec<String> = insts.iter().map(|ri| ri.inst.to_string()).collect();
        let what = format!("trial {trial}: {}", listing.join("; "));
        let mut by_handler = copy_wave(&w);
        let mem = NoMemory;
        let mut ctx = Ctx::new(&mem, &tlb, &mut lds, &info, [0; 3], 0);
        for ri in &insts {
            by_handler.pc = ri.next_pc;
            ctx.pc = ri.pc;
            (ri.run)(&mut by_handler, &ri.inst, &mut ctx).expect("handler");
        }
        let id = jit
            .translate(insts, &w)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut by_region = copy_wave(&w);
        let (n, exit) = jit.region(id).run(&mut by_region, &mut ctx, len as u64);
        assert_eq!((n, exit.called_out), (len as u64, 0), "{what}");
        same_wave(&by_region, &by_handler, &what);
    }
}
