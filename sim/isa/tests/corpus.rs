//! Corpus kernels (tests/kernels/corpus.hip) run and checked against host results.

mod common;

use common::*;
use hsasim_isa::{run_dispatch_with_stats, ExecConfig, GfxModel};
use std::time::Instant;

const CFG: ExecConfig = ExecConfig {
    worker_threads: 2,
    compute_units: 80,
    ..ExecConfig::BASE
};

struct Kernel {
    lo: Loaded,
    mem: Ranges,
    model: GfxModel,
}

impl Kernel {
    fn new(model: GfxModel) -> Kernel {
        let elf = compile(&kernel_source("corpus.hip"), model, 5);
        let lo = Loaded::new(&elf);
        let mem = Ranges::default();
        mem.add(lo.image.addr(), lo.image.len as u64);
        Kernel { lo, mem, model }
    }

    /// Dispatches `name` with kernargs built by `args` (explicit bytes `explicit` long).
    fn run(&self, name: &str, ka: &mut Kernargs, explicit: usize, grid: [u32; 3], wg: [u16; 3]) {
        let kd = self.lo.symbol(&format!("{name}.kd"));
        let desc = self.lo.descriptor(kd);
        ka.put_hidden_v5(explicit.next_multiple_of(8), grid, wg);
        self.mem.add(ka.addr(), 512);
        let (mut d, _p) = packet(self.model, kd, ka.addr(), grid, wg, 0, &self.mem);
        d.packet.private_segment_size = desc.private_segment_fixed_size.max(1024);
        let t = Instant::now();
        let stats = run_dispatch_with_stats(&d, &self.mem, &CFG)
            .unwrap_or_else(|e| panic!("{name} on {}: {e}", self.model.processor()));
        println!(
            "{name} {}: {} wave-instructions, {:.1} M lane-ops/s",
            self.model.processor(),
            stats.instructions,
            stats.lane_ops as f64 / t.elapsed().as_secs_f64() / 1e6
        );
    }
}

#[test]
fn saxpy() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 300_001;
        let x: Vec<f32> = (0..n).map(|i| (i % 101) as f32).collect();
        let mut y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let expect: Vec<f32> = (0..n).map(|i| 2.5f32.mul_add(x[i], y[i])).collect();
        k.mem.add_slice(&x);
        k.mem.add_slice(&y);
        let mut ka = Kernargs::new();
        ka.put(0, 2.5f32);
        ka.put(8, x.as_ptr() as u64);
        ka.put(16, y.as_mut_ptr() as u64);
        ka.put(24, n as i32);
        k.run("saxpy", &mut ka, 28, [n as u32, 1, 1], [256, 1, 1]);
        for i in 0..n {
            let want = expect[i];
            assert!(
                (y[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{i}: {} vs {want}",
                y[i]
            );
        }
    }
}

#[test]
fn block_sum_with_lds_and_barriers() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 100_000usize;
        let input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
        let blocks = n.div_ceil(256);
        let mut out = vec![0f32; blocks];
        k.mem.add_slice(&input);
        k.mem.add_slice(&out);
        let mut ka = Kernargs::new();
        ka.put(0, input.as_ptr() as u64);
        ka.put(8, out.as_mut_ptr() as u64);
        ka.put(16, n as i32);
        k.run(
            "block_sum",
            &mut ka,
            20,
            [(blocks * 256) as u32, 1, 1],
            [256, 1, 1],
        );
        for (b, &got) in out.iter().enumerate() {
            let want: f32 = input[b * 256..((b + 1) * 256).min(n)].iter().sum();
            assert_eq!(got, want, "block {b}");
        }
    }
}

#[test]
fn lds_addresses_wrap_at_32_bits() {
    for model in MODELS {
        let k = Kernel::new(model);
        let input: Vec<i32> = (0..1024).collect();
        let mut out = vec![-1i32; 1024];
        k.mem.add_slice(&input);
        k.mem.add_slice(&out);
        let mut ka = Kernargs::new();
        ka.put(0, input.as_ptr() as u64);
        ka.put(8, out.as_mut_ptr() as u64);
        k.run("block_reverse", &mut ka, 16, [1024, 1, 1], [256, 1, 1]);
        for (i, &got) in out.iter().enumerate() {
            assert_eq!(
                got,
                ((i / 256) * 256 + 255 - i % 256) as i32,
                "{}: {i}",
                model.processor()
            );
        }
    }
}

