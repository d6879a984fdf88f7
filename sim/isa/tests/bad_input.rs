//! Bad input from real compiler output: code for an ISA hsasim does not model, a stack
//! overflow, an endless loop (the watchdog), and the MODE register's denormal flush.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, DispatchError, ExecConfig, GfxModel};
use std::process::Command;

const CFG: ExecConfig = ExecConfig {
    worker_threads: 2,
    compute_units: 80,
    ..ExecConfig::BASE
};

/// Builds `bad_input.hip` for any offload arch (gfx10+ included) with extra flags.
fn compile_for(arch: &str, extra: &[&str]) -> Vec<u8> {
    let out = std::env::temp_dir().join(format!(
        "hsasim-bad-input-{}-{arch}-{}.co",
        std::process::id(),
        extra.len()
    ));
    let status = Command::new("clang++-19")
        .args(["-x", "hip", "-nogpuinc", "-nogpulib", "-O3"])
        .arg(format!("--offload-arch={arch}"))
        .args(["--cuda-device-only", "--no-gpu-bundle-output"])
        .args(extra)
        .arg(kernel_source("bad_input.hip"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang++-19 must be installed");
    assert!(status.success(), "clang failed for {arch}");
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
}

struct Setup {
    lo: Loaded,
    mem: Ranges,
}

impl Setup {
    fn new(elf: &[u8]) -> Setup {
        let lo = Loaded::new(elf);
        let mem = Ranges::default();
        mem.add(lo.image.addr(), lo.image.len as u64);
        Setup { lo, mem }
    }

    fn dispatch(
        &self,
        model: GfxModel,
        name: &str,
        ka: &mut Kernargs,
        explicit: usize,
        wg: u16,
        limits: Option<ExecConfig>,
    ) -> Result<(), DispatchError> {
        let kd = self.lo.symbol(&format!("{name}.kd"));
        ka.put_hidden_v5(explicit.next_multiple_of(8), [wg as u32, 1, 1], [wg, 1, 1]);
        self.mem.add(ka.addr(), 512);
        let (d, _p) = packet(
            model,
            kd,
            ka.addr(),
            [wg as u32, 1, 1],
            [wg, 1, 1],
            0,
            &self.mem,
        );
        run_dispatch(&d, &self.mem, &limits.unwrap_or(CFG))
    }
}

#[test]
fn gfx10_code_objects_are_refused_naming_the_cause() {
    // Wave32 (the RDNA default) and wave64 gfx10 code: both stop before running.
    for (extra, needle) in [(&[][..], "wave32"), (&["-mwavefrontsize64"][..], "gfx10+")] {
        let s = Setup::new(&compile_for("gfx1030", extra));
        let mut ka = Kernargs::new();
        let out = vec![0i32; 64];
        s.mem.add_slice(&out);
        ka.put(0, out.as_ptr() as u64);
        let e = s
            .dispatch(GfxModel::Gfx942, "deep", &mut ka, 12, 64, None)
            .expect_err("gfx1030 code must not run");
        assert!(matches!(e, DispatchError::InvalidDispatch(_)), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
}

#[test]
fn stack_overflow_stops_the_dispatch_naming_the_private_segment() {
    for model in MODELS {
        let s = Setup::new(&compile(&kernel_source("bad_input.hip"), model, 5));
        let out = vec![0i32; 64];
        s.mem.add_slice(&out);
        // Shallow recursion fits in the default dynamic stack.
        let mut ka = Kernargs::new();
        ka.put(0, out.as_ptr() as u64);
        ka.put(8, 3i32);
        s.dispatch(model, "deep", &mut ka, 12, 64, None)
            .unwrap_or_else(|e| panic!("{}: shallow recursion failed: {e}", model.processor()));
        // 100000 frames do not.
        let mut ka = Kernargs::new();
        ka.put(0, out.as_ptr() as u64);
        ka.put(8, 100_000i32);
        let e = s
            .dispatch(model, "deep", &mut ka, 12, 64, None)
            .expect_err("deep recursion must overflow");
        assert!(matches!(e, DispatchError::Illegal { .. }), "{e}");
        assert!(e.to_string().contains("private segment"), "{e}");
    }
}

#[test]
fn watchdog_stops_an_endless_loop() {
    for model in MODELS {
        let s = Setup::new(&compile(&kernel_source("bad_input.hip"), model, 5));
        let stop = vec![0i32; 1];
        let out = vec![0i32; 1];
        s.mem.add_slice(&stop);
        s.mem.add_slice(&out);
        let mut ka = Kernargs::new();
        ka.put(0, stop.as_ptr() as u64);
        ka.put(8, out.as_ptr() as u64);
        let e = s
            .dispatch(
                model,
                "spin",
                &mut ka,
                16,
                64,
                Some(ExecConfig {
                    max_wave_instructions: 100_000,
                    ..CFG
                }),
            )
            .expect_err("an endless loop must be stopped");
        match &e {
            DispatchError::Watchdog { limit, .. } => assert_eq!(*limit, 100_000),
            other => panic!("expected Watchdog, got {other}"),
        }
        assert!(
            e.to_string().contains("HSASIM_MAX_WAVE_INSTRUCTIONS"),
            "{e}"
        );
    }
}

/// A limit of 50 ms for a dispatch that never ends on its own.
const SHORT_TIMEOUT: ExecConfig = ExecConfig {
    timeout: Some(std::time::Duration::from_millis(50)),
    ..CFG
};

fn expect_timeout(e: DispatchError) -> (u64, u64) {
    assert!(e.to_string().contains("HSASIM_DISPATCH_TIMEOUT"), "{e}");
    match e {
        DispatchError::Timeout {
            limit,
            finished,
            workgroups,
        } => {
            assert_eq!(limit, std::time::Duration::from_millis(50));
            (finished, workgroups)
        }
        other => panic!("expected Timeout, got {other}"),
    }
}

#[test]
fn dispatch_timeout_stops_endless_loops_with_and_without_barriers() {
    for model in MODELS {
        let s = Setup::new(&compile(&kernel_source("bad_input.hip"), model, 5));
        let stop = vec![0i32; 1];
        let out = vec![0i32; 256];
        s.mem.add_slice(&stop);
        s.mem.add_slice(&out);
        for (kernel, wg) in [("spin", 64), ("spin_barrier", 256)] {
            let mut ka = Kernargs::new();
            ka.put(0, stop.as_ptr() as u64);
            ka.put(8, out.as_ptr() as u64);
            let e = s
                .dispatch(model, kernel, &mut ka, 16, wg, Some(SHORT_TIMEOUT))
                .expect_err("an endless loop must be stopped");
            assert_eq!(expect_timeout(e), (0, 1), "{kernel}");
        }
    }
}

#[test]
fn dispatch_timeout_stops_a_grid_too_large_to_finish() {
    let model = GfxModel::Gfx942;
    let s = Setup::new(&compile(&kernel_source("bad_input.hip"), model, 5));
    let kd = s.lo.symbol("nothing.kd");
    let mut ka = Kernargs::new();
    let grid = [u32::MAX, 1, 1];
    ka.put_hidden_v5(0, grid, [64, 1, 1]);
    s.mem.add(ka.addr(), 512);
    let (d, _p) = packet(model, kd, ka.addr(), grid, [64, 1, 1], 0, &s.mem);
    let e = run_dispatch(&d, &s.mem, &SHORT_TIMEOUT).expect_err("2^26 workgroups in 50 ms?");
    let (finished, workgroups) = expect_timeout(e);
    assert_eq!(workgroups, u64::from(u32::MAX).div_ceil(64));
    assert!(finished < workgroups);
}

#[test]
fn f32_denormals_follow_the_mode_register() {
    // HIP's default keeps f32 denormals (FLOAT_DENORM_MODE_32 = 3); with
    // -fgpu-flush-denormals-to-zero the descriptor says 0 and results flush to zero.
    for model in MODELS {
        for (flush, extra) in [
            (false, &[][..]),
            (true, &["-fgpu-flush-denormals-to-zero"][..]),
        ] {
            let s = Setup::new(&compile_for(model.processor(), extra));
            let a = vec![1.0e-20f32; 64];
            let b = vec![1.0e-20f32; 64];
            let out = vec![-1.0f32; 64];
            for v in [&a, &b, &out] {
                s.mem.add_slice(v);
            }
            let mut ka = Kernargs::new();
            ka.put(0, a.as_ptr() as u64);
            ka.put(8, b.as_ptr() as u64);
            ka.put(16, out.as_ptr() as u64);
            s.dispatch(model, "mul", &mut ka, 24, 64, None).unwrap();
            let want = if flush { 0.0 } else { 1.0e-20f32 * 1.0e-20f32 };
            assert!(want == 0.0 || want.is_subnormal());
            // SAFETY: the dispatch has finished writing `out`.
            let got = unsafe { std::ptr::read_volatile(out.as_ptr()) };
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{} flush={flush}",
                model.processor()
            );
        }
    }
}
