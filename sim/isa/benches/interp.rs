//! Interpreter throughput over a fixed kernel set (benches/interp.hip): a dependent FMA
//! chain, saxpy, naive and LDS-tiled matmul, a reduction, an MFMA loop and a CSR SpMV.
//! For each kernel it prints lane-instructions per second (active lanes summed over VALU
//! and MFMA instructions) with 1 worker thread and a scaling table over 1, 2, 4, 8, 16
//! workers (capped at the host's threads) with parallel efficiency. Each figure is the
//! fastest of a few timed runs after an untimed warm-up (which decodes the kernel).
//! Results are checked against host references; nothing about time is asserted.
//! Beside each figure: `busy`, the CPU time of all the process's threads over workers x
//! time (below 100%: workers waited or were descheduled), `cpu-eff`, the first worker
//! count's CPU time over this one's (below 100%: each instruction cost more, e.g. from
//! something the workers contend on), and the minor page faults of the timed run.
//!
//! First, for one worker, the interpreter and the translator (`ExecConfig::jit`) side by
//! side: each timed run of one is followed by one of the other (alternated, so that both
//! see the same host conditions), with their ratio, the share of wave-instructions that ran
//! as translated native code and as call-outs to the interpreter, the regions translated
//! and the translation time (in the warm-up run, which translates), and the opcodes most
//! often interpreted. The geometric mean of the ratios closes the table.
//!
//! Then virtual time's cost (`ExecConfig::timing`, issue 42): each kernel on one worker
//! with timing off and on, alternated, interpreted and translated, with the on/off ratios
//! and their geometric means.
//!
//! `cargo bench -p hsasim-isa --bench interp`
//!
//! Environment:
//! - `HSASIM_ISA_BENCH_MODEL=gfx90a`: compile for and run as gfx90a (default gfx942), whose
//!   code forms 64-bit addresses with carry pairs instead of `v_lshl_add_u64`.
//! - `HSASIM_ISA_BENCH_CODE_OBJECT=PATH`: load the kernels from this code object (built for
//!   the model above) instead of compiling interp.hip with clang++-19 (for hosts without
//!   clang): `clang++-19 -x hip -nogpuinc -nogpulib --offload-arch=gfx942 --cuda-device-only
//!   --no-gpu-bundle-output -O3 -mcode-object-version=5 interp.hip -o PATH`.
//! - `HSASIM_ISA_BENCH_THREADS=1,2,4`: worker counts to measure (default 1,2,4,8,16 up to
//!   the host's threads).
//! - `HSASIM_ISA_BENCH_KERNELS=fma_chain,saxpy`: run only these kernels.
//! - `HSASIM_ISA_BENCH_REPS=N`: timed runs per figure (default 3).
//! - `HSASIM_ISA_BENCH_SCALE=N`: N times the work per kernel (default 1; matmul grows its
//!   side to 128 * (N + 1)), for longer runs on hosts with many threads. At the default a
//!   16-worker run lasts only a few milliseconds, so starting the workers and the last
//!   workgroups' tail weigh in its efficiency; `HSASIM_ISA_BENCH_SCALE=4` makes those runs
//!   4 to 16 times longer (the 1-worker matmul runs then take about a second each).
//! - `HSASIM_ISA_BENCH_CEILING=1`: after each worker count N > 1, also run N independent
//!   copies of the kernel (own buffers) as 1-worker dispatches on N threads at once and
//!   add up their rates (each its lanes over its own time; the time shown is the slowest
//!   one's). Their efficiency is what the host gives work that shares nothing (cores that
//!   share a physical core, caches or a power budget slow each other down): the ceiling
//!   for the workers' figure above it, which the line prints as a share of it. Builds N
//!   copies of every kernel's data.
//! - `HSASIM_ISA_BENCH_TOP=N`: interpreted opcodes listed per kernel under the translator
//!   (default 5).
//! - `HSASIM_ISA_BENCH_CLOCK=cpu`: time 1-worker runs by the CPU time of the thread that
//!   runs them (Linux `/proc/thread-self/schedstat`) rather than by the wall clock, for
//!   comparisons on a host busy with other work; runs with more workers keep the wall
//!   clock.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use hsa_abi::hsa_kernel_dispatch_packet_t;
use hsasim_isa::{
    run_dispatch_timed, run_dispatch_with_stats, Class, Dispatch, DispatchError, DispatchStats,
    ExecConfig, GfxModel, GuestMemory, Mix, Span, Timing, WaveCostTable,
};
use std::sync::atomic::AtomicU64;
use std::time::Instant;

