//! Virtual time (issue 42): the per-dispatch class counts, the same with the translator on
//! and off; the per-workgroup costs in workgroup order, bucketed for large grids and the
//! same whatever the worker count; and the wave-local clocks kernels read.

mod common;

use common::*;
use hsasim_isa::{
    run_cooperative_dispatch_timed, run_dispatch_timed, run_dispatch_with_stats, Class,
    DispatchError, DispatchStats, ExecConfig, GfxModel, Gws, Mix, Timing, WaveCostTable,
    WorkgroupCost, MAX_COST_ENTRIES,
};

/// Distinct cycles per class, so that every count shows in a cost: scalar ALU 2, VALU 5,
/// branch 11, scalar memory 40; VALU also "moves" 3 bytes, for the byte sums.
static COSTS: WaveCostTable = {
    let mut cycles = [1u32; Class::COUNT];
    cycles[Class::Salu as usize] = 2;
    cycles[Class::Valu as usize] = 5;
    cycles[Class::Branch as usize] = 11;
    cycles[Class::Smem as usize] = 40;
    let mut bytes = [0u32; Class::COUNT];
    bytes[Class::Valu as usize] = 3;
    // Issue cycles as the cycles: a wave that never waits on memory.
    WaveCostTable {
        cycles,
        bytes,
        issue: cycles,
        matrix: [0; Class::COUNT],
    }
};

const TIMING: Timing = Timing {
    costs: &COSTS,
    start_ns: 1_000_000_007,
    clock_mhz: 2100,
};

fn config(workers: usize, jit: bool, timing: Option<Timing>) -> ExecConfig {
    ExecConfig {
        worker_threads: workers,
        compute_units: 80,
        jit,
        timing,
        ..ExecConfig::BASE
    }
}

fn mix(counts: &[(Class, u64)]) -> Mix {
    let mut m = Mix::default();
    for &(c, n) in counts {
        m.count[c as usize] = n;
    }
    m
}

/// Each wave of workgroup `k` runs `(k & 7) + 1` trips of a loop: a VALU add and three
/// scalar instructions, the branch back a translated region's trip.
const LOOP: [u32; 7] = [
    0x8601_8700, // s_and_b32 s1, s0, 7 (s0: the workgroup id x)
    0x8001_8101, // s_add_u32 s1, s1, 1
    0x6802_0301, // v_add_u32 v1, v1, v1
    0x8081_8101, // s_sub_u32 s1, s1, 1
    0xbf06_8001, // s_cmp_eq_u32 s1, 0
    0xbf84_fffc, // s_cbranch_scc0 -4 (to v_add_u32)
    0xbf81_0000, // s_endpgm
];

/// What one wave of workgroup `k` of [`LOOP`] costs under [`COSTS`].
fn loop_wave_cycles(k: u64) -> u64 {
    let t = (k & 7) + 1;
    // Scalar ALU: and, add, sub and compare per trip, s_endpgm; VALU and branch per trip.
    2 * (3 + 2 * t) + 5 * t + 11 * t
}

/// Runs [`LOOP`] on `workgroups` workgroups of `wg` work-items.
fn run_loop(
    model: GfxModel,
    workgroups: u32,
    wg: u16,
    cfg: &ExecConfig,
) -> Result<DispatchStats, DispatchError> {
    run_loop_on(model, workgroups, wg, cfg, None)
}

/// [`run_loop`] through [`run_dispatch_with_stats`] (which counts classes even without
/// virtual time).
fn run_loop_stats(model: GfxModel, workgroups: u32, wg: u16, cfg: &ExecConfig) -> DispatchStats {
    let mem = Ranges::default();
    let (mut buf, kd) = handmade_kernel();
    buf.bytes()[52..56].copy_from_slice(&(1u32 << 7).to_le_bytes());
    code_words(&mut buf, &LOOP);
    mem.add(kd, 256 + 4 * LOOP.len() as u64);
    let grid = [workgroups * u32::from(wg), 1, 1];
    let (d, _p) = packet(model, kd, 0, grid, [wg, 1, 1], 0, &mem);
    run_dispatch_with_stats(&d, &mem, cfg).expect("runs")
}

/// [`run_loop`], from a cooperative queue with `gws`.
fn run_loop_on(
    model: GfxModel,
    workgroups: u32,
    wg: u16,
    cfg: &ExecConfig,
    gws: Option<&Gws>,
) -> Result<DispatchStats, DispatchError> {
    let mem = Ranges::default();
    let (mut buf, kd) = handmade_kernel();
    // COMPUTE_PGM_RSRC2 (descriptor offset 52): ENABLE_SGPR_WORKGROUP_ID_X, into s0.
    buf.bytes()[52..56].copy_from_slice(&(1u32 << 7).to_le_bytes());
    code_words(&mut buf, &LOOP);
    mem.add(kd, 256 + 4 * LOOP.len() as u64);
    let grid = [workgroups * u32::from(wg), 1, 1];
    let (d, _p) = packet(model, kd, 0, grid, [wg, 1, 1], 0, &mem);
    match gws {
        None => run_dispatch_timed(&d, &mem, cfg),
        Some(gws) => run_cooperative_dispatch_timed(&d, &mem, cfg, gws),
    }
}

