//! Shared helpers for hsasim's HSA-level tests: they drive the exported C functions exactly
//! as a client would.
#![allow(dead_code, unused_imports)]

pub use hsa_abi::*;
pub use hsasim::api::copy::*;
pub use hsasim::api::executable::*;
pub use hsasim::api::memory::*;
pub use hsasim::api::queue::*;
pub use hsasim::api::signal::*;
pub use hsasim::api::system::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU16, Ordering};

/// Initialises the runtime for one test; shuts it down (refcounted) when dropped.
pub struct Hsa;
impl Hsa {
    pub fn init() -> Hsa {
        assert_eq!(hsa_init(), status::SUCCESS);
        Hsa
    }
}
impl Drop for Hsa {
    fn drop(&mut self) {
        assert_eq!(hsa_shut_down(), status::SUCCESS);
    }
}

unsafe extern "C" fn collect_agent(a: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the Vec passed by `agents()`.
    unsafe { (*(data as *mut Vec<hsa_agent_t>)).push(a) };
    status::SUCCESS
}

pub fn agents() -> Vec<hsa_agent_t> {
    let mut v: Vec<hsa_agent_t> = Vec::new();
    // SAFETY: the callback writes into `v` only.
    let s = unsafe { hsa_iterate_agents(Some(collect_agent), &mut v as *mut _ as *mut c_void) };
    assert_eq!(s, status::SUCCESS);
    v
}

pub fn cpu() -> hsa_agent_t {
    agents()[0]
}
pub fn gpu() -> hsa_agent_t {
    agents()[1]
}

unsafe extern "C" fn collect_pool(p: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the Vec passed by `pools()`.
    unsafe { (*(data as *mut Vec<hsa_amd_memory_pool_t>)).push(p) };
    status::SUCCESS
}

pub fn pools(agent: hsa_agent_t) -> Vec<hsa_amd_memory_pool_t> {
    let mut v: Vec<hsa_amd_memory_pool_t> = Vec::new();
    // SAFETY: the callback writes into `v` only.
    let s = unsafe {
        hsa_amd_agent_iterate_memory_pools(
            agent,
            Some(collect_pool),
            &mut v as *mut _ as *mut c_void,
        )
    };
    assert_eq!(s, status::SUCCESS);
    v
}

pub fn signal(initial: i64) -> hsa_signal_t {
    let mut s = hsa_signal_t::default();
    // SAFETY: out-pointer to a local.
    assert_eq!(
        unsafe { hsa_signal_create(initial, 0, std::ptr::null(), &mut s) },
        status::SUCCESS
    );
    s
}

pub fn queue(size: u32, cb: Option<QueueErrorCallback>, data: *mut c_void) -> *mut hsa_queue_t {
    let mut q = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; callback/data outlive the queue in every test.
    let s = unsafe { hsa_queue_create(gpu(), size, HSA_QUEUE_TYPE_MULTI, cb, data, 0, 0, &mut q) };
    assert_eq!(s, status::SUCCESS);
    q
}

/// The AQL publish protocol: reserve, wait for room, body, header last (release), doorbell.
///
/// # Safety
/// `q` must be a live queue; `packet` a 64-byte packet whose first u16 is the header.
pub unsafe fn publish<P: Copy>(q: *mut hsa_queue_t, packet: P) -> u64 {
    assert_eq!(std::mem::size_of::<P>(), 64);
    let index = hsa_queue_add_write_index_screlease(q, 1);
    // SAFETY: `q` is live per the caller.
    let (size, base, doorbell) =
        unsafe { ((*q).size as u64, (*q).base_address, (*q).doorbell_signal) };
    while index - hsa_queue_load_read_index_scacquire(q) >= size {
        std::thread::yield_now();
    }
    // SAFETY: the slot is ours (index reserved and the ring has room).
    unsafe {
        let slot = (base as *mut u8).add(((index % size) * 64) as usize);
        let bytes = &packet as *const P as *const u8;
        std::ptr::copy_nonoverlapping(bytes.add(2), slot.add(2), 62);
        let header = std::ptr::read(bytes as *const u16);
        AtomicU16::from_ptr(slot as *mut u16).store(header, Ordering::Release);
    }
    hsa_signal_store_screlease(doorbell, index as i64);
    index
}

pub fn barrier(
    kind: u16,
    deps: &[hsa_signal_t],
    completion: hsa_signal_t,
) -> hsa_barrier_and_packet_t {
    let mut p = hsa_barrier_and_packet_t {
        header: packet_header(kind, true, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM),
        completion_signal: completion,
        ..Default::default()
    };
    p.dep_signal[..deps.len()].copy_from_slice(deps);
    p
}

pub const SECOND: u64 = 1_000_000_000;

pub fn wait_eq(s: hsa_signal_t, v: i64, timeout_ns: u64) -> i64 {
    hsa_signal_wait_scacquire(
        s,
        HSA_SIGNAL_CONDITION_EQ,
        v,
        timeout_ns,
        HSA_WAIT_STATE_BLOCKED,
    )
}

