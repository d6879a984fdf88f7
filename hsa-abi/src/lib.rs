//! The HSA runtime's C ABI as Rust types: status codes, info enums, AQL packet layouts and
//! ROCr's `amd_queue_t` / `amd_signal_t` layouts.
//!
//! hipshim (a client of any HSA runtime) and hsasim (an HSA runtime) both build on this one
//! definition, so the two sides cannot drift apart. Values are those of ROCm's `hsa.h`,
//! `hsa_ext_amd.h`, `amd_hsa_queue.h` and `amd_hsa_signal.h`. The size/offset assertions at
//! the bottom of this file hold the layouts the code relies on; `tests/headers.rs` compares
//! every type and constant here with the installed ROCm headers, when there are some.
//!
//! [`fns`] declares every HSA entry point either side uses, signature by signature
//! (`tests/entry_points.rs` compares the declarations with the headers).
//! [`msgpack`] is the reader both use for the code object metadata note.
#![allow(non_camel_case_types)]

pub mod fns;
pub mod msgpack;

use std::ffi::c_void;

pub type hsa_status_t = u32;

pub mod status {
    use super::hsa_status_t;
    pub const SUCCESS: hsa_status_t = 0x0;
    pub const INFO_BREAK: hsa_status_t = 0x1;
    pub const ERROR: hsa_status_t = 0x1000;
    pub const ERROR_INVALID_ARGUMENT: hsa_status_t = 0x1001;
    pub const ERROR_INVALID_QUEUE_CREATION: hsa_status_t = 0x1002;
    pub const ERROR_INVALID_ALLOCATION: hsa_status_t = 0x1003;
    pub const ERROR_INVALID_AGENT: hsa_status_t = 0x1004;
    pub const ERROR_INVALID_REGION: hsa_status_t = 0x1005;
    pub const ERROR_INVALID_SIGNAL: hsa_status_t = 0x1006;
    pub const ERROR_INVALID_QUEUE: hsa_status_t = 0x1007;
    pub const ERROR_OUT_OF_RESOURCES: hsa_status_t = 0x1008;
    pub const ERROR_INVALID_PACKET_FORMAT: hsa_status_t = 0x1009;
    pub const ERROR_RESOURCE_FREE: hsa_status_t = 0x100A;
    pub const ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;
    pub const ERROR_REFCOUNT_OVERFLOW: hsa_status_t = 0x100C;
    pub const ERROR_INCOMPATIBLE_ARGUMENTS: hsa_status_t = 0x100D;
    pub const ERROR_INVALID_INDEX: hsa_status_t = 0x100E;
    pub const ERROR_INVALID_ISA: hsa_status_t = 0x100F;
    pub const ERROR_INVALID_CODE_OBJECT: hsa_status_t = 0x1010;
    pub const ERROR_INVALID_EXECUTABLE: hsa_status_t = 0x1011;
    pub const ERROR_FROZEN_EXECUTABLE: hsa_status_t = 0x1012;
    pub const ERROR_INVALID_SYMBOL_NAME: hsa_status_t = 0x1013;
    pub const ERROR_VARIABLE_ALREADY_DEFINED: hsa_status_t = 0x1014;
    pub const ERROR_VARIABLE_UNDEFINED: hsa_status_t = 0x1015;
    pub const ERROR_EXCEPTION: hsa_status_t = 0x1016;
    pub const ERROR_INVALID_ISA_NAME: hsa_status_t = 0x1017;
    pub const ERROR_INVALID_CODE_SYMBOL: hsa_status_t = 0x1018;
    pub const ERROR_INVALID_EXECUTABLE_SYMBOL: hsa_status_t = 0x1019;
    pub const ERROR_INVALID_FILE: hsa_status_t = 0x1020;
    pub const ERROR_INVALID_CODE_OBJECT_READER: hsa_status_t = 0x1021;
    pub const ERROR_INVALID_CACHE: hsa_status_t = 0x1022;
    pub const ERROR_INVALID_WAVEFRONT: hsa_status_t = 0x1023;
    pub const ERROR_INVALID_SIGNAL_GROUP: hsa_status_t = 0x1024;
    pub const ERROR_INVALID_RUNTIME_STATE: hsa_status_t = 0x1025;
    pub const ERROR_FATAL: hsa_status_t = 0x1026;
    /// `hsa_ext_amd.h`: a GPU memory access outside any valid mapping.
    pub const AMD_ERROR_MEMORY_APERTURE_VIOLATION: hsa_status_t = 0x29;
    /// `hsa_ext_amd.h`: an illegal instruction was executed by a wave.
    pub const AMD_ERROR_ILLEGAL_INSTRUCTION: hsa_status_t = 0x2A;
    /// `hsa_ext_amd.h`: a wave faulted on a memory access (page fault).
    pub const AMD_ERROR_MEMORY_FAULT: hsa_status_t = 0x2B;
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_agent_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_signal_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_isa_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_region_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_amd_memory_pool_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_executable_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_executable_symbol_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_code_object_reader_t {
    pub handle: u64,
}
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_loaded_code_object_t {
    pub handle: u64,
}
/// `hsa_cache_t`: one cache level of an agent.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_cache_t {
    pub handle: u64,
}
/// `hsa_wavefront_t`: one wavefront size an ISA supports.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_wavefront_t {
    pub handle: u64,
}
/// `hsa_signal_group_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_signal_group_t {
    pub handle: u64,
}