#[test]
fn wave_shuffle_reduction_and_float_atomics() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 50_000usize;
        let input: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
        let mut total = vec![0f32; 1];
        let mut count = vec![0u32; 1];
        k.mem.add_slice(&input);
        k.mem.add_slice(&total);
        k.mem.add_slice(&count);
        let mut ka = Kernargs::new();
        ka.put(0, input.as_ptr() as u64);
        ka.put(8, total.as_mut_ptr() as u64);
        ka.put(16, count.as_mut_ptr() as u64);
        ka.put(24, n as i32);
        k.run(
            "wave_sum_atomic",
            &mut ka,
            28,
            [n as u32, 1, 1],
            [128, 1, 1],
        );
        let want: f32 = input.iter().sum();
        assert_eq!(total[0], want);
        assert_eq!(count[0] as usize, n.div_ceil(64));
    }
}

#[test]
fn integer_division_and_cas_max() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 20_000usize;
        let a: Vec<i64> = (0..n as i64)
            .map(|i| i * 7_919_113 - 3_000_000_000)
            .collect();
        let b: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 10_007 - 5000).collect();
        let mut q = vec![0i64; n];
        let mut r = vec![0i32; n];
        let mut mx = vec![i32::MIN; 1];
        for s in [&a as &dyn AsSlice, &b, &q, &r, &mx] {
            let (p, l) = s.range();
            k.mem.add(p, l);
        }
        let mut ka = Kernargs::new();
        ka.put(0, a.as_ptr() as u64);
        ka.put(8, b.as_ptr() as u64);
        ka.put(16, q.as_mut_ptr() as u64);
        ka.put(24, r.as_mut_ptr() as u64);
        ka.put(32, mx.as_mut_ptr() as u64);
        ka.put(40, n as i32);
        k.run("int_math", &mut ka, 44, [n as u32, 1, 1], [256, 1, 1]);
        for i in 0..n {
            assert_eq!(q[i], a[i] / (b[i] | 1) as i64, "q {i}");
            assert_eq!(
                r[i],
                (a[i] % 1_000_003) as i32 + b[i] / 7 - b[i] % 13,
                "r {i}"
            );
        }
        assert_eq!(mx[0], *b.iter().max().unwrap());
    }
}

#[test]
fn tiled_matmul() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 64usize;
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
        let mut c = vec![0f32; n * n];
        k.mem.add_slice(&a);
        k.mem.add_slice(&b);
        k.mem.add_slice(&c);
        let mut ka = Kernargs::new();
        ka.put(0, a.as_ptr() as u64);
        ka.put(8, b.as_ptr() as u64);
        ka.put(16, c.as_mut_ptr() as u64);
        ka.put(24, n as i32);
        k.run("matmul", &mut ka, 28, [n as u32, n as u32, 1], [16, 16, 1]);
        for r in 0..n {
            for col in 0..n {
                let want: f32 = (0..n).map(|j| a[r * n + j] * b[j * n + col]).sum();
                assert_eq!(c[r * n + col], want, "C[{r}][{col}]");
            }
        }
    }
}

#[test]
fn f64_math_and_device_function_with_stack() {
    for model in MODELS {
        let k = Kernel::new(model);
        let n = 5_000usize;
        let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.001 - 2.0).collect();
        let mut y = vec![0f64; n];
        k.mem.add_slice(&x);
        k.mem.add_slice(&y);
        let mut ka = Kernargs::new();
        ka.put(0, x.as_ptr() as u64);
        ka.put(8, y.as_mut_ptr() as u64);
        ka.put(16, n as i32);
        k.run("f64_poly", &mut ka, 20, [n as u32, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let kk = (i & 3) as i32;
            let coef: Vec<f64> = (0..8).map(|j| 1.0 / (j + kk + 1) as f64).collect();
            let mut s = 0.0;
            for j in (0..8).rev() {
                s = s * x[i] + coef[j];
            }
            let want = s + (x[i] * x[i] + 1.0).sqrt();
            assert!(
                (y[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{i}: {} vs {want}",
                y[i]
            );
        }
    }
}

trait AsSlice {
    fn range(&self) -> (u64, u64);
}
impl<T> AsSlice for Vec<T> {
    fn range(&self) -> (u64, u64) {
        (
            self.as_ptr() as u64,
            std::mem::size_of_val(self.as_slice()) as u64,
        )
    }
}
