//! Bad input stops a dispatch with an error naming the cause, never a panic.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, DispatchError, ExecConfig, GfxModel, MAX_DECODE_CACHE_BYTES};

const CFG: ExecConfig = ExecConfig {
    worker_threads: 2,
    compute_units: 80,
    ..ExecConfig::BASE
};

/// A hand-made kernel running `code`.
fn handmade(code: &[u32], mem: &Ranges) -> (Aligned, u64) {
    let (mut buf, addr) = handmade_kernel();
    code_words(&mut buf, code);
    // Only the descriptor and the code words are readable: fetching past them faults.
    mem.add(addr, 256 + 4 * code.len() as u64);
    (buf, addr)
}

fn run_handmade(code: &[u32], model: GfxModel) -> DispatchError {
    let mem = Ranges::default();
    let (_buf, kd) = handmade(code, &mem);
    let (d, _p) = packet(model, kd, 0, [256, 1, 1], [64, 1, 1], 0, &mem);
    run_dispatch(&d, &mem, &CFG).expect_err("the dispatch must fail")
}

#[test]
fn unknown_instruction_is_reported_with_encoding_and_opcode() {
    for model in MODELS {
        // SOP2 opcode 53 is unassigned on GFX9.
        let word = 0x8000_0000 | (53 << 23);
        match run_handmade(&[0xbf80_0000, word, 0xbf81_0000], model) {
            DispatchError::UnknownInstruction { pc, words, detail } => {
                assert_eq!(words[0], word);
                assert!(detail.contains("SOP2 opcode 53"), "{detail}");
                assert_eq!(pc % 256, 4, "pc {pc:#x}");
            }
            e => panic!("expected UnknownInstruction, got {e}"),
        }
        // MIMG: gfx942 has none; on gfx90a hsasim does not model image atomics (opcode 16).
        let e = run_handmade(&[0xf040_0000, 0, 0xbf81_0000], model);
        assert!(matches!(e, DispatchError::UnknownInstruction { .. }), "{e}");
        assert!(e.to_string().contains("MIMG"), "{e}");
    }
}

#[test]
fn model_specific_opcode_is_unknown_on_the_other_model() {
    // v_lshl_add_u64 exists on gfx942 only.
    let e = run_handmade(&[0xd208_0004, 0x0401_0004, 0xbf81_0000], GfxModel::Gfx90a);
    assert!(matches!(e, DispatchError::UnknownInstruction { .. }), "{e}");
}

#[test]
fn s_trap_and_s_sethalt_are_illegal() {
    for model in MODELS {
        let e = run_handmade(&[0xbf92_0002, 0xbf81_0000], model);
        assert!(matches!(e, DispatchError::Illegal { .. }), "{e}");
        assert!(e.to_string().contains("s_trap"), "{e}");
        let e = run_handmade(&[0xbf8d_0001, 0xbf81_0000], model);
        assert!(matches!(e, DispatchError::Illegal { .. }), "{e}");
    }
}

#[test]
fn branch_out_of_the_code_is_illegal() {
    for model in MODELS {
        // s_branch 1000: far past the readable code.
        let e = run_handmade(&[0xbf82_03e8, 0xbf81_0000], model);
        match e {
            DispatchError::Illegal { pc, .. } => assert!(pc > 1000 * 4, "pc {pc:#x}"),
            e => panic!("expected Illegal, got {e}"),
        }
        // Running off the end of the code without s_endpgm.
        let e = run_handmade(&[0xbf80_0000], model);
        assert!(matches!(e, DispatchError::Illegal { .. }), "{e}");
    }
}

#[test]
fn truncated_literal_at_the_end_of_code_is_unknown_not_a_panic() {
    // s_and_b32 s3, s3, <literal> with the literal word missing.
    let e = run_handmade(&[0x8603_ff03], GfxModel::Gfx942);
    assert!(matches!(e, DispatchError::UnknownInstruction { .. }), "{e}");
}

#[test]
fn bad_kernel_object_is_an_invalid_dispatch() {
    let mem = Ranges::default();
    let (d, _p) = packet(
        GfxModel::Gfx942,
        0x1234_0000,
        0,
        [64, 1, 1],
        [64, 1, 1],
        0,
        &mem,
    );
    let e = run_dispatch(&d, &mem, &CFG).unwrap_err();
    assert!(matches!(e, DispatchError::InvalidDispatch(_)), "{e}");
}

