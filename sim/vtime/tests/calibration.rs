//! The model against published figures (docs/guide/virtual-time-models.md). Each check asserts
//! the ±30% band; `cargo test -p hsasim-vtime --test calibration -- --nocapture` prints the
//! table the guide quotes.

use hsasim_vtime::{
    by_name, Class, DeviceModel, Direction, DispatchShape, Gpu, Mix, Sdma, WorkgroupCost,
};

fn model(name: &str) -> &'static DeviceModel {
    by_name(name).expect("known model")
}

/// A dispatch of `workgroups` identical workgroups of `waves` waves running `mix` each.
fn dispatch(
    m: &DeviceModel,
    workgroups: u32,
    waves: u32,
    mix: &[(Class, u64)],
) -> (DispatchShape, Vec<WorkgroupCost>) {
    dispatch_with_vgprs(m, workgroups, waves, mix, 8)
}

/// [`dispatch`] of a kernel using `vgprs` VGPRs per lane.
fn dispatch_with_vgprs(
    m: &DeviceModel,
    workgroups: u32,
    waves: u32,
    mix: &[(Class, u64)],
    vgprs: u32,
) -> (DispatchShape, Vec<WorkgroupCost>) {
    let mut counts = Mix::default();
    for &(c, n) in mix {
        counts.count[c as usize] = n;
    }
    let wave = m.wave_costs.cost(&counts);
    let mut wg = WorkgroupCost {
        workgroups: 1,
        ..Default::default()
    };
    for _ in 0..waves {
        wg.add_wave(wave);
    }
    let shape = DispatchShape {
        workgroups: workgroups as u64,
        waves_per_workgroup: waves,
        vgprs,
        sgprs: 24,
        ..Default::default()
    };
    (shape, vec![wg; workgroups as usize])
}

/// What hipcc makes of `c[i] = a[i] + b[i]` with a bounds check, per wave: kernarg and
/// dispatch-packet loads, the index arithmetic, the guard, two loads, an add, a store.
const VECTOR_ADD: &[(Class, u64)] = &[
    (Class::Smem, 4),
    (Class::Salu, 3),
    (Class::Branch, 1),
    (Class::Waitcnt, 3),
    (Class::Valu, 12),
    (Class::Load4, 2),
    (Class::Store4, 1),
    (Class::Other, 1),
];

fn report(what: &str, model_value: f64, published: f64, unit: &str, source: &str) {
    let dev = (model_value - published) / published * 100.0;
    println!(
        "| {what} | {model_value:.2} {unit} | {published:.2} {unit} | {dev:+.0}% | {source} |"
    );
    assert!(
        dev.abs() <= 30.0,
        "{what}: model {model_value} vs {published}"
    );
}