/// `got` is `want`, or the first entry that differs.
fn same_costs(got: &[WorkgroupCost], want: &[WorkgroupCost], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: entries");
    if let Some(k) = (0..got.len()).find(|&k| got[k] != want[k]) {
        panic!("{what}: entry {k} is {:?}, not {:?}", got[k], want[k]);
    }
}

/// The expected cost record of [`LOOP`] over `total` workgroups of `waves` waves.
fn loop_costs(total: u64, waves: u32) -> Vec<WorkgroupCost> {
    let bucket = total.div_ceil(MAX_COST_ENTRIES).max(1);
    (0..total.div_ceil(bucket))
        .map(|b| {
            let ks = b * bucket..((b + 1) * bucket).min(total);
            let mut c = WorkgroupCost {
                workgroups: (ks.end - ks.start) as u32,
                ..WorkgroupCost::default()
            };
            for k in ks {
                let t = (k & 7) + 1;
                c.waves += waves;
                c.cycles_sum += u64::from(waves) * loop_wave_cycles(k);
                c.issue_sum += u64::from(waves) * loop_wave_cycles(k);
                c.cycles_max = c.cycles_max.max(loop_wave_cycles(k));
                c.bytes += u64::from(waves) * 3 * t;
            }
            c
        })
        .collect()
}

#[test]
fn costs_are_per_workgroup_in_order_whatever_the_workers() {
    for model in MODELS {
        let total = 1000u64;
        let one = run_loop(model, total as u32, 128, &config(1, false, Some(TIMING))).unwrap();
        let four = run_loop(model, total as u32, 128, &config(4, false, Some(TIMING))).unwrap();
        let want = loop_costs(total, 2);
        assert_eq!(want.len(), 1000);
        assert_eq!(want[5].cycles_max, 6 + 20 * 6, "workgroup 5 runs 6 trips");
        same_costs(&one.costs, &want, &format!("{model:?}, 1 worker"));
        same_costs(&four.costs, &want, &format!("{model:?}, 4 workers"));
        assert_eq!(one.mix, four.mix);
        // 2 waves of each workgroup: t trips each, t = (k & 7) + 1, 4.5 on average.
        let trips: u64 = (0..total).map(|k| 2 * ((k & 7) + 1)).sum();
        assert_eq!(
            one.mix,
            mix(&[
                (Class::Salu, 3 * 2 * total + 2 * trips),
                (Class::Valu, trips),
                (Class::Branch, trips),
            ])
        );
        // Without virtual time nothing is counted (run_dispatch_timed, as hsasim calls it)
        // unless the figures are asked for.
        let plain = run_loop(model, total as u32, 128, &config(1, false, None)).unwrap();
        assert_eq!(plain.mix, Mix::default());
        assert!(plain.costs.is_empty());
        let asked = run_loop_stats(model, total as u32, 128, &config(1, false, None));
        assert_eq!(asked.mix, one.mix);
        assert!(asked.costs.is_empty());
    }
}

/// Cooperative dispatches interleave a worker's workgroups (`k = worker mod workers`):
/// their record is in workgroup order all the same.
#[test]
fn cooperative_costs_are_in_workgroup_order() {
    let model = GfxModel::Gfx942;
    let total = 200u64;
    let want = loop_costs(total, 2);
    for workers in [1, 4] {
        let gws = Gws::new();
        let cfg = config(workers, false, Some(TIMING));
        let got = run_loop_on(model, total as u32, 128, &cfg, Some(&gws)).unwrap();
        same_costs(&got.costs, &want, &format!("{workers} workers"));
    }
}

#[test]
fn large_grids_are_bucketed() {
    let total = 2 * MAX_COST_ENTRIES + 5;
    let model = GfxModel::Gfx942;
    let one = run_loop(model, total as u32, 64, &config(1, false, Some(TIMING))).unwrap();
    let four = run_loop(model, total as u32, 64, &config(4, false, Some(TIMING))).unwrap();
    let want = loop_costs(total, 1);
    // Three workgroups an entry, the last one alone.
    assert_eq!(want.len() as u64, total.div_ceil(3));
    assert!(want.len() as u64 <= MAX_COST_ENTRIES);
    assert_eq!(want[0].workgroups, 3);
    assert_eq!(want.last().map(|c| c.workgroups), Some(1));
    same_costs(&one.costs, &want, "1 worker");
    same_costs(&four.costs, &want, "4 workers");
}

#[test]
fn translated_loops_count_what_the_interpreter_counts() {
    for model in MODELS {
        for workers in [1, 3] {
            let cfg = |jit| config(workers, jit, Some(TIMING));
            let interpreted = run_loop(model, 64, 128, &cfg(false)).unwrap();
            let translated = run_loop(model, 64, 128, &cfg(true)).unwrap();
            assert_eq!(interpreted.costs, translated.costs);
            assert!(translated.translated > 0, "{translated:?}");
            assert_eq!(interpreted.instructions, translated.instructions);
            assert_eq!(
                interpreted.mix, translated.mix,
                "{model:?}, {workers} workers"
            );
            let total: u64 = translated.mix.count.iter().sum();
            assert_eq!(total, translated.instructions);
        }
    }
}

