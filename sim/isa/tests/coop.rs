//! Cooperative dispatches: a kernel built by clang-19 that calls AMD's `__ockl_grid_sync`
//! exchanges values between workgroups across grid barriers, on one host worker and on
//! several, for gfx942 and gfx90a; without a cooperative queue the GWS instruction is a
//! named error; deadlocks, spin loops, watchdog, timeout and the residency limit.

mod common;

use common::*;
use hsasim_isa::{
    decode, run_cooperative_dispatch, run_dispatch, DispatchError, ExecConfig, GfxModel, Gws,
};
use std::sync::OnceLock;
use std::time::Duration;

const WG: u16 = 128;

fn cfg(threads: usize) -> ExecConfig {
    ExecConfig {
        worker_threads: threads,
        compute_units: 80,
        ..ExecConfig::BASE
    }
}

/// The code object of tests/kernels/grid_sync.hip for `model`, built once.
fn kernels(model: GfxModel) -> &'static Loaded {
    static GFX942: OnceLock<Loaded> = OnceLock::new();
    static GFX90A: OnceLock<Loaded> = OnceLock::new();
    let cell = match model {
        GfxModel::Gfx942 => &GFX942,
        GfxModel::Gfx90a => &GFX90A,
    };
    cell.get_or_init(|| {
        Loaded::new(&compile_with_device_libs(
            &kernel_source("grid_sync.hip"),
            model,
        ))
    })
}

struct Exchange {
    slots: Vec<u32>,
    out: Vec<u32>,
    groups: u32,
    rounds: u32,
}

/// Runs `kernel` (grid_exchange or local_exchange) over `groups` workgroups; `gws` picks
/// the cooperative path.
fn exchange(
    model: GfxModel,
    kernel: &str,
    groups: u32,
    config: &ExecConfig,
    gws: Option<&Gws>,
) -> (Exchange, Result<(), DispatchError>) {
    let lo = kernels(model);
    let mem = Ranges::default();
    mem.add(lo.image.addr(), lo.image.len as u64);
    let rounds = 3;
    let mut x = Exchange {
        slots: vec![0; groups as usize],
        out: vec![u32::MAX; groups as usize * WG as usize],
        groups,
        rounds,
    };
    mem.add_slice(&x.slots);
    mem.add_slice(&x.out);
    let mut ka = Kernargs::new();
    ka.put(0, x.slots.as_mut_ptr() as u64);
    ka.put(8, x.out.as_mut_ptr() as u64);
    ka.put(16, rounds);
    let grid = [groups * WG as u32, 1, 1];
    ka.put_hidden_v5(24, grid, [WG, 1, 1]);
    mem.add(ka.addr(), 512);
    let kd = lo.symbol(&format!("{kernel}.kd"));
    let (d, _p) = packet(model, kd, ka.addr(), grid, [WG, 1, 1], 0, &mem);
    let r = match gws {
        Some(gws) => run_cooperative_dispatch(&d, &mem, config, gws),
        None => run_dispatch(&d, &mem, config),
    };
    (x, r)
}

impl Exchange {
    /// Work-items whose sum is not what a working grid barrier gives.
    fn wrong(&self) -> usize {
        let n = self.groups;
        let mut wrong = 0;
        for g in 0..n {
            for t in 0..WG as u32 {
                let other = (g + 1 + t % (n - 1)) % n;
                let want: u32 = (0..self.rounds).map(|r| other * 3 + 1 + r * 1000).sum();
                if self.out[(g * WG as u32 + t) as usize] != want {
                    wrong += 1;
                }
            }
        }
        wrong
    }
}

#[test]
fn grid_sync_exchanges_values_between_workgroups() {
    for model in MODELS {
        for groups in [2, 5, 64] {
            for threads in [1, 4] {
                let gws = Gws::new();
                let (x, r) = exchange(model, "grid_exchange", groups, &cfg(threads), Some(&gws));
                r.unwrap_or_else(|e| panic!("{model:?} {groups} groups {threads} threads: {e}"));
                assert_eq!(
                    x.wrong(),
                    0,
                    "{model:?} {groups} groups {threads} threads: wrong sums"
                );
            }
        }
    }
}

#[test]
fn the_same_gws_unit_serves_dispatch_after_dispatch_of_other_sizes() {
    let gws = Gws::new();
    for groups in [64, 2, 17, 2] {
        let (x, r) = exchange(
            GfxModel::Gfx942,
            "grid_exchange",
            groups,
            &cfg(2),
            Some(&gws),
        );
        r.unwrap();
        assert_eq!(x.wrong(), 0, "{groups} groups");
    }
}