/// Past defect (rocPRIM's `sort_single_kernel` for bf16 keys on gfx90a, 34,832 bytes of
/// static LDS, and three `block_radix_sort` cases): a packet's `group_segment_size` is the
/// workgroup's whole group segment, static part included (HSA's AQL packet; AMD's runtime
/// and hipshim send static + dynamic), but the limit check added the descriptor's static
/// size to it again, so a kernel with more than 32 KiB of static LDS was refused.
#[test]
fn group_segment_size_counts_the_static_lds_once() {
    const STATIC_LDS: u32 = 40_000;
    // v_mov_b32 v1, STATIC_LDS - 4; ds_write_b32 v1, v0; s_waitcnt lgkmcnt(0); s_endpgm:
    // the last dword of the static LDS, which faults if less was allocated.
    let code = [
        0x7e02_02ff,
        STATIC_LDS - 4,
        0xd81a_0000,
        0x0000_0001,
        0xbf8c_c07f,
        0xbf81_0000,
    ];
    for model in MODELS {
        let mem = Ranges::default();
        let (mut buf, kd) = handmade(&code, &mem);
        // group_segment_fixed_size is the descriptor's first field.
        buf.bytes()[..4].copy_from_slice(&STATIC_LDS.to_le_bytes());
        let dispatch = |group_segment: u32| {
            let (d, _p) = packet(model, kd, 0, [256, 1, 1], [64, 1, 1], group_segment, &mem);
            run_dispatch(&d, &mem, &CFG)
        };
        // As runtimes send it (no dynamic LDS), and one that leaves the static part out.
        for group_segment in [STATIC_LDS, 0] {
            if let Err(e) = dispatch(group_segment) {
                panic!("{model:?}, packet group segment {group_segment}: {e}");
            }
        }
        // Static plus dynamic past the 64 KiB of LDS is still refused, naming the size.
        let e = dispatch(64 * 1024 + 4).expect_err("65,540 bytes of LDS");
        assert!(matches!(e, DispatchError::InvalidDispatch(_)), "{e}");
        assert!(e.to_string().contains("65540 bytes"), "{e}");
    }
}

#[test]
fn out_of_bounds_store_is_a_memory_fault_naming_the_address() {
    for model in MODELS {
        let elf = compile(&kernel_source("vector_add.hip"), model, 5);
        let lo = Loaded::new(&elf);
        let mem = Ranges::default();
        mem.add(lo.image.addr(), lo.image.len as u64);
        let kd = lo.symbol("vector_add.kd");
        let n = 1000usize;
        let a = vec![1f32; n];
        let b = vec![2f32; n];
        mem.add_slice(&a);
        mem.add_slice(&b);
        let bad_c: u64 = 0x7000_0000_0000;
        let mut ka = Kernargs::new();
        ka.put(0, a.as_ptr() as u64);
        ka.put(8, b.as_ptr() as u64);
        ka.put(16, bad_c);
        ka.put(24, n as i32);
        ka.put_hidden_v5(32, [n as u32, 1, 1], [64, 1, 1]);
        mem.add(ka.addr(), 512);
        let (d, _p) = packet(model, kd, ka.addr(), [n as u32, 1, 1], [64, 1, 1], 0, &mem);
        let cfg = ExecConfig {
            worker_threads: 1,
            compute_units: 80,
            ..ExecConfig::BASE
        };
        match run_dispatch(&d, &mem, &cfg).unwrap_err() {
            DispatchError::MemoryFault {
                address,
                write,
                instruction,
                workgroup,
                wave,
                ..
            } => {
                assert_eq!(address, bad_c);
                assert!(write);
                assert!(
                    instruction.starts_with("global_store_dword"),
                    "{instruction}"
                );
                assert_eq!(workgroup, [0, 0, 0]);
                assert_eq!(wave, 0);
            }
            e => panic!("expected MemoryFault, got {e}"),
        }
    }
}

/// Runs a hand-made kernel of one wave; the dispatch's instruction count on success.
fn run_counted(
    code: &[u32],
    model: GfxModel,
    max_wave_instructions: u64,
) -> Result<u64, DispatchError> {
    let mem = Ranges::default();
    let (_buf, kd) = handmade(code, &mem);
    let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    let cfg = ExecConfig {
        max_wave_instructions,
        ..CFG
    };
    hsasim_isa::run_dispatch_with_stats(&d, &mem, &cfg).map(|s| s.instructions)
}

/// The decoder reads ahead through straight-line code, past words that do not decode and
/// opcodes with no semantics: only running one is an error.
#[test]
fn code_the_wave_never_reaches_is_not_an_error() {
    const UNKNOWN: u32 = 0x8000_0000 | (53 << 23);
    const S_ENDPGM: u32 = 0xbf81_0000;
    for model in MODELS {
        // s_branch 1 over the word.
        assert_eq!(
            run_counted(&[0xbf82_0001, UNKNOWN, S_ENDPGM], model, u64::MAX),
            Ok(2)
        );
        // s_cbranch_scc0 1, taken: SCC starts clear.
        assert_eq!(
            run_counted(&[0xbf84_0001, UNKNOWN, S_ENDPGM], model, u64::MAX),
            Ok(2)
        );
        // s_cbranch_scc1 1, not taken: the wave runs into the word.
        match run_counted(&[0xbf85_0001, UNKNOWN, S_ENDPGM], model, u64::MAX) {
            Err(DispatchError::UnknownInstruction { pc, words, .. }) => {
                assert_eq!((pc % 256, words[0]), (4, UNKNOWN));
            }
            r => panic!("expected UnknownInstruction, got {r:?}"),
        }
    }
}

