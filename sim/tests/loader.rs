mod common;
use common::*;
use common::{executable_symbol as symbol, load_executable as load, symbol_value as info};
use std::ffi::c_void;

const KERNELS: &str = r#"
__attribute__((global)) void add(float* a, const float* b, int n) {
    int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 256;
    if (i < n) a[i] += b[i];
}
__attribute__((device)) int counter = 5;
__attribute__((device)) int* ptr_to_counter = &counter;
__attribute__((global)) void inc() { *ptr_to_counter += 1; }
"#;

#[test]
fn executable_load_and_symbol_lookup_on_gfx942() {
    let _h = Hsa::init();
    let exec =
        load(&compile_hip(KERNELS, "gfx942")).expect("gfx942 code object loads on a gfx942 agent");
    let k = symbol(exec, "_Z3addPfPKfi.kd").unwrap();
    assert_eq!(info::<u32>(k, symbol_info::TYPE), HSA_SYMBOL_KIND_KERNEL);
    let kobj: u64 = info(k, symbol_info::KERNEL_OBJECT);
    assert_eq!(kobj % 64, 0, "kernel descriptors are 64-byte aligned");
    assert!(info::<u32>(k, symbol_info::KERNEL_KERNARG_SEGMENT_SIZE) >= 20);
    assert!(info::<u32>(k, symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT) >= 8);
    assert!(!info::<bool>(k, symbol_info::KERNEL_DYNAMIC_CALLSTACK));
    let len: u32 = info(k, symbol_info::NAME_LENGTH);
    let mut name = vec![0u8; len as usize];
    // SAFETY: a buffer of NAME_LENGTH bytes.
    unsafe {
        hsa_executable_symbol_get_info(k, symbol_info::NAME, name.as_mut_ptr() as *mut c_void)
    };
    assert_eq!(name, b"_Z3addPfPKfi.kd");
    // SAFETY: the descriptor lives in the loaded image.
    let kd = unsafe { &*(kobj as *const KernelDescriptor) };
    assert_ne!(kd.kernel_code_entry_byte_offset, 0);

    // The variable's RELATIVE64 relocation points at `counter` in the loaded image.
    let counter = symbol(exec, "counter").unwrap();
    let ptr = symbol(exec, "ptr_to_counter").unwrap();
    let counter_addr: u64 = info(counter, symbol_info::VARIABLE_ADDRESS);
    let ptr_addr: u64 = info(ptr, symbol_info::VARIABLE_ADDRESS);
    // SAFETY: both are live variables of the loaded image.
    unsafe {
        assert_eq!(*(counter_addr as *const i32), 5);
        assert_eq!(*(ptr_addr as *const u64), counter_addr);
    }
    assert_eq!(
        symbol(exec, "nope.kd"),
        Err(status::ERROR_INVALID_SYMBOL_NAME)
    );
    assert_eq!(hsa_executable_destroy(exec), status::SUCCESS);
    assert_eq!(
        hsa_executable_destroy(exec),
        status::ERROR_INVALID_EXECUTABLE
    );
}

#[test]
fn gfx90a_code_object_is_rejected_by_gfx942_agent() {
    let _h = Hsa::init();
    assert_eq!(
        load(&compile_hip(KERNELS, "gfx90a")),
        Err(status::ERROR_INVALID_ISA)
    );
    assert_eq!(
        load(b"\x7fELF not really"),
        Err(status::ERROR_INVALID_CODE_OBJECT)
    );
}

#[test]
fn agents_and_isa_names_match_rocr() {
    let _h = Hsa::init();
    let a = agents();
    assert_eq!(a.len(), 2);
    let mut name = [0u8; 64];
    let mut dev = 0u32;
    // SAFETY (get_info calls): buffers of the documented sizes.
    unsafe {
        hsa_agent_get_info(a[0], agent_info::DEVICE, &mut dev as *mut _ as *mut c_void);
        assert_eq!(dev, HSA_DEVICE_TYPE_CPU);
        hsa_agent_get_info(a[1], agent_info::NAME, name.as_mut_ptr() as *mut c_void);
    }
    assert!(name.starts_with(b"gfx942\0"));
    let mut isa = hsa_isa_t::default();
    // SAFETY: as above.
    unsafe { hsa_agent_get_info(a[1], agent_info::ISA, &mut isa as *mut _ as *mut c_void) };
    let mut len = 0u32;
    // SAFETY: as above.
    unsafe {
        hsa_isa_get_info_alt(
            isa,
            isa_info::NAME_LENGTH,
            &mut len as *mut _ as *mut c_void,
        )
    };
    let mut isa_name = vec![0u8; len as usize];
    // SAFETY: NAME_LENGTH bytes.
    unsafe { hsa_isa_get_info_alt(isa, isa_info::NAME, isa_name.as_mut_ptr() as *mut c_void) };
    assert_eq!(isa_name, b"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\0");
    let mut text: *const std::ffi::c_char = std::ptr::null();
    for code in [
        status::SUCCESS,
        status::ERROR_INVALID_SIGNAL,
        status::AMD_ERROR_MEMORY_FAULT,
    ] {
        // SAFETY: out-pointer to a local.
        assert_eq!(
            unsafe { hsa_status_string(code, &mut text) },
            status::SUCCESS
        );
        assert!(!text.is_null());
    }
    assert_eq!(
        unsafe { hsa_status_string(0x7777, &mut text) },
        status::ERROR_INVALID_ARGUMENT
    );
}