/// Guest memory for the benchmark: a fixed list of ranges, read without locks, so that
/// the scaling figures measure the interpreter rather than the test helper's mutex. Like
/// hsasim's registry it has a generation counter (which never moves here) and answers with
/// whole ranges, so the interpreter keeps its translations as it does under hsasim.
struct FixedRanges(Vec<(u64, u64)>, AtomicU64);

impl GuestMemory for FixedRanges {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        self.translate_span(address, len).map(|_| address)
    }

    fn generation(&self) -> Option<&AtomicU64> {
        Some(&self.1)
    }

    fn translate_span(&self, address: u64, len: u64) -> Option<Span> {
        let end = address.checked_add(len)?;
        let &(start, l) = self
            .0
            .iter()
            .find(|&&(s, l)| address >= s && end <= s + l)?;
        Some(Span {
            start,
            end: start + l,
            offset: 0,
        })
    }
}

/// A buffer the kernels read or write (leaked: it lives as long as the benchmark).
struct Buf<T: 'static> {
    ptr: *mut T,
    len: usize,
}

impl<T: Copy + 'static> Buf<T> {
    fn new(data: Vec<T>, ranges: &mut Vec<(u64, u64)>) -> Buf<T> {
        let s = Box::leak(data.into_boxed_slice());
        ranges.push((s.as_ptr() as u64, std::mem::size_of_val(s) as u64));
        Buf {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }
    fn addr(&self) -> u64 {
        self.ptr as u64
    }
    /// The contents after a dispatch (which wrote through the raw pointer).
    fn read(&self) -> Vec<T> {
        // SAFETY: ptr/len are a leaked boxed slice; no dispatch runs while this reads.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

/// A case's dispatch and the packet it points at (kept alive beside it).
type Prepared = (Dispatch, Box<hsa_kernel_dispatch_packet_t>);

/// What the host gives independent work: each dispatch runs with one worker on its own
/// thread, all started together, nothing shared but the memory map. Returns, for the best
/// of `reps` runs (after a warm-up), the lane-instructions per second of all of them: each
/// one's own count over its own time (the slowest one does not hold the others back, as
/// workers sharing a grid do not wait for a slow one either), and the slowest one's time.
fn independent(dispatches: &[&Dispatch], mem: &FixedRanges, reps: usize) -> (f64, f64) {
    let cfg = ExecConfig {
        worker_threads: 1,
        compute_units: 80,
        ..ExecConfig::BASE
    };
    let mut best = (0.0, 0.0);
    for rep in 0..=reps {
        let start = std::sync::Barrier::new(dispatches.len());
        let runs: Vec<(f64, u64)> = std::thread::scope(|s| {
            let runs: Vec<_> = dispatches
                .iter()
                .map(|&d| {
                    let start = &start;
                    let cfg = &cfg;
                    s.spawn(move || {
                        start.wait();
                        let t = Instant::now();
                        let st = run_dispatch_with_stats(d, mem, cfg).expect("dispatch");
                        (t.elapsed().as_secs_f64(), st.lane_ops)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let rate: f64 = runs.iter().map(|&(secs, lanes)| lanes as f64 / secs).sum();
        let slowest = runs.iter().map(|r| r.0).fold(0.0, f64::max);
        if rep > 0 && rate > best.0 {
            best = (rate, slowest);
        }
    }
    best
}

struct Case {
    name: &'static str,
    kernarg: Kernargs,
    grid: [u32; 3],
    wg: [u16; 3],
    /// Checks the output of the last run against a host reference.
    check: Box<dyn Fn() -> Result<(), String>>,
}

/// A deterministic pseudo-random sequence in [-1, 1).
fn noise(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn close(got: f32, want: f64, what: &str) -> Result<(), String> {
    let tol = 1e-4 * want.abs().max(1.0);
    if (got as f64 - want).abs() <= tol {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, want {want}"))
    }
}

fn kernargs(
    explicit: &[(usize, u64, usize)],
    explicit_len: usize,
    grid: [u32; 3],
    wg: [u16; 3],
) -> Kernargs {
    let mut ka = Kernargs::new();
    for &(off, v, size) in explicit {
        match size {
            4 => ka.put(off, v as u32),
            _ => ka.put(off, v),
        }
    }
    ka.put_hidden_v5(explicit_len.next_multiple_of(8), grid, wg);
    ka
}

fn cases(ranges: &mut Vec<(u64, u64)>, scale: usize) -> Vec<Case> {
    let mut v = Vec::new();

    // FMA chain: 64K work-items, 600 iterations of two dependent FMAs and a multiply.
    let items = 256 * 256;
    let iters = 600 * scale as u64;
    let out = Buf::new(vec![0f32; items], ranges);
    let grid = [items as u32, 1, 1];
    let ka = kernargs(&[(0, out.addr(), 8), (8, iters, 4)], 12, grid, [256, 1, 1]);
    v.push(Case {
        name: "fma_chain",
        kernarg: ka,
        grid,
        wg: [256, 1, 1],
        check: Box::new(move || {
            let o = out.read();
            for i in [0usize, 777, items - 1] {
                let (mut x, mut y) = (i as f32 * 1e-6, 1.0 - i as f32 * 1e-6);
                for _ in 0..iters {
                    x = x.mul_add(0.999, y);
                    y = y.mul_add(0.998, x * 1e-3);
                }
                if o[i] != x + y {
                    return Err(format!("fma_chain[{i}] = {}, want {}", o[i], x + y));
                }
            }
            Ok(())
        }),
    });

    // saxpy over 8M floats (y is updated in place, so the check reads one element
    // against the number of runs).
    let n = (8 << 20) * scale;
    let x = Buf::new((0..n).map(|i| (i % 1000) as f32).collect(), ranges);
    let y = Buf::new(vec![0f32; n], ranges);
    let grid = [n as u32, 1, 1];
    let ka = kernargs(
        &[
            (0, 0.5f32.to_bits() as u64, 4),
            (8, x.addr(), 8),
            (16, y.addr(), 8),
            (24, n as u64, 4),
        ],
        28,
        grid,
        [256, 1, 1],
    );
    v.push(Case {
        name: "saxpy",
        kernarg: ka,
        grid,
        wg: [256, 1, 1],
        check: Box::new(move || {
            let y = y.read();
            // y[i] = runs * 0.5 * x[i]: consistent across i after any number of runs.
            let runs = y[2] / 1.0;
            for i in [1usize, 999, n - 1] {
                let want = runs as f64 * 0.5 * (i % 1000) as f64 / 1.0;
                close(y[i], want, &format!("saxpy y[{i}]"))?;
            }
            Ok(())
        }),
    });

    // 256x256 matmul, naive and tiled, on the same inputs.
    let m = 128 * (scale + 1);
    let a_host = noise(1, m * m);
    let b_host = noise(2, m * m);
    for (name, seed) in [("matmul_naive", 3), ("matmul_tiled", 4)] {
        let a = Buf::new(a_host.clone(), ranges);
        let b = Buf::new(b_host.clone(), ranges);
        let c = Buf::new(noise(seed, m * m), ranges);
        let grid = [m as u32, m as u32, 1];
        let ka = kernargs(
            &[
                (0, a.addr(), 8),
                (8, b.addr(), 8),
                (16, c.addr(), 8),
                (24, m as u64, 4),
            ],
            28,
            grid,
            [16, 16, 1],
        );
        let (ah, bh) = (a_host.clone(), b_host.clone());
        v.push(Case {
            name,
            kernarg: ka,
            grid,
            wg: [16, 16, 1],
            check: Box::new(move || {
                let c = c.read();
                for (r, col) in [(0, 0), (17, 200), (m - 1, m - 1)] {
                    let want: f64 = (0..m)
                        .map(|k| ah[r * m + k] as f64 * bh[k * m + col] as f64)
                        .sum();
                    close(c[r * m + col], want, &format!("{name} c[{r}][{col}]"))?;
                }
                Ok(())
            }),
        });
    }

    // Reduction of 16M floats by 64 workgroups of 256.
    let n = (16 << 20) * scale;
    let wgs = 64;
    let xs = noise(5, n);
    let want: f64 = xs.iter().map(|&v| v as f64).sum();
    let x = Buf::new(xs, ranges);
    let partial = Buf::new(vec![0f32; wgs], ranges);
    let grid = [wgs as u32 * 256, 1, 1];
    let ka = kernargs(
        &[(0, x.addr(), 8), (8, partial.addr(), 8), (16, n as u64, 4)],
        20,
        grid,
        [256, 1, 1],
    );
    v.push(Case {
        name: "reduce_sum",
        kernarg: ka,
        grid,
        wg: [256, 1, 1],
        check: Box::new(move || {
            let got: f64 = partial.read().iter().map(|&v| v as f64).sum();
            if (got - want).abs() > 1e-2 * want.abs().max(1.0) {
                return Err(format!("reduce_sum: got {got}, want {want}"));
            }
            Ok(())
        }),
    });

    // MFMA: 256 workgroups of 4 waves, 120 16x16x4 f32 MFMAs each.
    let inp = Buf::new(noise(6, 1024), ranges);
    let items = 256 * 256;
    let out = Buf::new(vec![0f32; 4 * items], ranges);
    let grid = [items as u32, 1, 1];
    let ka = kernargs(
        &[
            (0, inp.addr(), 8),
            (8, out.addr(), 8),
            (16, 120 * scale as u64, 4),
        ],
        20,
        grid,
        [256, 1, 1],
    );
    v.push(Case {
        name: "mfma_loop",
        kernarg: ka,
        grid,
        wg: [256, 1, 1],
        check: Box::new(move || {
            // Waves 0 and 16 load the same values (addresses wrap at 1024): equal results.
            let o = out.read();
            if o[..256] != o[4096..4352] || o.iter().all(|&v| v == 0.0) {
                return Err(format!(
                    "mfma_loop: waves with equal inputs disagree: {:?} {:?}",
                    &o[..8],
                    &o[4096..4104]
                ));
            }
            Ok(())
        }),
    });

    // CSR SpMV: 64K rows of 16..48 entries, 16 lanes per row.
    let rows = 64 * 1024 * scale;
    let ncols = 64 * 1024;
    let mut row_ptr = vec![0i32];
    let mut cols = Vec::new();
    let r = noise(7, rows * 49);
    for row in 0..rows {
        let len = 16 + ((r[row * 49].abs() * 32.0) as usize).min(32);
        for k in 0..len {
            cols.push(((r[row * 49 + 1 + k].abs() * ncols as f32) as usize).min(ncols - 1) as i32);
        }
        row_ptr.push(cols.len() as i32);
    }
    let vals = noise(8, cols.len());
    let xs = noise(9, ncols);
    let probe: Vec<(usize, f64)> = [0usize, 12345, rows - 1]
        .iter()
        .map(|&row| {
            let (s, e) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            (
                row,
                (s..e)
                    .map(|j| vals[j] as f64 * xs[cols[j] as usize] as f64)
                    .sum(),
            )
        })
        .collect();
    let row_ptr = Buf::new(row_ptr, ranges);
    let cols = Buf::new(cols, ranges);
    let vals = Buf::new(vals, ranges);
    let x = Buf::new(xs, ranges);
    let y = Buf::new(vec![0f32; rows], ranges);
    let grid = [rows as u32 * 16, 1, 1];
    let ka = kernargs(
        &[
            (0, rows as u64, 4),
            (8, row_ptr.addr(), 8),
            (16, cols.addr(), 8),
            (24, vals.addr(), 8),
            (32, x.addr(), 8),
            (40, y.addr(), 8),
        ],
        48,
        grid,
        [256, 1, 1],
    );
    v.push(Case {
        name: "spmv_csr",
        kernarg: ka,
        grid,
        wg: [256, 1, 1],
        check: Box::new(move || {
            let y = y.read();
            for &(row, want) in &probe {
                close(y[row], want, &format!("spmv y[{row}]"))?;
            }
            Ok(())
        }),
    });
    v
}

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name).ok().map(|s| {
        s.split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()
    })
}

/// CPU time the calling thread has run, in seconds (the first field of schedstat, in
/// nanoseconds), or `None` where the kernel does not say.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// CPU time all threads of this process have run, in seconds (the pool's parked threads
/// add nothing while they wait), or `None` where the kernel does not say.
fn process_cpu_seconds() -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        // A thread may end between the listing and the read: it then adds nothing.
        if let Ok(text) = std::fs::read_to_string(path) {
            ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
        }
    }
    Some(ns as f64 * 1e-9)
}

/// Minor page faults of the whole process so far (field 10 of `/proc/self/stat`).
fn process_minor_faults() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces: count fields from after its closing parenthesis.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

/// Times one 1-worker run of `d`: seconds (thread CPU time with `cpu_clock`) and its figures.
fn timed(
    d: &Dispatch,
    mem: &FixedRanges,
    cfg: &ExecConfig,
    cpu_clock: bool,
) -> (f64, DispatchStats) {
    timed_by(run_dispatch_with_stats, d, mem, cfg, cpu_clock)
}

type Runner = fn(&Dispatch, &dyn GuestMemory, &ExecConfig) -> Result<DispatchStats, DispatchError>;

/// [`timed`], running the dispatch with `run`.
fn timed_by(
    run: Runner,
    d: &Dispatch,
    mem: &FixedRanges,
    cfg: &ExecConfig,
    cpu_clock: bool,
) -> (f64, DispatchStats) {
    let cpu = cpu_clock.then(thread_cpu_seconds).flatten();
    let t = Instant::now();
    let s = run(d, mem, cfg).expect("dispatch");
    let secs = match (cpu, thread_cpu_seconds()) {
        (Some(start), Some(end)) => end - start,
        _ => t.elapsed().as_secs_f64(),
    };
    (secs, s)
}

/// The interpreter and the translator on one worker, alternated run by run.
fn side_by_side(cases: &[(Case, Prepared)], mem: &FixedRanges, reps: usize, cpu_clock: bool) {
    let top: usize = std::env::var("HSASIM_ISA_BENCH_TOP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let cfg = |jit| ExecConfig {
        worker_threads: 1,
        compute_units: 80,
        jit,
        ..ExecConfig::BASE
    };
    println!("interpreter vs translator, 1 worker, alternated runs, best of {reps}:");
    println!(
        "  kernel           interp  translated   ratio  native  call-out  regions  translate  (warm-up)"
    );
    let mut log_sum = 0.0;
    let mut count = 0;
    for (c, (d, _packet)) in cases {
        let (mut best_i, mut best_t) = (f64::INFINITY, f64::INFINITY);
        let mut warm = None;
        let mut last = None;
        for rep in 0..=reps {
            let (ti, si) = timed(d, mem, &cfg(false), cpu_clock);
            let (tt, st) = timed(d, mem, &cfg(true), cpu_clock);
            if let Err(e) = (c.check)() {
                panic!("wrong result: {e}");
            }
            assert_eq!(
                si.instructions, st.instructions,
                "{}: counts differ",
                c.name
            );
            assert_eq!(si.lane_ops, st.lane_ops, "{}: lane-ops differ", c.name);
            if rep == 0 {
                warm = Some(st.clone());
            } else {
                best_i = best_i.min(ti);
                best_t = best_t.min(tt);
            }
            last = Some(st);
        }
        let (warm, st) = (warm.unwrap(), last.unwrap());
        let share = |n: u64| 100.0 * n as f64 / st.instructions.max(1) as f64;
        let ratio = best_i / best_t;
        log_sum += ratio.ln();
        count += 1;
        println!(
            "  {:<14} {:>8.4}s {:>9.4}s {:>7.2}x {:>6.1}% {:>8.1}% {:>8} {:>8.2}ms",
            c.name,
            best_i,
            best_t,
            ratio,
            share(st.translated),
            share(st.called_out),
            warm.regions_compiled,
            warm.translate_time.as_secs_f64() * 1e3,
        );
        let ops: Vec<String> = st
            .top_interpreted(top)
            .iter()
            .map(|(name, n)| format!("{name} {:.1}%", share(*n)))
            .collect();
        println!("      interpreted: {}", ops.join(", "));
    }
    if count > 0 {
        println!(
            "  geometric mean of the ratios: {:.2}x over {count} kernels",
            (log_sum / count as f64).exp()
        );
    }
}

/// Virtual time's cost: each kernel on one worker without and with
/// [`ExecConfig::timing`] (alternated run by run), interpreted and translated, run as
/// hsasim runs them ([`run_dispatch_timed`]: without timing nothing is counted).
fn timing_side_by_side(
    cases: &[(Case, Prepared)],
    mem: &FixedRanges,
    reps: usize,
    cpu_clock: bool,
) {
    static COSTS: WaveCostTable = WaveCostTable {
        cycles: [4; Class::COUNT],
        bytes: [0; Class::COUNT],
        issue: [4; Class::COUNT],
        matrix: [0; Class::COUNT],
    };
    let cfg = |jit, timed: bool| ExecConfig {
        worker_threads: 1,
        compute_units: 80,
        jit,
        timing: timed.then_some(Timing {
            costs: &COSTS,
            start_ns: 0,
            clock_mhz: 2100,
        }),
        ..ExecConfig::BASE
    };
    println!("virtual time off vs on, 1 worker, alternated runs, best of {reps}:");
    println!("  kernel         interp: off        on  on/off   translated: off        on  on/off");
    let mut logs = [0.0f64; 2];
    let mut count = 0;
    for (c, (d, _packet)) in cases {
        let mut best = [[f64::INFINITY; 2]; 2];
        let mut mixes = [Mix::default(); 2];
        for rep in 0..=reps {
            for (j, jit) in [false, true].into_iter().enumerate() {
                let (off, so) = timed_by(run_dispatch_timed, d, mem, &cfg(jit, false), cpu_clock);
                let (on, st) = timed_by(run_dispatch_timed, d, mem, &cfg(jit, true), cpu_clock);
                assert!(so.costs.is_empty() && !st.costs.is_empty());
                assert_eq!(so.mix, Mix::default());
                mixes[j] = st.mix;
                if rep > 0 {
                    best[j][0] = best[j][0].min(off);
                    best[j][1] = best[j][1].min(on);
                }
            }
        }
        if let Err(e) = (c.check)() {
            panic!("wrong result: {e}");
        }
        assert_eq!(mixes[0], mixes[1], "{}: class counts differ", c.name);
        for j in 0..2 {
            logs[j] += (best[j][1] / best[j][0]).ln();
        }
        count += 1;
        println!(
            "  {:<14} {:>10.4}s {:>8.4}s {:>6.3}x {:>15.4}s {:>8.4}s {:>6.3}x",
            c.name,
            best[0][0],
            best[0][1],
            best[0][1] / best[0][0],
            best[1][0],
            best[1][1],
            best[1][1] / best[1][0],
        );
    }
    if count > 0 {
        println!(
            "  geometric mean of on/off: interpreted {:.3}x, translated {:.3}x over {count} kernels",
            (logs[0] / count as f64).exp(),
            (logs[1] / count as f64).exp()
        );
    }
}

fn main() {
    let model = match std::env::var("HSASIM_ISA_BENCH_MODEL").as_deref() {
        Ok("gfx90a") => GfxModel::Gfx90a,
        Ok("gfx942") | Err(_) => GfxModel::Gfx942,
        Ok(other) => panic!("HSASIM_ISA_BENCH_MODEL: gfx942 or gfx90a, not {other}"),
    };
    let elf = match std::env::var_os("HSASIM_ISA_BENCH_CODE_OBJECT") {
        Some(path) => {
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.to_string_lossy()))
        }
        None => compile(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/interp.hip"),
            model,
            5,
        ),
    };
    let lo = Loaded::new(&elf);
    let host_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers: Vec<usize> = match env_list("HSASIM_ISA_BENCH_THREADS") {
        Some(l) => l
            .iter()
            .map(|t| t.parse().expect("HSASIM_ISA_BENCH_THREADS: numbers"))
            .collect(),
        None => [1, 2, 4, 8, 16]
            .into_iter()
            .filter(|&t| t <= host_threads)
            .collect(),
    };
    let only = env_list("HSASIM_ISA_BENCH_KERNELS");
    let reps: usize = std::env::var("HSASIM_ISA_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let scale: usize = std::env::var("HSASIM_ISA_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);

    let cpu_clock = std::env::var("HSASIM_ISA_BENCH_CLOCK").is_ok_and(|c| c == "cpu")
        && thread_cpu_seconds().is_some();

    let mut ranges = vec![(lo.image.addr(), lo.image.len as u64)];
    let ceiling = std::env::var("HSASIM_ISA_BENCH_CEILING").is_ok_and(|c| c == "1");
    // Copy 0 is measured with every worker count; with the ceiling on, copies 1.. (their
    // own buffers) run beside it as independent 1-worker dispatches.
    let copies = if ceiling {
        workers.iter().copied().max().unwrap_or(1)
    } else {
        1
    };
    let mut prepared: Vec<Vec<(Case, Prepared)>> = Vec::new();
    for _ in 0..copies {
        let mut cases = cases(&mut ranges, scale);
        cases.retain(|c| only.as_ref().is_none_or(|o| o.iter().any(|n| n == c.name)));
        // Packets and kernargs go into the fixed map before any dispatch.
        let with_packets = cases
            .into_iter()
            .map(|c| {
                let kd = lo.symbol(&format!("{}.kd", c.name));
                let scratch = Ranges::default();
                let (d, p) = packet(model, kd, c.kernarg.addr(), c.grid, c.wg, 0, &scratch);
                ranges.extend(scratch.0.into_inner().unwrap());
                ranges.push((c.kernarg.addr(), 512));
                (c, (d, p))
            })
            .collect();
        prepared.push(with_packets);
    }
    let mem = FixedRanges(ranges, AtomicU64::new(0));

    println!(
        "hsasim-isa interpreter benchmark ({}), {host_threads} host threads, workers {workers:?}, best of {reps}, scale {scale}{}",
        model.processor(),
        if cpu_clock { ", 1 worker timed by thread CPU time" } else { "" }
    );
    side_by_side(&prepared[0], &mem, reps, cpu_clock);
    timing_side_by_side(&prepared[0], &mem, reps, cpu_clock);
    let mut summary = Vec::new();
    for (k, (c, (d, _packet))) in prepared[0].iter().enumerate() {
        println!("{}:", c.name);
        println!(
            "  workers      time   M wave-instr/s   M lane-instr/s  speedup  efficiency   busy  cpu-eff  faults"
        );
        let mut base = None;
        let mut base_cpu = None;
        for &threads in &workers {
            let cfg = ExecConfig {
                worker_threads: threads,
                compute_units: 80,
                ..ExecConfig::BASE
            };
            let mut best = f64::INFINITY;
            // CPU time of all threads and minor faults in the fastest run.
            let mut best_cpu = None;
            let mut best_faults = None;
            let mut stats = None;
            for rep in 0..=reps {
                let (cpu_all, faults) = (process_cpu_seconds(), process_minor_faults());
                // One worker runs the dispatch on this thread, so its CPU time is the
                // dispatch's.
                let cpu = (cpu_clock && threads == 1)
                    .then(thread_cpu_seconds)
                    .flatten();
                let t = Instant::now();
                let s = run_dispatch_with_stats(d, &mem, &cfg).expect("dispatch");
                let secs = match (cpu, thread_cpu_seconds()) {
                    (Some(start), Some(end)) => end - start,
                    _ => t.elapsed().as_secs_f64(),
                };
                let cpu_all = cpu_all.zip(process_cpu_seconds()).map(|(a, b)| b - a);
                let faults = faults.zip(process_minor_faults()).map(|(a, b)| b - a);
                // Run 0 warms up (decodes the kernel on each worker).
                if rep > 0 && secs < best {
                    best = secs;
                    best_cpu = cpu_all;
                    best_faults = faults;
                }
                stats = Some(s);
            }
            let s = stats.unwrap();
            let lane_rate = s.lane_ops as f64 / best;
            let t1 = *base.get_or_insert(best);
            let base_rate = s.lane_ops as f64 / t1;
            let speedup = t1 / best;
            // Busy: the CPU time of all threads over `threads` times the wall clock (100%
            // when every worker ran all the time). CPU efficiency: the first run's CPU time
            // over this one's, i.e. how much more work each instruction cost; a run that is
            // busy and CPU-efficient but slow lost its time to the host (other load), one
            // that is busy but not CPU-efficient to something its threads contend on.
            let cpu1 = *base_cpu.get_or_insert(best_cpu.unwrap_or(f64::NAN));
            let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.0}%", 100.0 * v));
            println!(
                "  {threads:>7} {best:>8.4}s {:>16.1} {:>16.1} {speedup:>8.2} {:>10.0}% {:>6} {:>8} {:>7}",
                s.instructions as f64 / best / 1e6,
                lane_rate / 1e6,
                100.0 * speedup / threads as f64,
                cell(best_cpu.map(|c| c / (threads as f64 * best))),
                cell(best_cpu.map(|c| cpu1 / c)),
                best_faults.map_or("-".to_string(), |f| f.to_string()),
            );
            if threads == workers[0] {
                summary.push((c.name, lane_rate, s.instructions as f64 / best));
            }
            if let Err(e) = (c.check)() {
                panic!("wrong result: {e}");
            }
            if ceiling && threads > 1 {
                let own: Vec<&Dispatch> = prepared[..threads].iter().map(|p| &p[k].1 .0).collect();
                let (rate, secs) = independent(&own, &mem, reps);
                println!(
                    "  {:>7} {secs:>8.4}s {:>16} {:>16.1} {:>8.2} {:>10.0}%   independent 1-worker dispatches; in-process / independent {:.0}%",
                    format!("{threads}x1"),
                    "",
                    rate / 1e6,
                    rate / base_rate,
                    100.0 * rate / base_rate / threads as f64,
                    100.0 * lane_rate / rate,
                );
                for p in &prepared[1..threads] {
                    if let Err(e) = (p[k].0.check)() {
                        panic!("wrong result (independent copy): {e}");
                    }
                }
            }
        }
    }
    println!(
        "summary ({} worker): kernel, M lane-instr/s, M wave-instr/s",
        workers[0]
    );
    for (name, lanes, waves) in summary {
        println!("  {name:<14} {:>10.1} {:>10.1}", lanes / 1e6, waves / 1e6);
    }
}