#[test]
fn published_figures() {
    println!("| check | model | published | deviation | source |");
    println!("|---|---|---|---|---|");

    // vectorAdd of 1M floats, 256-thread workgroups, on MI308X.
    let m = model("mi308x");
    let (shape, costs) = dispatch(m, 4096, 4, VECTOR_ADD);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    report(
        "vectorAdd 1M floats, MI308X kernel time",
        p.duration_ns() as f64 / 1000.0,
        13.52,
        "us",
        "issue 42",
    );

    // An empty kernel, 256 x 256 threads (TransferBench's preset), launch to completion.
    let m = model("mi300x");
    let (shape, costs) = dispatch(m, 256, 4, &[(Class::Other, 1)]);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    let device = m.launch_to_completion_ns(p.duration_ns());
    report(
        "empty kernel launch to completion, MI300X",
        device as f64 / 1000.0,
        4.04,
        "us",
        "ROCm/TransferBench PR 297 (EvtMin, batch 1)",
    );

    // A small kernel launched and synchronised from the host: MI325X is gfx942 like MI300X
    // with HBM3E; launch costs do not depend on the memory, so the MI300X table stands in.
    let (shape, costs) = dispatch(m, 1, 1, VECTOR_ADD);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    let round =
        m.host.host_launch_ns + m.launch_to_completion_ns(p.duration_ns()) + m.host.host_wake_ns;
    report(
        "small kernel launch + synchronize (MI300X model, MI325X figure)",
        round as f64 / 1000.0,
        16.9,
        "us",
        "pytorch/FBGEMM PR 6219 (bare-metal MI325X)",
    );

    // Stream copy, float4 per lane, 256 MiB each way.
    let copy = &[
        (Class::Smem, 4),
        (Class::Salu, 3),
        (Class::Waitcnt, 3),
        (Class::Valu, 8),
        (Class::Load16, 1),
        (Class::Store16, 1),
        (Class::Other, 1),
    ];
    let (shape, costs) = dispatch(m, 65_536, 4, copy);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    assert!(p.memory_bound);
    let tb_s = p.bytes as f64 / p.duration_ns() as f64 / 1000.0;
    report(
        "stream copy 256 MiB, MI300X achieved bandwidth",
        tb_s,
        5.3,
        "TB/s",
        "AMD MI300X data sheet / ROCm MI300 page (peak)",
    );

    // MFMA: v_mfma_f32_32x32x8_f16 (16384 FLOPs, 8 passes on gfx942), 8 waves per SIMD.
    let flops_per_op = 16_384.0;
    let ops = 1024;
    let (shape, costs) = dispatch(m, 304 * 8, 4, &[(Class::Mfma8, ops)]);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    let flops = flops_per_op * ops as f64 * 4.0 * 304.0 * 8.0;
    let tflops = flops / p.duration_ns() as f64 / 1000.0;
    report(
        "MFMA FP16 dense peak, MI300X",
        tflops,
        1307.4,
        "TFLOPS",
        "ROCm MI300 page, AMD MI300X data sheet",
    );

    // The same as clang compiles it (c_tests/vtime/validation.hip, 64 MFMAs a wave): 68
    // VGPRs hold 7 waves per SIMD, so the 8 workgroups per CU run in a round of 7 and one
    // of 1, and the prologue and epilogue (zeroing and summing the accumulators, about 115
    // VALU instructions) and the loop's scalar instructions come with the MFMAs. The last
    // round's waves are alone on their SIMDs and the VALU work issues while other waves'
    // MFMAs hold the matrix cores, so the peak holds.
    let compiled = &[
        (Class::Mfma8, 64),
        (Class::Valu, 115),
        (Class::Salu, 34),
        (Class::Other, 17),
        (Class::Branch, 18),
        (Class::Smem, 2),
        (Class::Waitcnt, 2),
    ];
    let (shape, costs) = dispatch_with_vgprs(m, 304 * 8, 4, compiled, 68);
    let p = Gpu::new(m).place(0, &shape, &costs, None);
    assert_eq!(p.occupancy.workgroups_per_cu, 7);
    let tflops = flops_per_op * 64.0 * 4.0 * 304.0 * 8.0 / p.duration_ns() as f64 / 1000.0;
    report(
        "MFMA FP16 dense, MI300X, compiled loop (7 waves per SIMD, 64 MFMAs a wave)",
        tflops,
        1307.4,
        "TFLOPS",
        "ROCm MI300 page, AMD MI300X data sheet",
    );

    // MI250X GCD: its half of 383 TFLOPS FP16 (16 passes on gfx90a: class Mfma16).
    let g = model("mi250x-gcd");
    let (shape, costs) = dispatch(g, 110 * 8, 4, &[(Class::Mfma16, ops)]);
    let p = Gpu::new(g).place(0, &shape, &costs, None);
    let tflops = flops_per_op * ops as f64 * 4.0 * 110.0 * 8.0 / p.duration_ns() as f64 / 1000.0;
    report(
        "MFMA FP16 dense peak, MI250X GCD",
        tflops,
        383.0 / 2.0,
        "TFLOPS",
        "AMD MI250X data sheet (383 per 2 GCDs)",
    );

    // SDMA host to device, 256 MiB, against the PCIe Gen5 x16 link rate.
    let mut sdma = Sdma::new(m);
    let t = sdma.copy(0, 256 << 20, Direction::HostToDevice, None);
    let gb_s = (256u64 << 20) as f64 / (t.end_ns - t.start_ns) as f64;
    report(
        "SDMA host to device 256 MiB, MI300X",
        gb_s,
        64.0,
        "GB/s",
        "PCIe 5.0 x16 per direction (link peak)",
    );

    // CU masking: half the CUs change nothing until the grid fills them.
    // Bytes alternate on and off: with 8 XCDs (bit i on XCD i mod 8) each keeps half its CUs.
    let half: Vec<u32> = vec![0x00ff_00ff; 10];
    for (label, n) in [("64 workgroups", 64u32), ("19456 workgroups", 304 * 8 * 8)] {
        let (shape, costs) = dispatch(m, n, 4, &[(Class::Valu, 1000)]);
        let all = Gpu::new(m).place(0, &shape, &costs, None).duration_ns();
        let masked = Gpu::new(m)
            .place(0, &shape, &costs, Some(&half))
            .duration_ns();
        println!("| CU mask (half the CUs), {label}, MI300X | {:.2}x the unmasked time | 1x until the CUs saturate | | hsa_amd_queue_cu_set_mask semantics |", masked as f64 / all as f64);
        if n == 64 {
            assert_eq!(masked, all);
        } else {
            assert!(masked > all * 3 / 2);
        }
    }
}

#[test]
fn model_cost_is_small() {
    // 1M workgroups placed: the functional run of as many workgroups takes minutes, the
    // placement well under a second even unoptimised.
    let m = model("mi300x");
    let (shape, costs) = dispatch(m, 1 << 16, 4, VECTOR_ADD);
    let mut gpu = Gpu::new(m);
    let started = std::time::Instant::now();
    let mut t = 0;
    for _ in 0..16 {
        let p = gpu.place(t, &shape, &costs, None);
        t = p.end_ns;
        gpu.retire_before(p.start_ns);
    }
    let per_wg = started.elapsed().as_nanos() as f64 / (16.0 * 65_536.0);
    println!("placement cost: {per_wg:.0} ns of host time per workgroup");
    assert!(per_wg < 20_000.0);

    // Many one-workgroup dispatches from two queues: the per-call overhead.
    let (shape, costs) = dispatch(m, 1, 1, VECTOR_ADD);
    let started = std::time::Instant::now();
    for k in 0..20_000u64 {
        let p = gpu.place(t + k * 1_000, &shape, &costs, None);
        if k % 64 == 0 {
            gpu.retire_before(p.start_ns.saturating_sub(100_000));
        }
    }
    let per_call = started.elapsed().as_nanos() as f64 / 20_000.0;
    println!("placement cost: {per_call:.0} ns of host time per one-workgroup dispatch");
    assert!(per_call < 100_000.0);
}