pub type hsa_signal_value_t = i64;

pub mod system_info {
    pub const VERSION_MAJOR: u32 = 0;
    pub const VERSION_MINOR: u32 = 1;
    pub const TIMESTAMP: u32 = 2;
    pub const TIMESTAMP_FREQUENCY: u32 = 3;
    pub const SIGNAL_MAX_WAIT: u32 = 4;
    pub const ENDIANNESS: u32 = 5;
    pub const MACHINE_MODEL: u32 = 6;
    pub const EXTENSIONS: u32 = 7;
    /// `hsa_amd_system_info_t`
    pub const AMD_BUILD_VERSION: u32 = 0x200;
    pub const AMD_SVM_SUPPORTED: u32 = 0x201;
    pub const AMD_SVM_ACCESSIBLE_BY_DEFAULT: u32 = 0x202;
    pub const AMD_MWAITX_ENABLED: u32 = 0x203;
    pub const AMD_DMABUF_SUPPORTED: u32 = 0x204;
    /// hsasim's own attribute (bool): whether `TIMESTAMP` and every profiling timestamp are
    /// on its virtual device clock (`HSASIM_TIME=virtual`) rather than the host's. Outside
    /// every vendor range HSA defines; ROCr answers `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
    pub const HSASIM_VIRTUAL_TIME: u32 = 0x4853_0001;
    /// hsasim's own attribute ([`crate::hsasim_hqd_slots_t`], read and written): which queue
    /// held which hardware queue slot when, on the virtual time line
    /// (`HSASIM_TIME=virtual`). ROCr answers `HSA_STATUS_ERROR_INVALID_ARGUMENT` and leaves
    /// the value alone, so `count` stays 0.
    pub const HSASIM_HQD_SLOTS: u32 = 0x4853_0002;
    /// hsasim's own attribute ([`crate::hsasim_cu_use_t`], read and written): how many compute
    /// units had work over the virtual time line (`HSASIM_TIME=virtual`), for traces. ROCr
    /// answers `HSA_STATUS_ERROR_INVALID_ARGUMENT` and leaves the value alone.
    pub const HSASIM_CU_USE: u32 = 0x4853_0003;
}

/// One step of [`system_info::HSASIM_CU_USE`]: from `at_ns` (virtual ns on the HSA system
/// timestamp's clock) until the node's next step, `cus` compute units of GPU `node` have work.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsasim_cu_step_t {
    pub node: u32,
    pub cus: u32,
    pub at_ns: u64,
}

/// The value of [`system_info::HSASIM_CU_USE`]: the caller sets `steps` (room for `capacity`
/// entries, or null with 0); the runtime writes up to `capacity` of them, sets `count` to how
/// many there are and `truncated` to 1 if it stopped recording (a bound on its memory).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsasim_cu_use_t {
    pub capacity: u64,
    pub count: u64,
    pub truncated: u64,
    pub steps: *mut hsasim_cu_step_t,
}

/// One queue's time in a hardware queue slot ([`system_info::HSASIM_HQD_SLOTS`]): virtual ns
/// on the HSA system timestamp's clock, its mapping included.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsasim_hqd_slot_t {
    /// The process the queue belongs to (several share the slots under a device service).
    pub pid: u32,
    pub slot: u32,
    pub pipe: u32,
    pub reserved: u32,
    /// The queue's `hsa_queue_t::id`.
    pub queue_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// The value of [`system_info::HSASIM_HQD_SLOTS`]: the caller sets `slots` (room for
