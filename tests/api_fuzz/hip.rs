//! The HIP calls the fuzzer makes, resolved from the built `libamdhip64.so`.

use std::ffi::c_void;
use std::path::Path;

pub type Ptr = *mut c_void;
pub type HostFn = unsafe extern "C" fn(Ptr);
pub type StreamCallback = unsafe extern "C" fn(Ptr, i32, Ptr);

pub const SUCCESS: i32 = 0;
pub const NOT_READY: i32 = 600;
pub const ILLEGAL_ADDRESS: i32 = 700;
pub const LAUNCH_FAILURE: i32 = 719;
pub const OUT_OF_MEMORY: i32 = 2;
pub const MEMCPY_DEFAULT: i32 = 4;
pub const STREAM_NON_BLOCKING: u32 = 1;
pub const EVENT_DISABLE_TIMING: u32 = 2;
pub const CAPTURE_MODE_THREAD_LOCAL: i32 = 1;

macro_rules! hip_table {
    ($($field:ident = $sym:literal : fn($($arg:ty),*);)*) => {
        pub struct Hip {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> i32,)*
            _lib: libloading::Library,
        }

        impl Hip {
            pub fn open(lib_dir: &Path) -> Hip {
                let path = lib_dir.join("libamdhip64.so");
                // SAFETY: the library is hipshim's; loading it runs only its initialisers.
                let lib = unsafe { libloading::Library::new(&path) }
                    .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
                Hip {
                    $($field: {
                        // SAFETY: the exported function has the declared C signature
                        // (hip_headers/hip).
                        *unsafe { lib.get(concat!($sym, "\0").as_bytes()) }
                            .unwrap_or_else(|e| panic!("{}: {e}", $sym))
                    },)*
                    _lib: lib,
                }
            }
        }
    };
}

hip_table! {
    set_device = "hipSetDevice": fn(i32);
    device_synchronize = "hipDeviceSynchronize": fn();
    get_last_error = "hipGetLastError": fn();
    stream_create_with_flags = "hipStreamCreateWithFlags": fn(*mut Ptr, u32);
    stream_destroy = "hipStreamDestroy": fn(Ptr);
    stream_synchronize = "hipStreamSynchronize": fn(Ptr);
    stream_query = "hipStreamQuery": fn(Ptr);
    stream_wait_event = "hipStreamWaitEvent": fn(Ptr, Ptr, u32);
    event_create_with_flags = "hipEventCreateWithFlags": fn(*mut Ptr, u32);
    event_destroy = "hipEventDestroy": fn(Ptr);
    event_record = "hipEventRecord": fn(Ptr, Ptr);
    event_synchronize = "hipEventSynchronize": fn(Ptr);
    event_query = "hipEventQuery": fn(Ptr);
    event_elapsed_time = "hipEventElapsedTime": fn(*mut f32, Ptr, Ptr);
    malloc = "hipMalloc": fn(*mut Ptr, usize);
    free = "hipFree": fn(Ptr);
    host_malloc = "hipHostMalloc": fn(*mut Ptr, usize, u32);
    host_free = "hipHostFree": fn(Ptr);
    malloc_managed = "hipMallocManaged": fn(*mut Ptr, usize, u32);
    malloc_async = "hipMallocAsync": fn(*mut Ptr, usize, Ptr);
    free_async = "hipFreeAsync": fn(Ptr, Ptr);
    memcpy = "hipMemcpy": fn(Ptr, *const c_void, usize, i32);
    memcpy_async = "hipMemcpyAsync": fn(Ptr, *const c_void, usize, i32, Ptr);
    memset_d32_async = "hipMemsetD32Async": fn(Ptr, i32, usize, Ptr);
    module_load_data = "hipModuleLoadData": fn(*mut Ptr, *const c_void);
    module_unload = "hipModuleUnload": fn(Ptr);
    module_get_function = "hipModuleGetFunction": fn(*mut Ptr, Ptr, *const u8);
    module_launch_kernel = "hipModuleLaunchKernel":
        fn(Ptr, u32, u32, u32, u32, u32, u32, u32, Ptr, *mut Ptr, *mut Ptr);
    launch_host_func = "hipLaunchHostFunc": fn(Ptr, HostFn, Ptr);
    stream_add_callback = "hipStreamAddCallback": fn(Ptr, StreamCallback, Ptr, u32);
    stream_begin_capture = "hipStreamBeginCapture": fn(Ptr, i32);
    stream_end_capture = "hipStreamEndCapture": fn(Ptr, *mut Ptr);
    graph_instantiate = "hipGraphInstantiate": fn(*mut Ptr, Ptr, Ptr, *mut u8, usize);
    graph_destroy = "hipGraphDestroy": fn(Ptr);
    graph_launch = "hipGraphLaunch": fn(Ptr, Ptr);
    graph_exec_destroy = "hipGraphExecDestroy": fn(Ptr);
}

// SAFETY: the table holds plain function pointers into a library that stays loaded while
// the table lives; HIP's entry points may be called from any thread.
unsafe impl Sync for Hip {}
// SAFETY: as above.
unsafe impl Send for Hip {}
