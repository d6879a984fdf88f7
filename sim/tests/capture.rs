//! `HSASIM_CAPTURE=PATH`: each packet a processor takes is a JSON line with its queue, index,
//! type and 64 bytes, and a dispatch's kernel and kernarg segment.
mod common;
use common::*;

const KERNELS: &str = r#"
extern "C" __attribute__((global)) void store(int* out, int v) {
    out[__builtin_amdgcn_workitem_id_x()] = v;
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
    let kernarg = pool_alloc(kernarg_pool(), 64).unwrap();
    // SAFETY: a fresh 64-byte kernarg block: `out` at 0, `v` = 7 at 8.
    unsafe {
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

    let text = std::fs::read_to_string(&path).expect("the capture file");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // SAFETY: a live queue.
    let queue_id = unsafe { (*q).id };
    let ours: Vec<&serde_json::Value> = lines.iter().filter(|l| l["queue"] == queue_id).collect();
    assert_eq!(ours.len(), 2, "{text}");
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

    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(done);
    hsa_amd_memory_pool_free(out);
    hsa_amd_memory_pool_free(kernarg);
    hsa_executable_destroy(exec);
    let _ = std::fs::remove_file(&path);
}