/// `capacity` entries, or null with 0) and the runtime writes up to `capacity` of them and
/// sets `count` to how many there are.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsasim_hqd_slots_t {
    pub capacity: u64,
    pub count: u64,
    pub slots: *mut hsasim_hqd_slot_t,
}

pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;
pub const HSA_DEVICE_TYPE_DSP: u32 = 2;

pub const HSA_AGENT_FEATURE_KERNEL_DISPATCH: u32 = 1;
pub const HSA_AGENT_FEATURE_AGENT_DISPATCH: u32 = 2;

pub mod agent_info {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const FEATURE: u32 = 2;
    pub const MACHINE_MODEL: u32 = 3;
    pub const PROFILE: u32 = 4;
    pub const DEFAULT_FLOAT_ROUNDING_MODE: u32 = 5;
    pub const WAVEFRONT_SIZE: u32 = 6;
    pub const WORKGROUP_MAX_DIM: u32 = 7;
    pub const WORKGROUP_MAX_SIZE: u32 = 8;
    pub const GRID_MAX_DIM: u32 = 9;
    pub const GRID_MAX_SIZE: u32 = 10;
    pub const FBARRIER_MAX_SIZE: u32 = 11;
    pub const QUEUES_MAX: u32 = 12;
    pub const QUEUE_MIN_SIZE: u32 = 13;
    pub const QUEUE_MAX_SIZE: u32 = 14;
    pub const QUEUE_TYPE: u32 = 15;
    pub const NODE: u32 = 16;
    pub const DEVICE: u32 = 17;
    pub const CACHE_SIZE: u32 = 18;
    pub const ISA: u32 = 19;
    pub const EXTENSIONS: u32 = 20;
    pub const VERSION_MAJOR: u32 = 21;
    pub const VERSION_MINOR: u32 = 22;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 23;
    pub const FAST_F16_OPERATION: u32 = 24;
    // hsa_amd_agent_info_t
    pub const AMD_CHIP_ID: u32 = 0xA000;
    pub const AMD_CACHELINE_SIZE: u32 = 0xA001;
    pub const AMD_COMPUTE_UNIT_COUNT: u32 = 0xA002;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
    pub const AMD_DRIVER_NODE_ID: u32 = 0xA004;
    pub const AMD_MAX_ADDRESS_WATCH_POINTS: u32 = 0xA005;
    pub const AMD_BDFID: u32 = 0xA006;
    pub const AMD_MEMORY_WIDTH: u32 = 0xA007;
    pub const AMD_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
    pub const AMD_PRODUCT_NAME: u32 = 0xA009;
    pub const AMD_MAX_WAVES_PER_CU: u32 = 0xA00A;
    pub const AMD_NUM_SIMDS_PER_CU: u32 = 0xA00B;
    pub const AMD_NUM_SHADER_ENGINES: u32 = 0xA00C;
    pub const AMD_NUM_SHADER_ARRAYS_PER_SE: u32 = 0xA00D;
    pub const AMD_HDP_FLUSH: u32 = 0xA00E;
    pub const AMD_DOMAIN: u32 = 0xA00F;
    pub const AMD_COOPERATIVE_QUEUES: u32 = 0xA010;
    pub const AMD_UUID: u32 = 0xA011;
    pub const AMD_ASIC_REVISION: u32 = 0xA012;
    pub const AMD_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
    pub const AMD_COOPERATIVE_COMPUTE_UNIT_COUNT: u32 = 0xA014;
    pub const AMD_MEMORY_AVAIL: u32 = 0xA015;
    pub const AMD_TIMESTAMP_FREQUENCY: u32 = 0xA016;
    pub const AMD_ASIC_FAMILY_ID: u32 = 0xA107;
    pub const AMD_UCODE_VERSION: u32 = 0xA108;
    pub const AMD_SDMA_UCODE_VERSION: u32 = 0xA109;
    pub const AMD_NUM_SDMA_ENG: u32 = 0xA10A;
    pub const AMD_NUM_SDMA_XGMI_ENG: u32 = 0xA10B;
    pub const AMD_IOMMU_SUPPORT: u32 = 0xA110;
    pub const AMD_NUM_XCC: u32 = 0xA111;
    pub const AMD_DRIVER_UID: u32 = 0xA112;
    pub const AMD_NEAREST_CPU: u32 = 0xA113;
}

