//! The translator (`ExecConfig::jit`) against the interpreter on whole dispatches: the same
//! results, counts, watchdog stops and faults, with the figures showing that translated
//! code ran (each test fails if nothing is translated). With `HSASIM_JIT=1` in the
//! environment both sides run translated.

mod common;

use common::*;
use hsasim_isa::{run_dispatch_with_stats, DispatchError, DispatchStats, ExecConfig, GfxModel};

fn config(jit: bool) -> ExecConfig {
    ExecConfig {
        worker_threads: 1,
        compute_units: 80,
        jit,
        ..ExecConfig::BASE
    }
}

/// A hand-made kernel of one wave running `code`, under `cfg`.
fn run_handmade(
    code: &[u32],
    model: GfxModel,
    cfg: &ExecConfig,
) -> Result<DispatchStats, DispatchError> {
    let mem = Ranges::default();
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    run_dispatch_with_stats(&d, &mem, cfg)
}

/// A scalar loop (native `s_add_u32` and `s_cmp_eq_u32`, the branch a call-out): every
/// count and the watchdog's stop are the interpreter's, also when the allowance ends inside
/// what would be a region.
#[test]
fn the_watchdog_stops_translated_loops_where_the_interpreter_does() {
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
            for limit in [total, total - 1, total - 2, total / 2] {
                let cfg = |jit| ExecConfig {
                    max_wave_instructions: limit,
                    ..config(jit)
                };
                let interpreted = run_handmade(&code, model, &cfg(false));
                let translated = run_handmade(&code, model, &cfg(true));
                match (&interpreted, &translated) {
                    (Ok(i), Ok(t)) => {
                        assert_eq!(i.instructions, total);
                        assert_eq!(t.instructions, total);
                        // The class counts too, whether trips ran translated (several
                        // inside one region call), interpreted near a periodic check, or
                        // through the call-out of the branch.
                        assert_eq!(i.mix, t.mix, "limit {limit}");
                        // Near the periodic checks a region that would cross one is
                        // interpreted instead, so not every trip runs translated.
                        assert!(t.translated >= iterations as u64, "{t:?}");
                        assert!(t.regions_compiled >= 1, "{t:?}");
                    }
                    (Err(i), Err(t)) => {
                        assert!(matches!(i, DispatchError::Watchdog { .. }), "{i}");
                        assert_eq!(i, t, "limit {limit}");
                    }
                    _ => panic!(
                        "limit {limit}: interpreter {interpreted:?}, translator {translated:?}"
                    ),
                }
            }
        }
    }
}

struct VectorAdd {
    lo: Loaded,
    mem: Ranges,
    a: Vec<f32>,
    b: Vec<f32>,
    n: usize,
}

impl VectorAdd {
    fn new(model: GfxModel, n: usize) -> VectorAdd {
        let elf = compile(&kernel_source("vector_add.hip"), model, 5);
        let lo = Loaded::new(&elf);
        let mem = Ranges::default();
        mem.add(lo.image.addr(), lo.image.len as u64);
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
        mem.add_slice(&a);
        mem.add_slice(&b);
        VectorAdd { lo, mem, a, b, n }
    }

    /// Runs c = a + b with `c` the output address (mapped by the caller as it likes).
    fn run(&self, model: GfxModel, c: u64, jit: bool) -> Result<DispatchStats, DispatchError> {
        let mut ka = Kernargs::new();
        ka.put(0, self.a.as_ptr() as u64);
        ka.put(8, self.b.as_ptr() as u64);
        ka.put(16, c);
        ka.put(24, self.n as i32);
        let grid = [self.n as u32, 1, 1];
        ka.put_hidden_v5(32, grid, [64, 1, 1]);
        self.mem.add(ka.addr(), 512);
        let kd = self.lo.symbol("vector_add.kd");
        let (d, _p) = packet(model, kd, ka.addr(), grid, [64, 1, 1], 0, &self.mem);
        run_dispatch_with_stats(&d, &self.mem, &config(jit))
    }
}

#[test]
fn translated_vector_add_matches_the_interpreter() {
    for model in MODELS {
        let n = 64 * 40 + 17;
        let k = VectorAdd::new(model, n);
        let mut outputs = Vec::new();
        for jit in [false, true] {
            let mut c = vec![-1.0f32; n + 1];
            k.mem.add_slice(&c);
            let stats = k.run(model, c.as_mut_ptr() as u64, jit).expect("runs");
            for (i, got) in c[..n].iter().enumerate() {
                assert_eq!(*got, k.a[i] + k.b[i], "jit {jit} element {i}");
            }
            assert_eq!(c[n], -1.0, "store past the end");
            if jit {
                assert!(stats.translated > 0, "{stats:?}");
                // The global loads and stores are call-outs in this milestone.
                assert!(stats.called_out > 0, "{stats:?}");
            }
            let interpreted: u64 = stats.interpreted_ops.values().sum();
            assert_eq!(interpreted, stats.instructions - stats.translated);
            outputs.push((stats.instructions, stats.lane_ops, stats.mix));
        }
        // The class counts of the loads and stores (call-outs) and the native arithmetic.
        assert_eq!(
            outputs[0], outputs[1],
            "instructions, lane-ops and class counts"
        );
    }
}

/// The output holds the first workgroup's 64 floats only: the second workgroup's first
/// store faults, from inside a translated region (the first workgroup made it hot), with
/// the interpreter's error: same address, instruction, pc, workgroup and wave.
#[test]
fn a_fault_inside_a_translated_region_is_the_interpreters() {
    for model in MODELS {
        let n = 64 * 4;
        let k = VectorAdd::new(model, n);
        let mut errors = Vec::new();
        let mut c = vec![0f32; 64];
        k.mem.add_slice(&c);
        for jit in [false, true] {
            let e = k
                .run(model, c.as_mut_ptr() as u64, jit)
                .expect_err("the second workgroup's store faults");
            match &e {
                DispatchError::MemoryFault {
                    address, workgroup, ..
                } => {
                    assert_eq!(*address, c.as_ptr() as u64 + 256);
                    assert_eq!(*workgroup, [1, 0, 0]);
                }
                e => panic!("expected a memory fault, got {e}"),
            }
            errors.push(e);
        }
        assert_eq!(errors[0], errors[1]);
        // Regions did run, with call-outs (the loads and stores are call-outs).
        let mut c = vec![0f32; n];
        k.mem.add_slice(&c);
        let stats = k.run(model, c.as_mut_ptr() as u64, true).expect("runs");
        assert!(stats.called_out > 0 && stats.translated > 0, "{stats:?}");
    }
}