/// Compiles `source` for `arch` with clang-19 into a raw code object.
pub fn compile_hip(source: &str, arch: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("hsasim-test-{}-{arch}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One name per call: tests run in parallel threads of this process, and two compiling
    // to one path would read each other's half-written output.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!("k_{call}.hip"));
    let out = dir.join(format!("k_{call}.co"));
    std::fs::write(&src, source).unwrap();
    let st = std::process::Command::new("clang++-19")
        .args([
            "-x",
            "hip",
            "-nogpuinc",
            "-nogpulib",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-O3",
            "-mcode-object-version=5",
        ])
        .arg(format!("--offload-arch={arch}"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang++-19 is needed for loader tests (apt-get install clang-19)");
    assert!(st.success(), "clang++-19 failed for {arch}");
    std::fs::read(&out).unwrap()
}

/// The `libhsasim.so` cargo built for this test run. `cargo test -p hsasim` links it into
/// `target/<profile>/deps/` and copies it up to `target/<profile>/` only on some builds,
/// so take whichever of the two is newer.
pub fn built_library() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let profile_dir = deps.parent().expect("target/<profile>");
    let newest = [deps.join("libhsasim.so"), profile_dir.join("libhsasim.so")]
        .into_iter()
        .filter_map(|p| {
            let t = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((t, p))
        })
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    newest.unwrap_or_else(|| {
        panic!(
            "libhsasim.so is missing under {}: build it with `cargo test -p hsasim`",
            profile_dir.display()
        )
    })
}

/// A fresh directory holding `libhsa-runtime64.so.1 -> libhsasim.so`: put it on
/// `LD_LIBRARY_PATH` and ROCr's clients load the simulator.
pub fn rocr_link_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hsasim-rocr-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel: make the link under a unique name, then rename it into place
    // (atomic, and replaces a link another test made).
    let tmp = dir.join(format!("link-{:?}", std::thread::current().id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(built_library(), &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("libhsa-runtime64.so.1")).unwrap();
    dir
}

/// Loads a raw code object for the GPU agent into a fresh, frozen executable.
pub fn load_executable(bytes: &[u8]) -> Result<hsa_executable_t, hsa_status_t> {
    let mut reader = hsa_code_object_reader_t::default();
    let mut exec = hsa_executable_t::default();
    // SAFETY: the byte slice outlives the call (the reader copies it); out-pointers to locals.
    unsafe {
        assert_eq!(
            hsa_code_object_reader_create_from_memory(
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                &mut reader
            ),
            status::SUCCESS
        );
        assert_eq!(
            hsa_executable_create_alt(
                HSA_PROFILE_FULL,
                HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &mut exec
            ),
            status::SUCCESS
        );
        let s = hsa_executable_load_agent_code_object(
            exec,
            gpu(),
            reader,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        assert_eq!(hsa_code_object_reader_destroy(reader), status::SUCCESS);
        if s != status::SUCCESS {
            hsa_executable_destroy(exec);
            return Err(s);
        }
        assert_eq!(
            hsa_executable_freeze(exec, std::ptr::null()),
            status::SUCCESS
        );
    }
    Ok(exec)
}

pub fn executable_symbol(
    exec: hsa_executable_t,
    name: &str,
) -> Result<hsa_executable_symbol_t, hsa_status_t> {
    let n = std::ffi::CString::new(name).unwrap();
    let mut s = hsa_executable_symbol_t::default();
    let g = gpu();
    // SAFETY: NUL-terminated name, local out-pointers.
    match unsafe { hsa_executable_get_symbol_by_name(exec, n.as_ptr(), &g, &mut s) } {
        status::SUCCESS => Ok(s),
        e => Err(e),
    }
}

/// An attribute of an executable symbol; `T` must be the attribute's documented type.
pub fn symbol_value<T: Copy + Default>(s: hsa_executable_symbol_t, attr: u32) -> T {
    let mut v = T::default();
    // SAFETY: `T` is the attribute's type per the caller.
    assert_eq!(
        unsafe { hsa_executable_symbol_get_info(s, attr, &mut v as *mut T as *mut c_void) },
        status::SUCCESS
    );
    v
}

/// The `kernel_object` of the kernel `name` (its `.kd` symbol) in `exec`.
pub fn kernel_object(exec: hsa_executable_t, name: &str) -> u64 {
    symbol_value(
        executable_symbol(exec, name).unwrap_or_else(|e| panic!("no kernel {name}: {e:#x}")),
        symbol_info::KERNEL_OBJECT,
    )
}

/// `size` bytes from `pool`.
pub fn pool_alloc(pool: hsa_amd_memory_pool_t, size: usize) -> Result<*mut c_void, hsa_status_t> {
    let mut p = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    match unsafe { hsa_amd_memory_pool_allocate(pool, size, 0, &mut p) } {
        status::SUCCESS => Ok(p),
        e => Err(e),
    }
}

/// Memory the CPU and the GPU both reach, for buffers a test fills or reads back on the CPU:
/// the CPU's fine-grained pool. A GPU's own pool would do only on a large-BAR host, which
/// strict hsasim is not (`HSASIM_LARGE_BAR`).
pub fn host_visible_pool() -> hsa_amd_memory_pool_t {
    pools(cpu())[0]
}

/// The byte at `ptr` in memory the CPU may not touch (a GPU's pool), read as a program
/// would: through `hsa_memory_copy`.
pub fn read_device_byte(ptr: *const c_void) -> u8 {
    let mut byte = 0u8;
    // SAFETY: one byte into a local; hsasim checks the source range.
    let s = unsafe { hsa_memory_copy((&mut byte as *mut u8).cast(), ptr, 1) };
    assert_eq!(s, status::SUCCESS, "hsa_memory_copy from {ptr:?}");
    byte
}

/// The CPU agent's kernarg pool (ROCr lists it second).
pub fn kernarg_pool() -> hsa_amd_memory_pool_t {
    pools(cpu())[1]
}

/// A one-dimensional kernel dispatch packet with the barrier bit and system-scope fences.
pub fn dispatch(
    kernel_object: u64,
    kernarg: *const c_void,
    grid: u32,
    workgroup: u16,
    completion: hsa_signal_t,
) -> hsa_kernel_dispatch_packet_t {
    hsa_kernel_dispatch_packet_t {
        header: packet_header(
            HSA_PACKET_TYPE_KERNEL_DISPATCH,
            true,
            HSA_FENCE_SCOPE_SYSTEM,
            HSA_FENCE_SCOPE_SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: workgroup,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: grid,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object,
        kernarg_address: kernarg as u64,
        completion_signal: completion,
        ..Default::default()
    }
}

/// Queue errors seen by [`record_queue_error`], as (status, queue address).
pub static QUEUE_ERRORS: std::sync::Mutex<Vec<(hsa_status_t, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// A queue error callback that records what it is told in [`QUEUE_ERRORS`].
pub unsafe extern "C" fn record_queue_error(
    status: hsa_status_t,
    q: *mut hsa_queue_t,
    _data: *mut c_void,
) {
    QUEUE_ERRORS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((status, q as usize));
}

/// Waits (up to 10 s) for the error callback of `q` and returns its status, taking it out
/// of [`QUEUE_ERRORS`] (a later queue may get the same address). Polls the queue's read
/// index meanwhile, which is what runs the queue in deterministic mode.
pub fn queue_error(q: *mut hsa_queue_t) -> hsa_status_t {
    let t = std::time::Instant::now();
    loop {
        {
            let mut errors = QUEUE_ERRORS.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = errors.iter().position(|e| e.1 == q as usize) {
                return errors.remove(i).0;
            }
        }
        assert!(
            t.elapsed().as_secs() < 10,
            "queue {q:?}: no error callback within 10 s"
        );
        hsa_queue_load_read_index_relaxed(q);
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Strict mode (`HSASIM_STRICT=1`): a queue of `queue_type` runs two barriers, then its
/// doorbell is rung back to 0. A single-producer queue fails naming `doorbell-monotonic`;
/// several producers ring in any order, so a multi-producer queue goes on.
pub fn ring_a_doorbell_back(queue_type: u32) {
    let done = signal(1);
    let mut q = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; the callback is a plain function.
    let s = unsafe {
        hsa_queue_create(
            gpu(),
            64,
            queue_type,
            Some(record_queue_error),
            std::ptr::null_mut(),
            0,
            0,
            &mut q,
        )
    };
    assert_eq!(s, status::SUCCESS);
    for _ in 0..2 {
        hsa_signal_store_relaxed(done, 1);
        // SAFETY: a live queue and a 64-byte packet.
        unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
        assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    }
    // Packets 0 and 1 ran; the doorbell now says 0 again (a stale index).
    // SAFETY: a live queue.
    hsa_signal_store_screlease(unsafe { (*q).doorbell_signal }, 0);
    if queue_type == HSA_QUEUE_TYPE_SINGLE {
        assert_eq!(queue_error(q), status::ERROR_INVALID_PACKET_FORMAT);
        let message = hsasim::testing::queue_failure(q as u64).expect("a logged failure");
        assert!(
            message.contains("strict rule `doorbell-monotonic`"),
            "{message}"
        );
        assert!(message.contains("rung with 1"), "{message}");
    } else {
        hsa_signal_store_relaxed(done, 1);
        // SAFETY: as above.
        unsafe { publish(q, barrier(HSA_PACKET_TYPE_BARRIER_AND, &[], done)) };
        assert_eq!(wait_eq(done, 0, 10 * SECOND), 0);
    }
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
    hsa_signal_destroy(done);
}