pub mod isa_info {
    pub const NAME_LENGTH: u32 = 0;
    pub const NAME: u32 = 1;
    pub const CALL_CONVENTION_COUNT: u32 = 2;
    pub const CALL_CONVENTION_INFO_WAVEFRONT_SIZE: u32 = 3;
    pub const CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT: u32 = 4;
    pub const MACHINE_MODELS: u32 = 5;
    pub const PROFILES: u32 = 6;
    pub const DEFAULT_FLOAT_ROUNDING_MODES: u32 = 7;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 8;
    pub const FAST_F16_OPERATION: u32 = 9;
    pub const WORKGROUP_MAX_DIM: u32 = 12;
    pub const WORKGROUP_MAX_SIZE: u32 = 13;
    pub const GRID_MAX_DIM: u32 = 14;
    pub const GRID_MAX_SIZE: u32 = 16;
    pub const FBARRIER_MAX_SIZE: u32 = 17;
}

pub const HSA_SIGNAL_CONDITION_EQ: u32 = 0;
pub const HSA_SIGNAL_CONDITION_NE: u32 = 1;
pub const HSA_SIGNAL_CONDITION_LT: u32 = 2;
pub const HSA_SIGNAL_CONDITION_GTE: u32 = 3;
pub const HSA_WAIT_STATE_BLOCKED: u32 = 0;
pub const HSA_WAIT_STATE_ACTIVE: u32 = 1;

pub const HSA_QUEUE_TYPE_MULTI: u32 = 0;
pub const HSA_QUEUE_TYPE_SINGLE: u32 = 1;
pub const HSA_QUEUE_TYPE_COOPERATIVE: u32 = 2;
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
pub const HSA_QUEUE_FEATURE_AGENT_DISPATCH: u32 = 2;

pub const HSA_AMD_QUEUE_PRIORITY_LOW: u32 = 0;
pub const HSA_AMD_QUEUE_PRIORITY_NORMAL: u32 = 1;
pub const HSA_AMD_QUEUE_PRIORITY_HIGH: u32 = 2;

pub mod memory_pool_info {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
    pub const ACCESSIBLE_BY_ALL: u32 = 15;
    pub const ALLOC_MAX_SIZE: u32 = 16;
    pub const LOCATION: u32 = 17;
    pub const RUNTIME_ALLOC_REC_GRANULE: u32 = 18;
}
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;
pub const HSA_AMD_SEGMENT_READONLY: u32 = 1;
pub const HSA_AMD_SEGMENT_PRIVATE: u32 = 2;
pub const HSA_AMD_SEGMENT_GROUP: u32 = 3;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

/// `hsa_amd_agent_memory_pool_info_t`
pub const HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT: u32 = 2;
pub const HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS: u32 = 1;
/// An array of as many [`hsa_amd_memory_pool_link_info_t`] as there are link hops.
pub const HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO: u32 = 2;

/// `hsa_amd_link_info_type_t`
pub const HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT: u32 = 0;
pub const HSA_AMD_LINK_INFO_TYPE_QPI: u32 = 1;
pub const HSA_AMD_LINK_INFO_TYPE_PCIE: u32 = 2;
pub const HSA_AMD_LINK_INFO_TYPE_INFINBAND: u32 = 3;
pub const HSA_AMD_LINK_INFO_TYPE_XGMI: u32 = 4;

/// `hsa_amd_memory_pool_link_info_t`: one hop between an agent and a memory pool.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsa_amd_memory_pool_link_info_t {
    pub min_latency: u32,
    pub max_latency: u32,
    pub min_bandwidth: u32,
    pub max_bandwidth: u32,
    pub atomic_support_32bit: bool,
    pub atomic_support_64bit: bool,
    pub coherent_support: bool,
    pub link_type: u32,
    pub numa_distance: u32,
}

pub const HSA_EXT_POINTER_TYPE_UNKNOWN: u32 = 0;
pub const HSA_EXT_POINTER_TYPE_HSA: u32 = 1;
pub const HSA_EXT_POINTER_TYPE_LOCKED: u32 = 2;
pub const HSA_EXT_POINTER_TYPE_GRAPHICS: u32 = 3;
pub const HSA_EXT_POINTER_TYPE_IPC: u32 = 4;

