//! hsa-abi's C types and constants against ROCm's installed headers (`hsa.h`,
//! `hsa_ext_amd.h`, `amd_hsa_queue.h`, `amd_hsa_signal.h`; Debian's libhsa-runtime-dev
//! installs ROCm 5.2's): sizes, alignments and field offsets of every struct hsa-abi
//! declares, and the value of every enumerator it copies.
//!
//! A C program generated here prints each fact as the C compiler sees it; the test compares
//! them with Rust's `size_of` / `align_of` / `offset_of!` and hsa-abi's constants. Without
//! the headers or a C compiler the test says so and passes, as `tests/abi_headers.rs` does
//! for HIP. Names hsa-abi takes from a newer ROCm than the installed one are listed in
//! `NEWER_THAN_ROCM_5_2`; any other name the headers lack fails the test (a misspelt name
//! must not pass unchecked).

use hsa_abi::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::Path;
use std::process::Command;

/// Where the headers live (`<hsa/hsa.h>`), and which ones hsa-abi follows.
const INCLUDE_DIR: &str = "/usr/include";
const HEADERS: &[&str] = &[
    "hsa/hsa.h",
    "hsa/hsa_ext_amd.h",
    "hsa/amd_hsa_queue.h",
    "hsa/amd_hsa_signal.h",
];

/// Declared in hsa-abi from ROCm 6's headers (virtual memory, newer agent and pool
/// queries); ROCm 5.2 has none of them, so they are checked only against newer headers.
const NEWER_THAN_ROCM_5_2: &[&str] = &[
    "HSA_AMD_SYSTEM_INFO_MWAITX_ENABLED",
    "HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED",
    "HSA_AMD_AGENT_INFO_MEMORY_AVAIL",
    "HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY",
    "HSA_AMD_AGENT_INFO_ASIC_FAMILY_ID",
    "HSA_AMD_AGENT_INFO_UCODE_VERSION",
    "HSA_AMD_AGENT_INFO_SDMA_UCODE_VERSION",
    "HSA_AMD_AGENT_INFO_NUM_SDMA_ENG",
    "HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG",
    "HSA_AMD_AGENT_INFO_IOMMU_SUPPORT",
    "HSA_AMD_AGENT_INFO_NUM_XCC",
    "HSA_AMD_AGENT_INFO_DRIVER_UID",
    "HSA_AMD_AGENT_INFO_NEAREST_CPU",
    "HSA_AMD_MEMORY_POOL_INFO_LOCATION",
    "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE",
    "HSA_ACCESS_PERMISSION_NONE",
    "MEMORY_TYPE_NONE",
    "MEMORY_TYPE_PINNED",
    "hsa_amd_vmem_alloc_handle_t",
    "hsa_amd_memory_access_desc_t",
];

/// Facts where hsa-abi deliberately differs, with why. The AQL packet types are aligned to
/// their 64-byte ring slot (where every packet lives), stricter than C's 8; size and field
/// offsets still agree.
const DELIBERATE: &[(&str, &str)] = &[
    (
        "_Alignof(hsa_kernel_dispatch_packet_t)",
        "aligned to its 64-byte queue slot",
    ),
    (
        "_Alignof(hsa_barrier_and_packet_t)",
        "aligned to its 64-byte queue slot",
    ),
    (
        "_Alignof(hsa_barrier_or_packet_t)",
        "aligned to its 64-byte queue slot",
    ),
    (
        "_Alignof(hsa_agent_dispatch_packet_t)",
        "aligned to its 64-byte queue slot",
    ),
    (
        "_Alignof(hsa_amd_barrier_value_packet_t)",
        "aligned to its 64-byte queue slot",
    ),
];

/// One number both sides must agree on: `c` is a C expression, `name` the C identifier it
/// needs from the headers.
struct Fact {
    c: String,
    name: &'static str,
    rust: i128,
}

/// Size, alignment and the offset of each listed field:
/// `"c_type" = RustType { "c_field" = rust_field, ... }`.
macro_rules! layouts {
    ($facts:ident; $( $c:literal = $rust:ty { $($cf:literal = $rf:ident),* $(,)? } )*) => {$(
        $facts.push(Fact {
            c: format!("sizeof({})", $c),
            name: $c,
            rust: size_of::<$rust>() as i128,
        });
        $facts.push(Fact {
            c: format!("_Alignof({})", $c),
            name: $c,
            rust: align_of::<$rust>() as i128,
        });
        $(
            $facts.push(Fact {
                c: format!("offsetof({}, {})", $c, $cf),
                name: $c,
                rust: offset_of!($rust, $rf) as i128,
            });
        )*
    )*};
}