#[test]
fn a_workgroup_barrier_alone_fails_the_check() {
    // One host worker runs the workgroups in turn, and workgroup 0 finishes before the
    // others publish anything: without the grid barrier the sums come out wrong.
    let gws = Gws::new();
    let (x, r) = exchange(GfxModel::Gfx942, "local_exchange", 64, &cfg(1), Some(&gws));
    r.unwrap();
    assert!(
        x.wrong() > 0,
        "the exchange check must catch a missing grid barrier"
    );
}

#[test]
fn gws_on_an_ordinary_queue_is_a_named_error() {
    for model in MODELS {
        let (_, r) = exchange(model, "grid_exchange", 4, &cfg(2), None);
        match r {
            Err(DispatchError::Illegal { reason, .. }) => {
                assert!(reason.contains("ds_gws_barrier"), "{reason}");
                assert!(reason.contains("HSA_QUEUE_TYPE_COOPERATIVE"), "{reason}");
            }
            other => panic!("{model:?}: expected Illegal, got {other:?}"),
        }
    }
}

#[test]
fn a_barrier_not_every_workgroup_reaches_is_a_deadlock_error() {
    for threads in [1, 3] {
        let lo = kernels(GfxModel::Gfx90a);
        let mem = Ranges::default();
        mem.add(lo.image.addr(), lo.image.len as u64);
        let out = vec![0u32; 8];
        mem.add_slice(&out);
        let mut ka = Kernargs::new();
        ka.put(0, out.as_ptr() as u64);
        let grid = [8 * 64, 1, 1];
        ka.put_hidden_v5(8, grid, [64, 1, 1]);
        mem.add(ka.addr(), 512);
        let kd = lo.symbol("grid_sync_from_one.kd");
        let (d, _p) = packet(GfxModel::Gfx90a, kd, ka.addr(), grid, [64, 1, 1], 0, &mem);
        let e = run_cooperative_dispatch(&d, &mem, &cfg(threads), &Gws::new())
            .expect_err("workgroups 1..7 never arrive");
        let text = e.to_string();
        assert!(matches!(e, DispatchError::Illegal { .. }), "{text}");
        assert!(text.contains("GWS barrier deadlock"), "{text}");
        assert!(text.contains("needs 8 waves; 1 arrived"), "{text}");
    }
}

#[test]
fn spinning_workgroups_let_the_others_run() {
    for sleep in [1u32, 0] {
        for threads in [1, 2] {
            let lo = kernels(GfxModel::Gfx942);
            let mem = Ranges::default();
            mem.add(lo.image.addr(), lo.image.len as u64);
            let flag = vec![0u32; 1];
            let out = vec![0u32; 16];
            mem.add_slice(&flag);
            mem.add_slice(&out);
            let mut ka = Kernargs::new();
            ka.put(0, flag.as_ptr() as u64);
            ka.put(8, out.as_ptr() as u64);
            ka.put(16, sleep);
            let grid = [16 * 64, 1, 1];
            ka.put_hidden_v5(24, grid, [64, 1, 1]);
            mem.add(ka.addr(), 512);
            let kd = lo.symbol("spin_handoff.kd");
            let (d, _p) = packet(GfxModel::Gfx942, kd, ka.addr(), grid, [64, 1, 1], 0, &mem);
            let config = ExecConfig {
                timeout: Some(Duration::from_secs(60)),
                ..cfg(threads)
            };
            run_cooperative_dispatch(&d, &mem, &config, &Gws::new())
                .unwrap_or_else(|e| panic!("sleep {sleep} threads {threads}: {e}"));
            assert_eq!(out, vec![7; 16], "sleep {sleep} threads {threads}");
        }
    }
}

/// A hand-made kernel of `code` dispatched cooperatively over `groups` one-wave workgroups.
fn run_handmade(
    code: &[u32],
    groups: u32,
    config: &ExecConfig,
    gws: &Gws,
) -> Result<(), DispatchError> {
    let mem = Ranges::default();
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (d, _p) = packet(
        GfxModel::Gfx942,
        kd,
        0,
        [groups * 64, 1, 1],
        [64, 1, 1],
        0,
        &mem,
    );
    run_cooperative_dispatch(&d, &mem, config, gws)
}