/// A loop whose back edge lands in the middle of the straight-line code decoded with the
/// kernel's first instruction runs every instruction once per iteration: the watchdog
/// allows exactly the count, and stops the wave one short of it at the last instruction.
/// Large counts cross the periodic checks, which share the watchdog's countdown.
#[test]
fn loops_run_their_instructions_exactly_and_the_watchdog_counts_them() {
    for model in MODELS {
        for iterations in [3u32, 5000] {
            let code = [
                0xb000_0000 | iterations, // s_movk_i32 s0, iterations
                0x8000_c100,              // s_add_u32 s0, s0, -1
                0xbf06_8000,              // s_cmp_eq_u32 s0, 0
                0xbf84_fffd,              // s_cbranch_scc0 -3 (to s_add_u32)
                0xbf81_0000,              // s_endpgm
            ];
            let total = 2 + 3 * iterations as u64;
            assert_eq!(run_counted(&code, model, total), Ok(total));
            match run_counted(&code, model, total - 1) {
                Err(DispatchError::Watchdog { pc, limit, .. }) => {
                    assert_eq!((pc % 256, limit), (16, total - 1));
                }
                r => panic!("expected the watchdog, got {r:?}"),
            }
        }
    }
}

/// A kernel that jumps (`s_setpc_b64`) to `target`: `s_mov_b32 s0, lo; s_mov_b32 s1, hi;
/// s_setpc_b64 s[0:1]` (encodings from `llvm-mc-19 -mcpu=gfx942 -show-encoding`).
fn jump_to(target: u64) -> [u32; 6] {
    [
        0xbe80_00ff,
        target as u32,
        0xbe81_00ff,
        (target >> 32) as u32,
        0xbe80_1d00,
        0xbf81_0000,
    ]
}

/// A data array of `words` words that all decode (as `s_nop 0`): the worst case for a
/// program counter run off into data, as nothing in it stops the wave.
fn nop_data(words: usize, mem: &Ranges) -> Aligned {
    let mut data = Aligned::new(4 * words, 4096);
    for w in data.bytes().chunks_exact_mut(4) {
        w.copy_from_slice(&0xbf80_0000u32.to_le_bytes());
    }
    mem.add(data.addr(), 4 * words as u64);
    data
}

#[test]
fn a_jump_out_of_the_kernels_code_faults_at_the_jump_target() {
    for model in MODELS {
        let mem = Ranges::default();
        let data = nop_data(1024, &mem);
        let (_buf, kd) = handmade(&jump_to(data.addr() + 64), &mem);
        let (mut d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
        let code = (kd + 256, kd + 256 + 4 * 6);
        d.code = Some(code);
        let e = run_dispatch(&d, &mem, &CFG).expect_err("the jump into data must fault");
        match &e {
            DispatchError::Illegal { pc, reason } => {
                assert_eq!(*pc, data.addr() + 64);
                assert!(reason.contains("left the kernel's code"), "{reason}");
                assert!(reason.contains(&format!("{:#x}", code.0)), "{reason}");
            }
            e => panic!("expected Illegal, got {e}"),
        }
    }
}

#[test]
fn a_program_counter_run_off_into_data_stops_at_the_decode_cache_bound() {
    // No code range known (a runtime that does not say): 4 MiB of data that decodes, more
    // than the bound lets one cache hold. The wave faults once the cache is full, with its
    // size, instead of growing it until the host runs out of memory.
    let mem = Ranges::default();
    let data = nop_data(1 << 20, &mem);
    let (_buf, kd) = handmade(&jump_to(data.addr()), &mem);
    let (d, _p) = packet(GfxModel::Gfx942, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    let e = run_dispatch(&d, &mem, &CFG).expect_err("the run into data must fault");
    let DispatchError::Illegal { pc, reason } = &e else {
        panic!("expected Illegal, got {e}");
    };
    assert!(reason.contains("decode cache holds"), "{reason}");
    let held: usize = reason
        .split("holds ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {reason}"));
    assert!(
        held <= MAX_DECODE_CACHE_BYTES,
        "{held} > {MAX_DECODE_CACHE_BYTES}"
    );
    assert!(
        *pc > data.addr() && *pc < data.addr() + (4 << 20),
        "pc {pc:#x}"
    );
}