/// Enumerators and macros: `C_NAME = rust_constant`.
macro_rules! constants {
    ($facts:ident; $( $c:ident = $rust:path, )*) => {$(
        $facts.push(Fact {
            c: stringify!($c).to_string(),
            name: stringify!($c),
            rust: $rust as i128,
        });
    )*};
}

fn facts() -> Vec<Fact> {
    let mut facts = Vec::new();
    layouts! { facts;
        "hsa_agent_t" = hsa_agent_t { "handle" = handle }
        "hsa_signal_t" = hsa_signal_t { "handle" = handle }
        "hsa_isa_t" = hsa_isa_t { "handle" = handle }
        "hsa_region_t" = hsa_region_t { "handle" = handle }
        "hsa_amd_memory_pool_t" = hsa_amd_memory_pool_t { "handle" = handle }
        "hsa_executable_t" = hsa_executable_t { "handle" = handle }
        "hsa_executable_symbol_t" = hsa_executable_symbol_t { "handle" = handle }
        "hsa_code_object_reader_t" = hsa_code_object_reader_t { "handle" = handle }
        "hsa_loaded_code_object_t" = hsa_loaded_code_object_t { "handle" = handle }
        "hsa_cache_t" = hsa_cache_t { "handle" = handle }
        "hsa_wavefront_t" = hsa_wavefront_t { "handle" = handle }
        "hsa_signal_group_t" = hsa_signal_group_t { "handle" = handle }
        "hsa_amd_vmem_alloc_handle_t" = hsa_amd_vmem_alloc_handle_t { "handle" = handle }
        "hsa_signal_value_t" = hsa_signal_value_t {}
        "hsa_status_t" = hsa_status_t {}
        "hsa_amd_memory_pool_link_info_t" = hsa_amd_memory_pool_link_info_t {
            "min_latency" = min_latency,
            "max_latency" = max_latency,
            "min_bandwidth" = min_bandwidth,
            "max_bandwidth" = max_bandwidth,
            "atomic_support_32bit" = atomic_support_32bit,
            "atomic_support_64bit" = atomic_support_64bit,
            "coherent_support" = coherent_support,
            "link_type" = link_type,
            "numa_distance" = numa_distance,
        }
        "hsa_amd_pointer_info_t" = hsa_amd_pointer_info_t {
            "size" = size,
            "type" = type_,
            "agentBaseAddress" = agent_base_address,
            "hostBaseAddress" = host_base_address,
            "sizeInBytes" = size_in_bytes,
            "userData" = user_data,
            "agentOwner" = agent_owner,
            "global_flags" = global_flags,
        }
        "hsa_kernel_dispatch_packet_t" = hsa_kernel_dispatch_packet_t {
            "header" = header,
            "setup" = setup,
            "workgroup_size_x" = workgroup_size_x,
            "workgroup_size_y" = workgroup_size_y,
            "workgroup_size_z" = workgroup_size_z,
            "reserved0" = reserved0,
            "grid_size_x" = grid_size_x,
            "grid_size_y" = grid_size_y,
            "grid_size_z" = grid_size_z,
            "private_segment_size" = private_segment_size,
            "group_segment_size" = group_segment_size,
            "kernel_object" = kernel_object,
            "kernarg_address" = kernarg_address,
            "reserved2" = reserved2,
            "completion_signal" = completion_signal,
        }
        "hsa_barrier_and_packet_t" = hsa_barrier_and_packet_t {
            "header" = header,
            "reserved0" = reserved0,
            "reserved1" = reserved1,
            "dep_signal" = dep_signal,
            "reserved2" = reserved2,
            "completion_signal" = completion_signal,
        }
        "hsa_barrier_or_packet_t" = hsa_barrier_or_packet_t {
            "header" = header,
            "reserved0" = reserved0,
            "reserved1" = reserved1,
            "dep_signal" = dep_signal,
            "reserved2" = reserved2,
            "completion_signal" = completion_signal,
        }
        "hsa_agent_dispatch_packet_t" = hsa_agent_dispatch_packet_t {
            "header" = header,
            "type" = type_,
            "reserved0" = reserved0,
            "return_address" = return_address,
            "arg" = arg,
            "reserved2" = reserved2,
            "completion_signal" = completion_signal,
        }
        "hsa_amd_barrier_value_packet_t" = hsa_amd_barrier_value_packet_t {
            "header.header" = header,
            "header.AmdFormat" = amd_format,
            "header.reserved" = reserved,
            "reserved0" = reserved0,
            "signal" = signal,
            "value" = value,
            "mask" = mask,
            "cond" = cond,
            "reserved1" = reserved1,
            "reserved2" = reserved2,
            "reserved3" = reserved3,
            "completion_signal" = completion_signal,
        }
        "hsa_queue_t" = hsa_queue_t {
            "type" = type_,
            "features" = features,
            "base_address" = base_address,
            "doorbell_signal" = doorbell_signal,
            "size" = size,
            "reserved1" = reserved1,
            "id" = id,
        }
        "amd_queue_t" = amd_queue_t {
            "hsa_queue" = hsa_queue,
            "reserved1" = reserved1,
            "write_dispatch_id" = write_dispatch_id,
            "group_segment_aperture_base_hi" = group_segment_aperture_base_hi,
            "private_segment_aperture_base_hi" = private_segment_aperture_base_hi,
            "max_cu_id" = max_cu_id,
            "max_wave_id" = max_wave_id,
            "max_legacy_doorbell_dispatch_id_plus_1" = max_legacy_doorbell_dispatch_id_plus_1,
            "legacy_doorbell_lock" = legacy_doorbell_lock,
            "reserved2" = reserved2,
            "read_dispatch_id" = read_dispatch_id,
            "read_dispatch_id_field_base_byte_offset" = read_dispatch_id_field_base_byte_offset,
            "compute_tmpring_size" = compute_tmpring_size,
            "scratch_resource_descriptor" = scratch_resource_descriptor,
            "scratch_backing_memory_location" = scratch_backing_memory_location,
            "scratch_backing_memory_byte_size" = scratch_backing_memory_byte_size,
            "scratch_wave64_lane_byte_size" = scratch_wave64_lane_byte_size,
            "queue_properties" = queue_properties,
            "reserved3" = reserved3,
            "queue_inactive_signal" = queue_inactive_signal,
            "reserved4" = reserved4,
        }
        "amd_signal_t" = amd_signal_t {
            "kind" = kind,
            "value" = value,
            "event_mailbox_ptr" = event_mailbox_ptr,
            "event_id" = event_id,
            "reserved1" = reserved1,
            "start_ts" = start_ts,
            "end_ts" = end_ts,
            "queue_ptr" = queue_ptr,
            "reserved3" = reserved3,
        }
        "hsa_amd_profiling_dispatch_time_t" = hsa_amd_profiling_time_t {
            "start" = start,
            "end" = end,
        }
        "hsa_amd_profiling_async_copy_time_t" = hsa_amd_profiling_time_t {
            "start" = start,
            "end" = end,
        }
        "hsa_amd_memory_access_desc_t" = hsa_amd_memory_access_desc_t {
            "permissions" = permissions,
            "agent_handle" = agent_handle,
        }
        "hsa_amd_ipc_memory_t" = hsa_amd_ipc_memory_t { "handle" = handle }
        "hsa_amd_ipc_signal_t" = hsa_amd_ipc_signal_t { "handle" = handle }
        "hsa_dim3_t" = hsa_dim3_t { "x" = x, "y" = y, "z" = z }
        "hsa_pitched_ptr_t" = hsa_pitched_ptr_t {
            "base" = base,
            "pitch" = pitch,
            "slice" = slice,
        }
        "hsa_amd_svm_attribute_pair_t" = hsa_amd_svm_attribute_pair_t {
            "attribute" = attribute,
            "value" = value,
        }
    }
    constants! { facts;
        HSA_STATUS_SUCCESS = status::SUCCESS,
        HSA_STATUS_INFO_BREAK = status::INFO_BREAK,
        HSA_STATUS_ERROR = status::ERROR,
        HSA_STATUS_ERROR_INVALID_ARGUMENT = status::ERROR_INVALID_ARGUMENT,
        HSA_STATUS_ERROR_INVALID_QUEUE_CREATION = status::ERROR_INVALID_QUEUE_CREATION,
        HSA_STATUS_ERROR_INVALID_ALLOCATION = status::ERROR_INVALID_ALLOCATION,
        HSA_STATUS_ERROR_INVALID_AGENT = status::ERROR_INVALID_AGENT,
        HSA_STATUS_ERROR_INVALID_REGION = status::ERROR_INVALID_REGION,
        HSA_STATUS_ERROR_INVALID_SIGNAL = status::ERROR_INVALID_SIGNAL,
        HSA_STATUS_ERROR_INVALID_QUEUE = status::ERROR_INVALID_QUEUE,
        HSA_STATUS_ERROR_OUT_OF_RESOURCES = status::ERROR_OUT_OF_RESOURCES,
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT = status::ERROR_INVALID_PACKET_FORMAT,
        HSA_STATUS_ERROR_RESOURCE_FREE = status::ERROR_RESOURCE_FREE,
        HSA_STATUS_ERROR_NOT_INITIALIZED = status::ERROR_NOT_INITIALIZED,
        HSA_STATUS_ERROR_REFCOUNT_OVERFLOW = status::ERROR_REFCOUNT_OVERFLOW,
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS = status::ERROR_INCOMPATIBLE_ARGUMENTS,
        HSA_STATUS_ERROR_INVALID_INDEX = status::ERROR_INVALID_INDEX,
        HSA_STATUS_ERROR_INVALID_ISA = status::ERROR_INVALID_ISA,
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT = status::ERROR_INVALID_CODE_OBJECT,
        HSA_STATUS_ERROR_INVALID_EXECUTABLE = status::ERROR_INVALID_EXECUTABLE,
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE = status::ERROR_FROZEN_EXECUTABLE,
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME = status::ERROR_INVALID_SYMBOL_NAME,
        HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED = status::ERROR_VARIABLE_ALREADY_DEFINED,
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED = status::ERROR_VARIABLE_UNDEFINED,
        HSA_STATUS_ERROR_EXCEPTION = status::ERROR_EXCEPTION,
        HSA_STATUS_ERROR_INVALID_ISA_NAME = status::ERROR_INVALID_ISA_NAME,
        HSA_STATUS_ERROR_INVALID_CODE_SYMBOL = status::ERROR_INVALID_CODE_SYMBOL,
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL = status::ERROR_INVALID_EXECUTABLE_SYMBOL,
        HSA_STATUS_ERROR_INVALID_FILE = status::ERROR_INVALID_FILE,
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER = status::ERROR_INVALID_CODE_OBJECT_READER,
        HSA_STATUS_ERROR_INVALID_CACHE = status::ERROR_INVALID_CACHE,
        HSA_STATUS_ERROR_INVALID_WAVEFRONT = status::ERROR_INVALID_WAVEFRONT,
        HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP = status::ERROR_INVALID_SIGNAL_GROUP,
        HSA_STATUS_ERROR_INVALID_RUNTIME_STATE = status::ERROR_INVALID_RUNTIME_STATE,
        HSA_STATUS_ERROR_FATAL = status::ERROR_FATAL,
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION = status::AMD_ERROR_MEMORY_APERTURE_VIOLATION,
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION = status::AMD_ERROR_ILLEGAL_INSTRUCTION,
        HSA_STATUS_ERROR_MEMORY_FAULT = status::AMD_ERROR_MEMORY_FAULT,
        HSA_SYSTEM_INFO_VERSION_MAJOR = system_info::VERSION_MAJOR,
        HSA_SYSTEM_INFO_VERSION_MINOR = system_info::VERSION_MINOR,
        HSA_SYSTEM_INFO_TIMESTAMP = system_info::TIMESTAMP,
        HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY = system_info::TIMESTAMP_FREQUENCY,
        HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT = system_info::SIGNAL_MAX_WAIT,
        HSA_SYSTEM_INFO_ENDIANNESS = system_info::ENDIANNESS,
        HSA_SYSTEM_INFO_MACHINE_MODEL = system_info::MACHINE_MODEL,
        HSA_SYSTEM_INFO_EXTENSIONS = system_info::EXTENSIONS,
        HSA_AMD_SYSTEM_INFO_BUILD_VERSION = system_info::AMD_BUILD_VERSION,
        HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED = system_info::AMD_SVM_SUPPORTED,
        HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT = system_info::AMD_SVM_ACCESSIBLE_BY_DEFAULT,
        HSA_AMD_SYSTEM_INFO_MWAITX_ENABLED = system_info::AMD_MWAITX_ENABLED,
        HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED = system_info::AMD_DMABUF_SUPPORTED,
        HSA_AGENT_INFO_NAME = agent_info::NAME,
        HSA_AGENT_INFO_VENDOR_NAME = agent_info::VENDOR_NAME,
        HSA_AGENT_INFO_FEATURE = agent_info::FEATURE,
        HSA_AGENT_INFO_MACHINE_MODEL = agent_info::MACHINE_MODEL,
        HSA_AGENT_INFO_PROFILE = agent_info::PROFILE,
        HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE = agent_info::DEFAULT_FLOAT_ROUNDING_MODE,
        HSA_AGENT_INFO_WAVEFRONT_SIZE = agent_info::WAVEFRONT_SIZE,
        HSA_AGENT_INFO_WORKGROUP_MAX_DIM = agent_info::WORKGROUP_MAX_DIM,
        HSA_AGENT_INFO_WORKGROUP_MAX_SIZE = agent_info::WORKGROUP_MAX_SIZE,
        HSA_AGENT_INFO_GRID_MAX_DIM = agent_info::GRID_MAX_DIM,
        HSA_AGENT_INFO_GRID_MAX_SIZE = agent_info::GRID_MAX_SIZE,
        HSA_AGENT_INFO_FBARRIER_MAX_SIZE = agent_info::FBARRIER_MAX_SIZE,
        HSA_AGENT_INFO_QUEUES_MAX = agent_info::QUEUES_MAX,
        HSA_AGENT_INFO_QUEUE_MIN_SIZE = agent_info::QUEUE_MIN_SIZE,
        HSA_AGENT_INFO_QUEUE_MAX_SIZE = agent_info::QUEUE_MAX_SIZE,
        HSA_AGENT_INFO_QUEUE_TYPE = agent_info::QUEUE_TYPE,
        HSA_AGENT_INFO_NODE = agent_info::NODE,
        HSA_AGENT_INFO_DEVICE = agent_info::DEVICE,
        HSA_AGENT_INFO_CACHE_SIZE = agent_info::CACHE_SIZE,
        HSA_AGENT_INFO_ISA = agent_info::ISA,
        HSA_AGENT_INFO_EXTENSIONS = agent_info::EXTENSIONS,
        HSA_AGENT_INFO_VERSION_MAJOR = agent_info::VERSION_MAJOR,
        HSA_AGENT_INFO_VERSION_MINOR = agent_info::VERSION_MINOR,
        HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = agent_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES,
        HSA_AGENT_INFO_FAST_F16_OPERATION = agent_info::FAST_F16_OPERATION,
        HSA_AMD_AGENT_INFO_CHIP_ID = agent_info::AMD_CHIP_ID,
        HSA_AMD_AGENT_INFO_CACHELINE_SIZE = agent_info::AMD_CACHELINE_SIZE,
        HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT = agent_info::AMD_COMPUTE_UNIT_COUNT,
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY = agent_info::AMD_MAX_CLOCK_FREQUENCY,
        HSA_AMD_AGENT_INFO_DRIVER_NODE_ID = agent_info::AMD_DRIVER_NODE_ID,
        HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS = agent_info::AMD_MAX_ADDRESS_WATCH_POINTS,
        HSA_AMD_AGENT_INFO_BDFID = agent_info::AMD_BDFID,
        HSA_AMD_AGENT_INFO_MEMORY_WIDTH = agent_info::AMD_MEMORY_WIDTH,
        HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY = agent_info::AMD_MEMORY_MAX_FREQUENCY,
        HSA_AMD_AGENT_INFO_PRODUCT_NAME = agent_info::AMD_PRODUCT_NAME,
        HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU = agent_info::AMD_MAX_WAVES_PER_CU,
        HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU = agent_info::AMD_NUM_SIMDS_PER_CU,
        HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES = agent_info::AMD_NUM_SHADER_ENGINES,
        HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE = agent_info::AMD_NUM_SHADER_ARRAYS_PER_SE,
        HSA_AMD_AGENT_INFO_HDP_FLUSH = agent_info::AMD_HDP_FLUSH,
        HSA_AMD_AGENT_INFO_DOMAIN = agent_info::AMD_DOMAIN,
        HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES = agent_info::AMD_COOPERATIVE_QUEUES,
        HSA_AMD_AGENT_INFO_UUID = agent_info::AMD_UUID,
        HSA_AMD_AGENT_INFO_ASIC_REVISION = agent_info::AMD_ASIC_REVISION,
        HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS = agent_info::AMD_SVM_DIRECT_HOST_ACCESS,
        HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT = agent_info::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT,
        HSA_AMD_AGENT_INFO_MEMORY_AVAIL = agent_info::AMD_MEMORY_AVAIL,
        HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY = agent_info::AMD_TIMESTAMP_FREQUENCY,
        HSA_AMD_AGENT_INFO_ASIC_FAMILY_ID = agent_info::AMD_ASIC_FAMILY_ID,
        HSA_AMD_AGENT_INFO_UCODE_VERSION = agent_info::AMD_UCODE_VERSION,
        HSA_AMD_AGENT_INFO_SDMA_UCODE_VERSION = agent_info::AMD_SDMA_UCODE_VERSION,
        HSA_AMD_AGENT_INFO_NUM_SDMA_ENG = agent_info::AMD_NUM_SDMA_ENG,
        HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG = agent_info::AMD_NUM_SDMA_XGMI_ENG,
        HSA_AMD_AGENT_INFO_IOMMU_SUPPORT = agent_info::AMD_IOMMU_SUPPORT,
        HSA_AMD_AGENT_INFO_NUM_XCC = agent_info::AMD_NUM_XCC,
        HSA_AMD_AGENT_INFO_DRIVER_UID = agent_info::AMD_DRIVER_UID,
        HSA_AMD_AGENT_INFO_NEAREST_CPU = agent_info::AMD_NEAREST_CPU,
        HSA_ISA_INFO_NAME_LENGTH = isa_info::NAME_LENGTH,
        HSA_ISA_INFO_NAME = isa_info::NAME,
        HSA_ISA_INFO_CALL_CONVENTION_COUNT = isa_info::CALL_CONVENTION_COUNT,
        HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE = isa_info::CALL_CONVENTION_INFO_WAVEFRONT_SIZE,
        HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT = isa_info::CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT,
        HSA_ISA_INFO_MACHINE_MODELS = isa_info::MACHINE_MODELS,
        HSA_ISA_INFO_PROFILES = isa_info::PROFILES,
        HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES = isa_info::DEFAULT_FLOAT_ROUNDING_MODES,
        HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = isa_info::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES,
        HSA_ISA_INFO_FAST_F16_OPERATION = isa_info::FAST_F16_OPERATION,
        HSA_ISA_INFO_WORKGROUP_MAX_DIM = isa_info::WORKGROUP_MAX_DIM,
        HSA_ISA_INFO_WORKGROUP_MAX_SIZE = isa_info::WORKGROUP_MAX_SIZE,
        HSA_ISA_INFO_GRID_MAX_DIM = isa_info::GRID_MAX_DIM,
        HSA_ISA_INFO_GRID_MAX_SIZE = isa_info::GRID_MAX_SIZE,
        HSA_ISA_INFO_FBARRIER_MAX_SIZE = isa_info::FBARRIER_MAX_SIZE,
        HSA_AMD_MEMORY_POOL_INFO_SEGMENT = memory_pool_info::SEGMENT,
        HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS = memory_pool_info::GLOBAL_FLAGS,
        HSA_AMD_MEMORY_POOL_INFO_SIZE = memory_pool_info::SIZE,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED = memory_pool_info::RUNTIME_ALLOC_ALLOWED,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE = memory_pool_info::RUNTIME_ALLOC_GRANULE,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT = memory_pool_info::RUNTIME_ALLOC_ALIGNMENT,
        HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL = memory_pool_info::ACCESSIBLE_BY_ALL,
        HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE = memory_pool_info::ALLOC_MAX_SIZE,
        HSA_AMD_MEMORY_POOL_INFO_LOCATION = memory_pool_info::LOCATION,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE = memory_pool_info::RUNTIME_ALLOC_REC_GRANULE,
        HSA_EXECUTABLE_SYMBOL_INFO_TYPE = symbol_info::TYPE,
        HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH = symbol_info::NAME_LENGTH,
        HSA_EXECUTABLE_SYMBOL_INFO_NAME = symbol_info::NAME,
        HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH = symbol_info::MODULE_NAME_LENGTH,
        HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME = symbol_info::MODULE_NAME,
        HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE = symbol_info::LINKAGE,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION = symbol_info::VARIABLE_ALLOCATION,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT = symbol_info::VARIABLE_SEGMENT,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT = symbol_info::VARIABLE_ALIGNMENT,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE = symbol_info::VARIABLE_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST = symbol_info::VARIABLE_IS_CONST,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE = symbol_info::KERNEL_KERNARG_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT = symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE = symbol_info::KERNEL_GROUP_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE = symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK = symbol_info::KERNEL_DYNAMIC_CALLSTACK,
        HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_CALL_CONVENTION = symbol_info::INDIRECT_FUNCTION_CALL_CONVENTION,
        HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION = symbol_info::IS_DEFINITION,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION = symbol_info::KERNEL_CALL_CONVENTION,
        HSA_EXECUTABLE_SYMBOL_INFO_AGENT = symbol_info::AGENT,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS = symbol_info::VARIABLE_ADDRESS,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT = symbol_info::KERNEL_OBJECT,
        HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_OBJECT = symbol_info::INDIRECT_FUNCTION_OBJECT,
        HSA_ACCESS_PERMISSION_NONE = access_permission::NONE,
        HSA_ACCESS_PERMISSION_RO = access_permission::RO,
        HSA_ACCESS_PERMISSION_WO = access_permission::WO,
        HSA_ACCESS_PERMISSION_RW = access_permission::RW,
        HSA_DEVICE_TYPE_CPU = HSA_DEVICE_TYPE_CPU,
        HSA_DEVICE_TYPE_GPU = HSA_DEVICE_TYPE_GPU,
        HSA_DEVICE_TYPE_DSP = HSA_DEVICE_TYPE_DSP,
        HSA_AGENT_FEATURE_KERNEL_DISPATCH = HSA_AGENT_FEATURE_KERNEL_DISPATCH,
        HSA_AGENT_FEATURE_AGENT_DISPATCH = HSA_AGENT_FEATURE_AGENT_DISPATCH,
        HSA_SIGNAL_CONDITION_EQ = HSA_SIGNAL_CONDITION_EQ,
        HSA_SIGNAL_CONDITION_NE = HSA_SIGNAL_CONDITION_NE,
        HSA_SIGNAL_CONDITION_LT = HSA_SIGNAL_CONDITION_LT,
        HSA_SIGNAL_CONDITION_GTE = HSA_SIGNAL_CONDITION_GTE,
        HSA_WAIT_STATE_BLOCKED = HSA_WAIT_STATE_BLOCKED,
        HSA_WAIT_STATE_ACTIVE = HSA_WAIT_STATE_ACTIVE,
        HSA_QUEUE_TYPE_MULTI = HSA_QUEUE_TYPE_MULTI,
        HSA_QUEUE_TYPE_SINGLE = HSA_QUEUE_TYPE_SINGLE,
        HSA_QUEUE_TYPE_COOPERATIVE = HSA_QUEUE_TYPE_COOPERATIVE,
        HSA_QUEUE_FEATURE_KERNEL_DISPATCH = HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
        HSA_QUEUE_FEATURE_AGENT_DISPATCH = HSA_QUEUE_FEATURE_AGENT_DISPATCH,
        HSA_AMD_QUEUE_PRIORITY_LOW = HSA_AMD_QUEUE_PRIORITY_LOW,
        HSA_AMD_QUEUE_PRIORITY_NORMAL = HSA_AMD_QUEUE_PRIORITY_NORMAL,
        HSA_AMD_QUEUE_PRIORITY_HIGH = HSA_AMD_QUEUE_PRIORITY_HIGH,
        HSA_AMD_SEGMENT_GLOBAL = HSA_AMD_SEGMENT_GLOBAL,
        HSA_AMD_SEGMENT_READONLY = HSA_AMD_SEGMENT_READONLY,
        HSA_AMD_SEGMENT_PRIVATE = HSA_AMD_SEGMENT_PRIVATE,
        HSA_AMD_SEGMENT_GROUP = HSA_AMD_SEGMENT_GROUP,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS = HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
        HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED = HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED,
        HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT = HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT,
        HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT = HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT,
        HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS = HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS,
        HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO = HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO,
        HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT = HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT,
        HSA_AMD_LINK_INFO_TYPE_QPI = HSA_AMD_LINK_INFO_TYPE_QPI,
        HSA_AMD_LINK_INFO_TYPE_PCIE = HSA_AMD_LINK_INFO_TYPE_PCIE,
        HSA_AMD_LINK_INFO_TYPE_INFINBAND = HSA_AMD_LINK_INFO_TYPE_INFINBAND,
        HSA_AMD_LINK_INFO_TYPE_XGMI = HSA_AMD_LINK_INFO_TYPE_XGMI,
        HSA_EXT_POINTER_TYPE_UNKNOWN = HSA_EXT_POINTER_TYPE_UNKNOWN,
        HSA_EXT_POINTER_TYPE_HSA = HSA_EXT_POINTER_TYPE_HSA,
        HSA_EXT_POINTER_TYPE_LOCKED = HSA_EXT_POINTER_TYPE_LOCKED,
        HSA_EXT_POINTER_TYPE_GRAPHICS = HSA_EXT_POINTER_TYPE_GRAPHICS,
        HSA_EXT_POINTER_TYPE_IPC = HSA_EXT_POINTER_TYPE_IPC,
        HSA_SYMBOL_KIND_VARIABLE = HSA_SYMBOL_KIND_VARIABLE,
        HSA_SYMBOL_KIND_KERNEL = HSA_SYMBOL_KIND_KERNEL,
        HSA_SYMBOL_KIND_INDIRECT_FUNCTION = HSA_SYMBOL_KIND_INDIRECT_FUNCTION,
        HSA_PROFILE_BASE = HSA_PROFILE_BASE,
        HSA_PROFILE_FULL = HSA_PROFILE_FULL,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT = HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO = HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR,
        HSA_EXECUTABLE_STATE_UNFROZEN = HSA_EXECUTABLE_STATE_UNFROZEN,
        HSA_EXECUTABLE_STATE_FROZEN = HSA_EXECUTABLE_STATE_FROZEN,
        HSA_MACHINE_MODEL_SMALL = HSA_MACHINE_MODEL_SMALL,
        HSA_MACHINE_MODEL_LARGE = HSA_MACHINE_MODEL_LARGE,
        HSA_ENDIANNESS_LITTLE = HSA_ENDIANNESS_LITTLE,
        HSA_PACKET_TYPE_VENDOR_SPECIFIC = HSA_PACKET_TYPE_VENDOR_SPECIFIC,
        HSA_PACKET_TYPE_INVALID = HSA_PACKET_TYPE_INVALID,
        HSA_PACKET_TYPE_KERNEL_DISPATCH = HSA_PACKET_TYPE_KERNEL_DISPATCH,
        HSA_PACKET_TYPE_BARRIER_AND = HSA_PACKET_TYPE_BARRIER_AND,
        HSA_PACKET_TYPE_AGENT_DISPATCH = HSA_PACKET_TYPE_AGENT_DISPATCH,
        HSA_PACKET_TYPE_BARRIER_OR = HSA_PACKET_TYPE_BARRIER_OR,
        HSA_AMD_PACKET_TYPE_BARRIER_VALUE = HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
        HSA_FENCE_SCOPE_NONE = HSA_FENCE_SCOPE_NONE,
        HSA_FENCE_SCOPE_AGENT = HSA_FENCE_SCOPE_AGENT,
        HSA_FENCE_SCOPE_SYSTEM = HSA_FENCE_SCOPE_SYSTEM,
        HSA_PACKET_HEADER_TYPE = HSA_PACKET_HEADER_TYPE,
        HSA_PACKET_HEADER_BARRIER = HSA_PACKET_HEADER_BARRIER,
        HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE = HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE,
        HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE = HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE,
        HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS = HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        AMD_SIGNAL_KIND_INVALID = AMD_SIGNAL_KIND_INVALID,
        AMD_SIGNAL_KIND_USER = AMD_SIGNAL_KIND_USER,
        AMD_SIGNAL_KIND_DOORBELL = AMD_SIGNAL_KIND_DOORBELL,
        AMD_SIGNAL_KIND_LEGACY_DOORBELL = AMD_SIGNAL_KIND_LEGACY_DOORBELL,
        MEMORY_TYPE_NONE = MEMORY_TYPE_NONE,
        MEMORY_TYPE_PINNED = MEMORY_TYPE_PINNED,
    }
    facts
}

