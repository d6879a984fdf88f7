//! Interpreter throughput: lane-instructions per second on a compute-bound kernel (a
//! dependent FMA chain) and a memory-bound one (saxpy over 16M floats), with one host
//! thread and with all of them. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p hsasim-isa --bench interp`

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use hsasim_isa::{run_dispatch_with_stats, ExecConfig, GfxModel};
use std::time::Instant;

fn main() {
    let model = GfxModel::Gfx942;
    let elf = compile(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/interp.hip"),
        model,
        5,
    );
    let lo = Loaded::new(&elf);
    let mem = Ranges::default();
    mem.add(lo.image.addr(), lo.image.len as u64);
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "hsasim-isa interpreter benchmark ({}), {all} host threads available",
        model.processor()
    );

    let run = |name: &str, ka: &mut Kernargs, explicit: usize, items: u32, threads: usize| {
        let kd = lo.symbol(&format!("{name}.kd"));
        ka.put_hidden_v5(explicit.next_multiple_of(8), [items, 1, 1], [256, 1, 1]);
        mem.add(ka.addr(), 512);
        let (d, _p) = packet(model, kd, ka.addr(), [items, 1, 1], [256, 1, 1], 0, &mem);
        let cfg = ExecConfig {
            worker_threads: threads,
            compute_units: 80,
            ..ExecConfig::BASE
        };
        let t = Instant::now();
        let stats = run_dispatch_with_stats(&d, &mem, &cfg).expect("dispatch");
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name:>8} {threads:>2} thread(s): {:>6.3} s, {:>11} wave-instructions, {:>7.1} M wave-instr/s, {:>8.1} M lane-instr/s",
            s,
            stats.instructions,
            stats.instructions as f64 / s / 1e6,
            stats.lane_ops as f64 / s / 1e6
        );
    };

    let items = 256 * 256;
    let out = vec![0f32; items as usize];
    mem.add_slice(&out);
    let n = 16 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y = vec![1.0f32; n];
    mem.add_slice(&x);
    mem.add_slice(&y);
    for threads in [1, all] {
        let mut ka = Kernargs::new();
        ka.put(0, out.as_ptr() as u64);
        ka.put(8, 2000i32);
        run("compute", &mut ka, 12, items, threads);
        let mut ka = Kernargs::new();
        ka.put(0, 2.0f32);
        ka.put(8, x.as_ptr() as u64);
        ka.put(16, y.as_ptr() as u64);
        ka.put(24, n as i32);
        run("stream", &mut ka, 28, n as u32, threads);
    }
}