/// `hsa_amd_pointer_info_t` (ROCm 5.2 layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_amd_pointer_info_t {
    pub size: u32,
    pub type_: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: hsa_agent_t,
    pub global_flags: u32,
}

pub mod symbol_info {
    pub const TYPE: u32 = 0;
    pub const NAME_LENGTH: u32 = 1;
    pub const NAME: u32 = 2;
    pub const MODULE_NAME_LENGTH: u32 = 3;
    pub const MODULE_NAME: u32 = 4;
    pub const LINKAGE: u32 = 5;
    pub const VARIABLE_ALLOCATION: u32 = 6;
    pub const VARIABLE_SEGMENT: u32 = 7;
    pub const VARIABLE_ALIGNMENT: u32 = 8;
    pub const VARIABLE_SIZE: u32 = 9;
    pub const VARIABLE_IS_CONST: u32 = 10;
    pub const KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
    pub const KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
    pub const KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
    pub const KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
    pub const KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
    pub const INDIRECT_FUNCTION_CALL_CONVENTION: u32 = 16;
    pub const IS_DEFINITION: u32 = 17;
    pub const KERNEL_CALL_CONVENTION: u32 = 18;
    pub const AGENT: u32 = 20;
    pub const VARIABLE_ADDRESS: u32 = 21;
    pub const KERNEL_OBJECT: u32 = 22;
    pub const INDIRECT_FUNCTION_OBJECT: u32 = 23;
}
pub const HSA_SYMBOL_KIND_VARIABLE: u32 = 0;
pub const HSA_SYMBOL_KIND_KERNEL: u32 = 1;
pub const HSA_SYMBOL_KIND_INDIRECT_FUNCTION: u32 = 2;
pub const HSA_PROFILE_BASE: u32 = 0;
pub const HSA_PROFILE_FULL: u32 = 1;
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT: u32 = 0;
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO: u32 = 1;
pub const HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR: u32 = 2;
pub const HSA_EXECUTABLE_STATE_UNFROZEN: u32 = 0;
pub const HSA_EXECUTABLE_STATE_FROZEN: u32 = 1;
pub const HSA_MACHINE_MODEL_SMALL: u32 = 0;
pub const HSA_MACHINE_MODEL_LARGE: u32 = 1;
pub const HSA_ENDIANNESS_LITTLE: u32 = 0;

// ---- AQL packets -------------------------------------------------------------------------

pub const HSA_PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
pub const HSA_PACKET_TYPE_INVALID: u16 = 1;
pub const HSA_PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const HSA_PACKET_TYPE_BARRIER_AND: u16 = 3;
pub const HSA_PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
pub const HSA_PACKET_TYPE_BARRIER_OR: u16 = 5;

pub const HSA_FENCE_SCOPE_NONE: u16 = 0;
pub const HSA_FENCE_SCOPE_AGENT: u16 = 1;
pub const HSA_FENCE_SCOPE_SYSTEM: u16 = 2;

/// Bit positions within the 16-bit packet header.
pub const HSA_PACKET_HEADER_TYPE: u16 = 0;
pub const HSA_PACKET_HEADER_BARRIER: u16 = 8;
pub const HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE: u16 = 9;
pub const HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE: u16 = 11;
pub const HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS: u16 = 0;

/// Builds a packet header word from its fields.
pub const fn packet_header(packet_type: u16, barrier: bool, acquire: u16, release: u16) -> u16 {
    (packet_type << HSA_PACKET_HEADER_TYPE)
        | ((barrier as u16) << HSA_PACKET_HEADER_BARRIER)
        | (acquire << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
        | (release << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE)
}

/// Decoded view of a packet header word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketHeader(pub u16);
impl PacketHeader {
    pub fn packet_type(self) -> u16 {
        self.0 & 0xff
    }
    pub fn barrier(self) -> bool {
        (self.0 >> HSA_PACKET_HEADER_BARRIER) & 1 != 0
    }
    pub fn acquire_scope(self) -> u16 {
        (self.0 >> HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) & 3
    }
    pub fn release_scope(self) -> u16 {
        (self.0 >> HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE) & 3
    }
}

#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_kernel_dispatch_packet_t {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_barrier_and_packet_t {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [hsa_signal_t; 5],
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}
/// Same layout as the AND packet; the packet type says which rule applies.
pub type hsa_barrier_or_packet_t = hsa_barrier_and_packet_t;