/// Why the check cannot run here, if it cannot.
fn headers_missing() -> Option<String> {
    let missing: Vec<_> = HEADERS
        .iter()
        .filter(|h| !Path::new(INCLUDE_DIR).join(h).exists())
        .collect();
    (!missing.is_empty())
        .then(|| format!("{missing:?} not under {INCLUDE_DIR} (install libhsa-runtime-dev)"))
}

/// The C program printing `index value` for each fact, one per line.
fn c_program(facts: &[&Fact]) -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n");
    for h in HEADERS {
        writeln!(c, "#include <{h}>").unwrap();
    }
    c.push_str("int main(void) {\n");
    for (i, f) in facts.iter().enumerate() {
        writeln!(c, "    printf(\"{i} %lld\\n\", (long long)({}));", f.c).unwrap();
    }
    c.push_str("    return 0;\n}\n");
    c
}

/// Compiles `program` with `cc` and runs it; `Err` when there is no C compiler.
fn compile_and_run(program: &str) -> Result<BTreeMap<usize, i128>, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hsa-abi-headers");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("facts.c");
    let binary = dir.join("facts");
    std::fs::write(&source, program).unwrap();
    let compiled = Command::new("cc")
        .args(["-std=c11", "-I", INCLUDE_DIR])
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .map_err(|e| format!("no C compiler (cc: {e})"))?;
    assert!(
        compiled.status.success(),
        "the generated program ({}) does not compile against the headers:\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&binary).output().unwrap();
    assert!(run.status.success(), "{} failed", binary.display());
    Ok(String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (i, v) = l.split_once(' ').unwrap();
            (i.parse().unwrap(), v.parse().unwrap())
        })
        .collect())
}