/// A one-wave kernel reading both clocks in each of three loop trips, between instructions
/// the translator runs natively, and storing the last trip's values at `out`.
fn clock_kernel(out: u64) -> Vec<u32> {
    vec![
        0xbe82_00ff, // s_mov_b32 s2, lo(out)
        out as u32,
        0xbe83_00ff, // s_mov_b32 s3, hi(out)
        (out >> 32) as u32,
        0xb001_0003, // s_movk_i32 s1, 3
        // loop:
        0x6802_0301, // v_add_u32 v1, v1, v1
        0xc090_0100, // s_memtime s[4:5]
        0x0000_0000,
        0x6802_0301, // v_add_u32 v1, v1, v1
        0xc094_0200, // s_memrealtime s[8:9]
        0x0000_0000,
        0x8081_8101, // s_sub_u32 s1, s1, 1
        0xbf06_8001, // s_cmp_eq_u32 s1, 0
        0xbf84_fff7, // s_cbranch_scc0 -9 (to loop)
        0x7e00_0204, // v_mov_b32 v0, s4
        0x7e02_0205, // v_mov_b32 v1, s5
        0x7e04_0202, // v_mov_b32 v2, s2
        0x7e06_0203, // v_mov_b32 v3, s3
        0xdc74_8000, // global_store_dwordx2 v[2:3], v[0:1], off
        0x007f_0002,
        0x7e00_0208, // v_mov_b32 v0, s8
        0x7e02_0209, // v_mov_b32 v1, s9
        0xdc74_8008, // global_store_dwordx2 v[2:3], v[0:1], off offset:8
        0x007f_0002,
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0xbf81_0000, // s_endpgm
    ]
}

fn run_clocks(model: GfxModel, cfg: &ExecConfig) -> ([u64; 2], DispatchStats) {
    let mem = Ranges::default();
    let out = vec![0u64; 2];
    mem.add_slice(&out);
    let code = clock_kernel(out.as_ptr() as u64);
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, &code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem);
    let stats = run_dispatch_with_stats(&d, &mem, cfg).expect("runs");
    // SAFETY: the dispatch has finished; nothing else writes `out`.
    let got = unsafe { std::ptr::read_volatile(out.as_ptr() as *const [u64; 2]) };
    (got, stats)
}

#[test]
fn clocks_follow_the_waves_own_cycles() {
    // At the third trip's s_memtime the wave has run 3 + 2 * 2 scalar ALU instructions,
    // 2 * 2 + 1 VALU, 2 * 2 + 1 scalar memory and 2 branches (itself included):
    // 7 * 2 + 5 * 5 + 5 * 40 + 2 * 11 = 261 cycles; at its s_memrealtime one VALU and one
    // scalar memory more, 306 cycles.
    let start_cycles = 1_000_000_007u64 * 2100 / 1000;
    assert_eq!(start_cycles, 2_100_000_014);
    let memtime = start_cycles + 261;
    // 306 cycles at 2100 MHz are 145 ns (rounded down), in 10 ns ticks from the start.
    let realtime = (1_000_000_007 + 145) / 10;
    assert_eq!(realtime, 100_000_015);
    for model in MODELS {
        let mut counts = Vec::new();
        for jit in [false, true] {
            let (got, stats) = run_clocks(model, &config(1, jit, Some(TIMING)));
            assert_eq!(got, [memtime, realtime], "{model:?}, translator {jit}");
            if jit {
                assert!(stats.translated > 0 && stats.called_out > 0, "{stats:?}");
            }
            assert_eq!(
                stats.mix,
                mix(&[
                    (Class::Salu, 3 + 3 * 2 + 1),
                    (Class::Valu, 3 * 2 + 6),
                    (Class::Smem, 3 * 2),
                    (Class::Branch, 3),
                    (Class::Store8, 2),
                    (Class::Waitcnt, 1),
                ]),
                "{model:?}, translator {jit}"
            );
            let cycles = 10 * 2 + 12 * 5 + 6 * 40 + 3 * 11 + 3;
            assert_eq!(
                stats.costs,
                vec![WorkgroupCost {
                    workgroups: 1,
                    waves: 1,
                    cycles_sum: cycles,
                    cycles_max: cycles,
                    bytes: 12 * 3,
                    issue_sum: cycles,
                    matrix_sum: 0,
                }]
            );
            counts.push(stats.mix);
        }
        assert_eq!(counts[0], counts[1]);
    }
}

#[test]
fn without_virtual_time_the_clocks_are_the_hosts() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let (got, stats) = run_clocks(GfxModel::Gfx942, &config(1, false, None));
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // s_memrealtime: host time in 10 ns ticks, read during the dispatch.
    assert!(
        (before / 10..=after / 10).contains(&got[1]),
        "{got:?} not within {before}..{after} ns"
    );
    // s_memtime: the interpreter's shader clock, nothing like the virtual one.
    assert_ne!(got[0], 2_100_000_014 + 261);
    assert!(stats.costs.is_empty());
}