#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_agent_dispatch_packet_t {
    pub header: u16,
    pub type_: u16,
    pub reserved0: u32,
    pub return_address: u64,
    pub arg: [u64; 4],
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

/// `hsa_amd_packet_type_t`: the `amd_format` byte of an AMD vendor-specific packet.
pub const HSA_AMD_PACKET_TYPE_BARRIER_VALUE: u8 = 2;

/// AMD's vendor-specific barrier-value packet (`hsa_ext_amd.h`): holds its queue until
/// `(value of signal & mask) cond value` holds. `header`, `amd_format` and `reserved` are the
/// C struct's nested `hsa_amd_vendor_packet_header_t` (`header.header`, `header.AmdFormat`).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_amd_barrier_value_packet_t {
    pub header: u16,
    pub amd_format: u8,
    pub reserved: u8,
    pub reserved0: u32,
    pub signal: hsa_signal_t,
    pub value: i64,
    pub mask: i64,
    pub cond: u32,
    pub reserved1: u32,
    pub reserved2: u64,
    pub reserved3: u64,
    pub completion_signal: hsa_signal_t,
}

/// Any 64-byte AQL packet slot.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct AqlPacket {
    pub bytes: [u8; 64],
}

// ---- Queues and signals ------------------------------------------------------------------

#[repr(C)]
#[derive(Debug)]
pub struct hsa_queue_t {
    pub type_: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: hsa_signal_t,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// ROCr's `amd_queue_t`: the `hsa_queue_t` a client sees is its first member, and the
/// 64-bit read/write dispatch ids live at fixed offsets after it.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct amd_queue_t {
    pub hsa_queue: hsa_queue_t,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: hsa_signal_t,
    pub reserved4: [u32; 14],
}

pub const AMD_SIGNAL_KIND_INVALID: i64 = 0;
pub const AMD_SIGNAL_KIND_USER: i64 = 1;
pub const AMD_SIGNAL_KIND_DOORBELL: i64 = -1;
pub const AMD_SIGNAL_KIND_LEGACY_DOORBELL: i64 = -2;

/// ROCr's `amd_signal_t`. An `hsa_signal_t` handle is the address of one of these, which is
/// how clients (and AMD's own HIP runtime) read `value` and the profiling timestamps directly.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct amd_signal_t {
    pub kind: i64,
    pub value: i64,
    pub event_mailbox_ptr: u64,
    pub event_id: u32,
    pub reserved1: u32,
    pub start_ts: u64,
    pub end_ts: u64,
    pub queue_ptr: u64,
    pub reserved3: [u32; 2],
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsa_dim3_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_pitched_ptr_t`: one side of `hsa_amd_memory_async_copy_rect`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_pitched_ptr_t {
    pub base: *mut c_void,
    pub pitch: usize,
    pub slice: usize,
}

/// `hsa_amd_svm_attribute_pair_t`: one attribute of `hsa_amd_svm_attributes_set/get`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsa_amd_svm_attribute_pair_t {
    /// `hsa_amd_svm_attribute_t`.
    pub attribute: u64,
    pub value: u64,
}

/// `hsa_amd_profiling_dispatch_time_t` / `hsa_amd_profiling_async_copy_time_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_amd_profiling_time_t {
    pub start: u64,
    pub end: u64,
}

// ---- Callback and function-pointer types -------------------------------------------------

pub type AgentCallback = unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t;
pub type PoolCallback = unsafe extern "C" fn(hsa_amd_memory_pool_t, *mut c_void) -> hsa_status_t;
pub type QueueErrorCallback = unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void);
pub type SignalHandler = unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool;
pub type IsaCallback = unsafe extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t;
pub type SymbolCallback =
    unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t;
pub type RegionCallback = unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t;
pub type CacheCallback = unsafe extern "C" fn(hsa_cache_t, *mut c_void) -> hsa_status_t;
pub type WavefrontCallback = unsafe extern "C" fn(hsa_wavefront_t, *mut c_void) -> hsa_status_t;
/// What `hsa_amd_pointer_info` calls to allocate the accessible-agents array it returns.
pub type PointerInfoAlloc = unsafe extern "C" fn(usize) -> *mut c_void;
pub type AgentSymbolCallback = unsafe extern "C" fn(
    hsa_executable_t,
    hsa_agent_t,
    hsa_executable_symbol_t,
    *mut c_void,
) -> hsa_status_t;