/// Whether `name` occurs in `text` as a whole C identifier.
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name)
        .any(|(at, _)| !text[..at].ends_with(word) && !text[at + name.len()..].starts_with(word))
}

#[test]
fn types_and_constants_match_rocm_headers() {
    if let Some(why) = headers_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let text: String = HEADERS
        .iter()
        .map(|h| std::fs::read_to_string(Path::new(INCLUDE_DIR).join(h)).unwrap())
        .collect();
    let all = facts();
    let (checked, absent): (Vec<&Fact>, Vec<&Fact>) =
        all.iter().partition(|f| mentions(&text, f.name));
    let mut not_in_headers: Vec<&str> = absent.iter().map(|f| f.name).collect();
    not_in_headers.dedup();
    let unexplained: Vec<&str> = not_in_headers
        .iter()
        .copied()
        .filter(|n| !NEWER_THAN_ROCM_5_2.contains(n))
        .collect();
    assert!(
        unexplained.is_empty(),
        "hsa-abi names the installed headers lack (misspelt, or add them to \
         NEWER_THAN_ROCM_5_2 naming the ROCm release): {unexplained:?}"
    );
    let values = match compile_and_run(&c_program(&checked)) {
        Ok(values) => values,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let wrong: Vec<String> = checked
        .iter()
        .enumerate()
        .filter(|(i, f)| values.get(i) != Some(&f.rust))
        .filter(|(_, f)| !DELIBERATE.iter().any(|(c, _)| *c == f.c))
        .map(|(i, f)| format!("{}: headers {:?}, hsa-abi {}", f.c, values.get(&i), f.rust))
        .collect();
    assert!(
        wrong.is_empty(),
        "hsa-abi differs from the headers:\n{}",
        wrong.join("\n")
    );
    eprintln!(
        "{} facts match the installed headers; not in them (newer ROCm): {not_in_headers:?}",
        checked.len()
    );
}