#[test]
fn deeply_nested_metadata_loads_on_a_small_stack() {
    let _h = Hsa::init();
    let mut co = compile_hip(KERNELS, "gfx942");
    // The metadata note's msgpack becomes thousands of nested arrays (0x91: a one-element
    // array): the loader must give up on it rather than recurse off a client's stack.
    let pos = (0..co.len() - 20)
        .find(|&i| co[i..i + 4] == [7, 0, 0, 0] && co[i + 8..i + 20] == *b"\x20\0\0\0AMDGPU\0\0")
        .expect("metadata note header");
    let len = u32::from_le_bytes(co[pos + 4..pos + 8].try_into().unwrap()) as usize;
    co[pos + 20..pos + 20 + len].fill(0x91);
    let loaded = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || load(&co).map(|exec| hsa_executable_destroy(exec)))
        .unwrap()
        .join()
        .expect("the loader thread survives");
    // The kernel descriptors still describe the kernels: the image loads without its note.
    assert_eq!(loaded, Ok(status::SUCCESS));
}

/// A kernel whose `s_setpc_b64` jumps into its code object's data (16 KiB of words that
/// all decode as `s_nop`, in a writable PT_LOAD after the code): the wave faults at the
/// jump target, naming the address, the code's range and the kernel, before it decodes a
/// word of data. It used to run the data as code, growing the decode cache by hundreds
/// of bytes an instruction (13 GB for a fuzzed code object).
#[test]
fn a_kernel_that_jumps_into_its_data_faults_naming_the_address_and_kernel() {
    let source = r#"
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl jump_into_data
.p2align 8
.type jump_into_data,@function
jump_into_data:
  s_getpc_b64 s[0:1]
  s_add_u32 s0, s0, table@rel32@lo+4
  s_addc_u32 s1, s1, table@rel32@hi+12
  s_setpc_b64 s[0:1]
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel jump_into_data
  .amdhsa_next_free_vgpr 1
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.data
.local table
.p2align 8
table:
  .fill 4096, 4, 0xbf800000
"#;
    let dir = std::env::temp_dir().join(format!("hsasim-jump-into-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (asm, obj, co) = (dir.join("k.s"), dir.join("k.o"), dir.join("k.co"));
    std::fs::write(&asm, source).unwrap();
    let run = |tool: &str, args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(tool)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(
        "llvm-mc-19",
        &[
            "-triple=amdgcn-amd-amdhsa".as_ref(),
            "-mcpu=gfx942".as_ref(),
            "-filetype=obj".as_ref(),
            asm.as_os_str(),
            "-o".as_ref(),
            obj.as_os_str(),
        ],
    );
    run(
        "ld.lld-19",
        &[
            "-shared".as_ref(),
            obj.as_os_str(),
            "-o".as_ref(),
            co.as_os_str(),
        ],
    );
    let bytes = std::fs::read(&co).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let _h = Hsa::init();
    let exec = load_executable(&bytes).expect("the code object loads");
    let kd = kernel_object(exec, "jump_into_data.kd");
    let q = queue(64, Some(record_queue_error), std::ptr::null_mut());
    let done = signal(1);
    // SAFETY: `q` is live; the packet is a 64-byte dispatch packet.
    unsafe { publish(q, dispatch(kd, std::ptr::null(), 64, 64, done)) };
    assert_eq!(queue_error(q), status::AMD_ERROR_ILLEGAL_INSTRUCTION);
    let message =
        hsasim::testing::queue_failure(q as u64).expect("the queue's failure is recorded");
    assert!(message.contains("left the kernel's code"), "{message}");
    assert!(message.contains("jump_into_data"), "{message}");
    assert_eq!(hsa_queue_destroy(q), status::SUCCESS);
}