const S_ENDPGM: u32 = 0xbf81_0000;
/// `v_mov_b32 v0, <inline constant>`: 128 + n for n in 0..=64.
fn v_mov_v0(n: u32) -> u32 {
    0x7e00_0200 | (128 + n)
}
/// `ds_gws_init v0 gds`.
const DS_GWS_INIT_V0: [u32; 2] = [0xd933_0000, 0];

#[test]
fn ds_gws_init_sets_the_count_of_the_next_phase() {
    // Initialised for 4 waves, a 4-workgroup grid syncs.
    let gws = Gws::new();
    let init = |n: u32| [v_mov_v0(n), DS_GWS_INIT_V0[0], DS_GWS_INIT_V0[1], S_ENDPGM];
    run_handmade(&init(3), 1, &cfg(1), &gws).unwrap();
    let (x, r) = exchange(GfxModel::Gfx942, "grid_exchange", 4, &cfg(2), Some(&gws));
    r.unwrap();
    assert_eq!(x.wrong(), 0);
    // Initialised for 6 waves, the first phase of a 4-workgroup grid never completes: the
    // count is the unit's, not the barrier operand's.
    run_handmade(&init(5), 1, &cfg(1), &gws).unwrap();
    let (_, r) = exchange(GfxModel::Gfx942, "grid_exchange", 4, &cfg(2), Some(&gws));
    let text = r.expect_err("6 waves expected, 4 arrive").to_string();
    assert!(text.contains("needs 6 waves; 4 arrived"), "{text}");
}

#[test]
fn gws_semaphores_are_named_unsupported() {
    // ds_gws_sema_v gds
    let e = run_handmade(&[0xd935_0000, 0, S_ENDPGM], 2, &cfg(1), &Gws::new()).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, DispatchError::UnknownInstruction { .. }),
        "{text}"
    );
    assert!(text.contains("ds_gws_sema_v"), "{text}");
}

#[test]
fn gws_instructions_decode_as_llvm_prints_them() {
    // Words and text from `llvm-mc-19 -triple=amdgcn -mcpu=gfx90a -show-encoding`.
    let cases: [([u32; 2], &str); 6] = [
        ([0xd933_0005, 0x04], "ds_gws_init v4 offset:5 gds"),
        ([0xd93b_0000, 0x00], "ds_gws_barrier v0 gds"),
        ([0xd93b_0003, 0x02], "ds_gws_barrier v2 offset:3 gds"),
        ([0xd935_0000, 0x00], "ds_gws_sema_v gds"),
        ([0xd937_0000, 0x06], "ds_gws_sema_br v6 gds"),
        ([0xd931_0000, 0x00], "ds_gws_sema_release_all gds"),
    ];
    for model in MODELS {
        for (words, text) in cases {
            let i = decode(model, &words).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(i.to_string(), text);
        }
        // The same opcode without gds is not a GWS instruction.
        assert!(decode(model, &[0xd93a_0000, 0]).is_err());
    }
}

#[test]
fn watchdog_and_timeout_stop_a_cooperative_dispatch() {
    // s_branch -1: a wave that never ends, while the other workgroups wait at nothing.
    let spin = [0xbf82_ffff, S_ENDPGM];
    let config = ExecConfig {
        max_wave_instructions: 100_000,
        ..cfg(1)
    };
    let e = run_handmade(&spin, 4, &config, &Gws::new()).unwrap_err();
    assert!(matches!(e, DispatchError::Watchdog { .. }), "{e}");
    let config = ExecConfig {
        timeout: Some(Duration::from_millis(200)),
        ..cfg(2)
    };
    let e = run_handmade(&spin, 4, &config, &Gws::new()).unwrap_err();
    match e {
        DispatchError::Timeout {
            finished,
            workgroups,
            ..
        } => assert_eq!((finished, workgroups), (0, 4)),
        e => panic!("expected Timeout, got {e}"),
    }
}

#[test]
fn a_grid_larger_than_the_agent_holds_is_refused() {
    // 2 compute units of 32 wave slots hold 32 two-wave workgroups.
    let config = ExecConfig {
        compute_units: 2,
        ..cfg(1)
    };
    let (_, r) = exchange(
        GfxModel::Gfx942,
        "grid_exchange",
        32,
        &config,
        Some(&Gws::new()),
    );
    r.unwrap();
    let (_, r) = exchange(
        GfxModel::Gfx942,
        "grid_exchange",
        33,
        &config,
        Some(&Gws::new()),
    );
    match r {
        Err(DispatchError::InvalidDispatch(why)) => {
            assert!(why.contains("33 workgroups cannot be resident"), "{why}")
        }
        other => panic!("expected InvalidDispatch, got {other:?}"),
    }
}
