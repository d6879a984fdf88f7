//! vector_add variants compiled by clang-19 for gfx942 and gfx90a (code object v4 and v5)
//! run on the interpreter over 1M+ elements with a ragged tail, on 1 and 2 host threads.

mod common;

use common::*;
use hsasim_isa::{run_dispatch_with_stats, ExecConfig, GfxModel};
use std::time::Instant;

struct Run {
    model: GfxModel,
    cov: u32,
    threads: usize,
}

/// Runs a 1D vector_add kernel over `n` floats and checks every element.
fn run_1d(source: &str, r: &Run, n: usize, wg: u16) {
    let elf = compile(&kernel_source(source), r.model, r.cov);
    let lo = Loaded::new(&elf);
    let mem = Ranges::default();
    mem.add(lo.image.addr(), lo.image.len as u64);
    let kd = lo.symbol("vector_add.kd");
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    // One guard element after c: it must stay untouched (the tail lanes are masked).
    let mut c = vec![-1.0f32; n + 1];
    mem.add_slice(&a);
    mem.add_slice(&b);
    mem.add_slice(&c);
    let mut ka = Kernargs::new();
    ka.put(0, a.as_ptr() as u64);
    ka.put(8, b.as_ptr() as u64);
    ka.put(16, c.as_mut_ptr() as u64);
    ka.put(24, n as i32);
    let grid = [n as u32, 1, 1];
    ka.put_hidden_v5(32, grid, [wg, 1, 1]);
    mem.add(ka.addr(), 512);
    let (d, _p) = packet(r.model, kd, ka.addr(), grid, [wg, 1, 1], 0, &mem);
    let cfg = ExecConfig {
        worker_threads: r.threads,
        compute_units: 80,
        ..ExecConfig::BASE
    };
    let t = Instant::now();
    let stats = run_dispatch_with_stats(&d, &mem, &cfg).unwrap_or_else(|e| {
        panic!(
            "{source} {} v{} threads {}: {e}",
            r.model.processor(),
            r.cov,
            r.threads
        )
    });
    let secs = t.elapsed().as_secs_f64();
    for i in 0..n {
        assert_eq!(
            c[i],
            a[i] + b[i],
            "{source} {}: element {i}",
            r.model.processor()
        );
    }
    assert_eq!(c[n], -1.0, "store past the end");
    println!(
        "{source} {} v{} {} thread(s): {n} elements, {} waves, {} wave-instructions, {:.1} M lane-ops/s, {:.1} M wave-instr/s",
        r.model.processor(),
        r.cov,
        r.threads,
        stats.waves,
        stats.instructions,
        stats.lane_ops as f64 / secs / 1e6,
        stats.instructions as f64 / secs / 1e6,
    );
}

const N: usize = (1 << 20) + 77;

#[test]
fn vector_add_runs_on_every_model_code_object_version_and_thread_count() {
    for model in MODELS {
        for cov in [4, 5] {
            for threads in [1, 2] {
                run_1d(
                    "vector_add.hip",
                    &Run {
                        model,
                        cov,
                        threads,
                    },
                    N,
                    256,
                );
            }
        }
    }
}

#[test]
fn vector_add_reading_dispatch_packet_and_implicit_args() {
    for model in MODELS {
        for cov in [4, 5] {
            run_1d(
                "vector_add_implicit.hip",
                &Run {
                    model,
                    cov,
                    threads: 2,
                },
                N,
                128,
            );
        }
    }
}

#[test]
fn vector_add_with_partial_wave_workgroups() {
    // 100 work-items per group: two waves, the second with 36 live lanes.
    for model in MODELS {
        run_1d(
            "vector_add.hip",
            &Run {
                model,
                cov: 5,
                threads: 2,
            },
            100_003,
            100,
        );
    }
}

#[test]
fn vector_add_2d_uses_y_ids_and_workgroup_ids() {
    for model in MODELS {
        for cov in [4, 5] {
            let elf = compile(&kernel_source("vector_add_2d.hip"), model, cov);
            let lo = Loaded::new(&elf);
            let mem = Ranges::default();
            mem.add(lo.image.addr(), lo.image.len as u64);
            let kd = lo.symbol("vector_add.kd");
            let (w, h) = (1000usize, 531usize);
            let n = w * h;
            let a: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
            let b: Vec<f32> = (0..n).map(|i| (i / 3) as f32).collect();
            let mut c = vec![0f32; n];
            mem.add_slice(&a);
            mem.add_slice(&b);
            mem.add_slice(&c);
            let mut ka = Kernargs::new();
            ka.put(0, a.as_ptr() as u64);
            ka.put(8, b.as_ptr() as u64);
            ka.put(16, c.as_mut_ptr() as u64);
            ka.put(24, w as i32);
            ka.put(28, h as i32);
            let grid = [w as u32, h as u32, 1];
            let wg = [32u16, 8, 1];
            ka.put_hidden_v5(32, grid, wg);
            mem.add(ka.addr(), 512);
            let (d, _p) = packet(model, kd, ka.addr(), grid, wg, 0, &mem);
            let cfg = ExecConfig {
                worker_threads: 2,
                compute_units: 80,
                ..ExecConfig::BASE
            };
            hsasim_isa::run_dispatch(&d, &mem, &cfg)
                .unwrap_or_else(|e| panic!("{} v{cov}: {e}", model.processor()));
            for i in 0..n {
                assert_eq!(
                    c[i],
                    a[i] + b[i],
                    "{} v{cov}: element {i}",
                    model.processor()
                );
            }
        }
    }
}