// ---- Kernel descriptor (LLVM AMDGPUUsage, code object v3+) --------------------------------

/// The 64-byte kernel descriptor (`NAME.kd`) a dispatch packet's `kernel_object` points at.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub reserved0: [u8; 4],
    /// Byte offset from the descriptor's own address to the kernel's first instruction.
    pub kernel_code_entry_byte_offset: i64,
    pub reserved1: [u8; 20],
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
    pub reserved2: [u8; 4],
}

/// `kernel_code_properties` bits: which user SGPRs the hardware preloads, in this order.
pub mod kernel_code_properties {
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
    pub const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;
}

const _: () = {
    assert!(std::mem::size_of::<hsa_kernel_dispatch_packet_t>() == 64);
    assert!(std::mem::size_of::<hsa_barrier_and_packet_t>() == 64);
    assert!(std::mem::size_of::<hsa_agent_dispatch_packet_t>() == 64);
    assert!(std::mem::size_of::<hsa_amd_barrier_value_packet_t>() == 64);
    assert!(std::mem::size_of::<hsa_queue_t>() == 40);
    assert!(std::mem::size_of::<amd_queue_t>() == 256);
    assert!(std::mem::offset_of!(amd_queue_t, write_dispatch_id) == 56);
    assert!(std::mem::offset_of!(amd_queue_t, read_dispatch_id) == 128);
    assert!(std::mem::size_of::<amd_signal_t>() == 64);
    assert!(std::mem::offset_of!(amd_signal_t, value) == 8);
    assert!(std::mem::offset_of!(amd_signal_t, start_ts) == 32);
    assert!(std::mem::size_of::<KernelDescriptor>() == 64);
    assert!(std::mem::offset_of!(KernelDescriptor, kernel_code_entry_byte_offset) == 16);
    assert!(std::mem::offset_of!(KernelDescriptor, compute_pgm_rsrc3) == 44);
    assert!(std::mem::offset_of!(KernelDescriptor, compute_pgm_rsrc1) == 48);
    assert!(std::mem::offset_of!(KernelDescriptor, kernel_code_properties) == 56);
    assert!(std::mem::size_of::<hsa_amd_pointer_info_t>() == 56);
};

// ---------------------------------------------------------------------------------------
// Virtual memory (`hsa_ext_amd.h`, ROCm 6: `hsa_amd_vmem_*`)

/// `hsa_amd_vmem_alloc_handle_t`: a physical allocation made by `hsa_amd_vmem_handle_create`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_amd_vmem_alloc_handle_t {
    pub handle: u64,
}

/// `hsa_access_permission_t` (`hsa.h`).
pub mod access_permission {
    pub const NONE: u32 = 0;
    pub const RO: u32 = 1;
    pub const WO: u32 = 2;
    pub const RW: u32 = 3;
}

/// `hsa_amd_memory_type_t`.
pub const MEMORY_TYPE_NONE: u32 = 0;
pub const MEMORY_TYPE_PINNED: u32 = 1;

/// `hsa_amd_memory_access_desc_t`: one agent's permission for `hsa_amd_vmem_set_access`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hsa_amd_memory_access_desc_t {
    /// `hsa_access_permission_t`.
    pub permissions: u32,
    pub agent_handle: hsa_agent_t,
}

const _: () = {
    assert!(std::mem::size_of::<hsa_amd_memory_access_desc_t>() == 16);
    assert!(std::mem::offset_of!(hsa_amd_memory_access_desc_t, agent_handle) == 8);
};

/// `hsa_amd_ipc_memory_t` / `hsa_amd_ipc_signal_t`: 32 bytes the exporting runtime fills
/// with whatever another process needs to attach.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hsa_amd_ipc_memory_t {
    pub handle: [u32; 8],
}

/// `hsa_amd_ipc_signal_t`: the same 32 bytes (a typedef of `hsa_amd_ipc_memory_t` in ROCr).
pub type hsa_amd_ipc_signal_t = hsa_amd_ipc_memory_t;
