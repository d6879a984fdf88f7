//! `HSASIM_CAPTURE=PATH`: each packet a processor takes is a JSON line with its queue, index,
//! type and 64 bytes, and a dispatch's kernel, kernarg segment and decoded hidden arguments;
//! copies, queue creation and destruction and doorbells have lines of their own.
mod common;
use common::*;

const KERNELS: &str = r#"
extern "C" __attribute__((global)) void store(int* out, int v) {
    // The work-group size comes from a hidden argument (code object v5), so the metadata
    // lists them.
    out[__builtin_amdgcn_workitem_id_x()] = v + __builtin_amdgcn_workgroup_size_x();
}
"#;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn packets_are_captured_as_the_device_took_them() {
    let path = std::env::temp_dir().join(format!("hsasim-capture-{}.jsonl", std::process::id()));
    // Read at the first hsa_init of this test binary (it has this one test).
    std::env::set_var("HSASIM_CAPTURE", &path);
    let _h = Hsa::init();
    let exec = load_executable(&compile_hip(KERNELS, "gfx942")).expect("loads");
    let kernel = kernel_object(exec, "store.kd");
    let out = pool_alloc(pools(gpu())[0], 256).unwrap();
    let kernarg = pool_alloc(kernarg_pool(), 512).unwrap();
    // SAFETY: a fresh 512-byte kernarg block: `out` at 0, `v` = 7 at 8, and where hidden
    // arguments go, bytes that say where they are (byte i holds i).
    unsafe {
        for i in 16..512 {
            (kernarg as *mut u8).add(i).write(i as u8);
        }
        (kernarg as *mut u64).write(out as u64);
        (kernarg as *mut i32).add(2).write(7);
    }
    let q = queue(64, None, std::ptr::null_mut());
    let done = signal(2);
    let dispatch_packet = dispatch(kernel, kernarg, 64, 64, done);
    let barrier_packet = barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done);
    // SAFETY: a live queue and 64-byte packets.
    unsafe {
        publish(q, dispatch_packet);
        publish(q, barrier_packet);
    }
    assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    let copied = signal(1);
    // SAFETY: 256 bytes within `out` both ways (overlap-free halves).
    let s = unsafe {
        hsa_amd_memory_async_copy(
            out.byte_add(128),
            gpu(),
            out,
            gpu(),
            128,
            0,
            std::ptr::null(),
            copied,
        )
    };
    assert_eq!(s, status::SUCCESS);
    assert_eq!(wait_eq(copied, 0, 10 * SECOND), 0);
    // SAFETY: a live queue.
    let queue_id = unsafe { (*q).id };
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);

    let text = std::fs::read_to_string(&path).expect("the capture file");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let of = |event: &str| -> Vec<&serde_json::Value> {
        lines
            .iter()
            .filter(|l| l["event"] == event && (event == "copy" || l["queue"] == queue_id))
            .collect()
    };
    let ours = of("packet");
    assert_eq!(ours.len(), 2, "{text}");
    let created = of("queue_create");
    assert_eq!(created.len(), 1, "{text}");
    assert_eq!(created[0]["size"], 64);
    assert_eq!(created[0]["queue_type"], HSA_QUEUE_TYPE_MULTI);
    let rung: Vec<_> = of("doorbell").iter().map(|l| l["value"].clone()).collect();
    assert_eq!(rung, [0, 1], "{text}");
    assert_eq!(of("queue_destroy").len(), 1, "{text}");
    let copies = of("copy");
    assert_eq!(copies.len(), 1, "{text}");
    assert_eq!(copies[0]["size"], 128);
    assert_eq!(copies[0]["src"], format!("{:#x}", out as u64));
    assert_eq!(copies[0]["deps"], 0);
    assert_eq!(copies[0]["completion"], true);
    // Each hidden argument's value is what lay at its offset (byte i holds i).
    let hidden = ours[0]["hidden"].as_array().expect("hidden arguments");
    assert!(
        hidden.iter().any(|h| h["kind"] == "hidden_group_size_x"),
        "{hidden:?}"
    );
    for h in hidden {
        let (offset, size) = (h["offset"].as_u64().unwrap(), h["size"].as_u64().unwrap());
        let mut expect = [0u8; 8];
        for (i, b) in expect.iter_mut().enumerate().take(size.min(8) as usize) {
            *b = (offset as usize + i) as u8;
        }
        assert!(offset >= 16, "{h}");
        assert_eq!(
            h["value"],
            format!("{:#x}", u64::from_le_bytes(expect)),
            "{h}"
        );
    }
    let as_bytes = |p: &hsa_kernel_dispatch_packet_t| {
        // SAFETY: a 64-byte plain-data packet.
        unsafe {
            std::slice::from_raw_parts((p as *const hsa_kernel_dispatch_packet_t).cast::<u8>(), 64)
        }
    };
    assert_eq!(ours[0]["type"], "kernel_dispatch");
    assert_eq!(ours[0]["index"], 0);
    assert_eq!(ours[0]["kernel"], "store.kd");
    assert_eq!(ours[0]["packet"], hex(as_bytes(&dispatch_packet)));
    let mut segment = (out as u64).to_le_bytes().to_vec();
    segment.extend(7i32.to_le_bytes());
    let kernarg_hex = ours[0]["kernarg"].as_str().unwrap();
    assert!(kernarg_hex.starts_with(&hex(&segment)), "{kernarg_hex}");
    assert_eq!(ours[1]["type"], "barrier_and");
    assert_eq!(ours[1]["index"], 1);
    assert!(ours[1].get("kernarg").is_none());

    hsa_signal_destroy(copied);
    hsa_signal_destroy(done);
    hsa_amd_memory_pool_free(out);
    hsa_amd_memory_pool_free(kernarg);
    hsa_executable_destroy(exec);
    let _ = std::fs::remove_file(&path);
}
