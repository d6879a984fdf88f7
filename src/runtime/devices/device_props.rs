//! What a device reports about itself: one [`DeviceInfo`] gathered from the HSA agent when
//! the device opens, and the three views of it the API hands out — `hipDeviceProp_t` in
//! AMD's R0000 layout (the unsuffixed `hipGetDeviceProperties`, ROCm 5) and R0600 layout
//! (`hipGetDevicePropertiesR0600`, what ROCm 6 headers call `hipDeviceProp_t`), and
//! `hipDeviceGetAttribute`. All three read the same struct, so they cannot disagree.
//!
//! Layouts: field offsets of AMD's `hipDeviceProp_tR0000`/`R0600` (x86-64) as listed in
//! the project's ABI notes (computed from ROCm/HIP's headers); checked at compile time below.
//! Attribute numbers: `hipDeviceAttribute_t` of ROCm 5.2 (Debian's /usr/include/hip) and
//! ROCm 6.x, which agree — ROCm 6 renamed retired entries `Unused1..5` but did not
//! renumber — plus the entries ROCm 6 appended (VirtualMemoryManagementSupported,
//! HostRegisterSupported, MemoryPoolSupportedHandleTypes, WallClockRate).

use std::ffi::c_char;
use std::mem::offset_of;

/// Everything the device reports, in plain Rust types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Product name (`hipDeviceProp_t::name`).
    pub name: String,
    /// `gfx942:sramecc+:xnack-`: the ISA name without the `amdgcn-amd-amdhsa--` prefix.
    pub gcn_arch_name: String,
    pub gcn_arch: i32,
    pub major: i32,
    pub minor: i32,
    pub total_global_mem: usize,
    pub lds_bytes: usize,
    pub regs_per_block: i32,
    pub regs_per_cu: i32,
    pub warp_size: i32,
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    /// kHz.
    pub clock_rate: i32,
    /// kHz.
    pub memory_clock_rate: i32,
    pub memory_bus_width: i32,
    pub l2_cache_size: i32,
    pub compute_units: i32,
    pub max_waves_per_cu: i32,
    pub max_threads_per_cu: i32,
    /// kHz of the counter `clock64()` reads (`s_memtime`).
    pub clock_instruction_rate: i32,
    /// kHz of the counter `wall_clock64()` reads (`s_memrealtime`).
    pub wall_clock_rate: i32,
    pub pci_domain: i32,
    pub pci_bus: i32,
    pub pci_device: i32,
    pub ecc_enabled: bool,
    pub async_engines: i32,
    pub cooperative_launch: bool,
    /// Multi-device cooperative launches can run (`multi_device::supported`: a
    /// property of the whole runtime, set once every device is open).
    pub cooperative_multi_device_launch: bool,
    pub asic_revision: i32,
    /// 16 bytes: the hex digits of the agent's `GPU-xxxxxxxxxxxxxxxx` UUID.
    pub uuid: [u8; 16],
    /// The HSA runtime has virtual memory management (`runtime/mem/vmm.rs`).
    pub virtual_memory_management: bool,
    /// The ISA has image instructions: textures and surfaces work (`runtime/image/texture.rs`).
    pub image_support: bool,
}

/// The largest arrays hipshim makes (`image/array.rs`): per dimension, and layers (AMD's figures
/// for gfx9 devices with image support).
pub const MAX_1D: usize = 16384;
pub const MAX_2D: usize = 16384;
pub const MAX_3D: usize = 16384;
pub const MAX_LAYERS: usize = 2048;
/// The most elements a linear texture may have (`maxTexture1DLinear` on devices with
/// images; `image/texture.rs`), AMD's figure.
pub const MAX_LINEAR_ELEMENTS: usize = 1 << 27;

/// The array limits as the texture limits report them (with or without image instructions:
/// arrays exist either way, and programs size them by these fields).
fn array_limits() -> (i32, [i32; 2], [i32; 3]) {
    let (d1, d2, d3) = (MAX_1D as i32, MAX_2D as i32, MAX_3D as i32);
    (d1, [d2, d2], [d3, d3, d3])
}

/// Bytes a row pitch, a texture and a surface must be aligned to: hipMallocPitch's row
/// pitches are multiples of it, so every row starts on a cache-line-friendly boundary.
pub const TEXTURE_ALIGNMENT: usize = 256;
/// CUDA's (and AMD's) `memPitch`: the largest pitch copies accept.
pub const MAX_PITCH: usize = i32::MAX as usize;

impl DeviceInfo {
    /// `hipDeviceArch_t` bits: every feature flag of a gfx9 GPU except those the device
    /// macros of AMD's headers say it lacks (funnel shift, bit 11, and the extended
    /// `__syncthreads` variants, bit 13: `__HIP_ARCH_HAS_FUNNEL_SHIFT__` and
    /// `__HIP_ARCH_HAS_SYNC_THREAD_EXT__` are 0 for AMD targets), surface functions (bit 14,
    /// on devices without image instructions) and dynamic parallelism (bit 16).
    pub fn arch_bits(&self) -> u32 {
        let surfaces = if self.image_support { 1 << 14 } else { 0 };
        (0x1_ffff & !(1 << 11) & !(1 << 13) & !(1 << 14) & !(1 << 16)) | surfaces
    }

    pub fn total_const_mem(&self) -> usize {
        self.total_global_mem.min(i32::MAX as usize)
    }
}

/// Whether processor `gfx...` has image instructions: every GCN/RDNA target but the gfx94x
/// and gfx95x accelerators (CDNA 3 dropped the texture units and MIMG encoding; gfx90a, CDNA
/// 2, has them).
pub fn has_images(processor: &str) -> bool {
    !matches!(gfx_version(processor), Some((9, 4 | 5, _)) | None)
}

/// `gfx942` -> (9, 4, gcnArch 942); `gfx90a` -> (9, 0, 910); `gfx1100` -> (11, 0, 1100).
/// The last character is the stepping (hex), the one before it the minor version.
pub fn gfx_version(processor: &str) -> Option<(i32, i32, i32)> {
    let digits = processor.strip_prefix("gfx")?;
    if digits.len() < 3 || !digits.is_ascii() {
        return None;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let major: i32 = major.parse().ok()?;
    let minor = i32::from_str_radix(&rest[..1], 16).ok()?;
    let stepping = i32::from_str_radix(&rest[1..], 16).ok()?;
    Some((major, minor, major * 100 + minor * 10 + stepping))
}

fn copy_str<const N: usize>(s: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(s.bytes().take(N - 1)) {
        *o = b as c_char;
    }
    out
}

/// AMD's `hipDeviceProp_tR0000` (ROCm 5.x `hipDeviceProp_t`), 792 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DevicePropR0000 {
    pub name: [c_char; 256],
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: i32,
    pub warp_size: i32,
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub clock_rate: i32,
    pub memory_clock_rate: i32,
    pub memory_bus_width: i32,
    pub total_const_mem: usize,
    pub major: i32,
    pub minor: i32,
    pub multi_processor_count: i32,
    pub l2_cache_size: i32,
    pub max_threads_per_multi_processor: i32,
    pub compute_mode: i32,
    pub clock_instruction_rate: i32,
    pub arch: u32,
    pub concurrent_kernels: i32,
    pub pci_domain_id: i32,
    pub pci_bus_id: i32,
    pub pci_device_id: i32,
    pub max_shared_memory_per_multi_processor: usize,
    pub is_multi_gpu_board: i32,
    pub can_map_host_memory: i32,
    pub gcn_arch: i32,
    pub gcn_arch_name: [c_char; 256],
    pub integrated: i32,
    pub cooperative_launch: i32,
    pub cooperative_multi_device_launch: i32,
    pub max_texture_1d_linear: i32,
    pub max_texture_1d: i32,
    pub max_texture_2d: [i32; 2],
    pub max_texture_3d: [i32; 3],
    pub hdp_mem_flush_cntl: *mut u32,
    pub hdp_reg_flush_cntl: *mut u32,
    pub mem_pitch: usize,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub kernel_exec_timeout_enabled: i32,
    pub ecc_enabled: i32,
    pub tcc_driver: i32,
    pub cooperative_multi_device_unmatched_func: i32,
    pub cooperative_multi_device_unmatched_grid_dim: i32,
    pub cooperative_multi_device_unmatched_block_dim: i32,
    pub cooperative_multi_device_unmatched_shared_mem: i32,
    pub is_large_bar: i32,
    pub asic_revision: i32,
    pub managed_memory: i32,
    pub direct_managed_mem_access_from_host: i32,
    pub concurrent_managed_access: i32,
    pub pageable_memory_access: i32,
    pub pageable_memory_access_uses_host_page_tables: i32,
}

/// AMD's `hipDeviceProp_tR0600` (ROCm 6.x/7.x `hipDeviceProp_t`), 1472 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DevicePropR0600 {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: u32,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: i32,
    pub warp_size: i32,
    pub mem_pitch: usize,
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub clock_rate: i32,
    pub total_const_mem: usize,
    pub major: i32,
    pub minor: i32,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub device_overlap: i32,
    pub multi_processor_count: i32,
    pub kernel_exec_timeout_enabled: i32,
    pub integrated: i32,
    pub can_map_host_memory: i32,
    pub compute_mode: i32,
    pub max_texture_1d: i32,
    pub max_texture_1d_mipmap: i32,
    pub max_texture_1d_linear: i32,
    pub max_texture_2d: [i32; 2],
    pub max_texture_2d_mipmap: [i32; 2],
    pub max_texture_2d_linear: [i32; 3],
    pub max_texture_2d_gather: [i32; 2],
    pub max_texture_3d: [i32; 3],
    pub max_texture_3d_alt: [i32; 3],
    pub max_texture_cubemap: i32,
    pub max_texture_1d_layered: [i32; 2],
    pub max_texture_2d_layered: [i32; 3],
    pub max_texture_cubemap_layered: [i32; 2],
    pub max_surface_1d: i32,
    pub max_surface_2d: [i32; 2],
    pub max_surface_3d: [i32; 3],
    pub max_surface_1d_layered: [i32; 2],
    pub max_surface_2d_layered: [i32; 3],
    pub max_surface_cubemap: i32,
    pub max_surface_cubemap_layered: [i32; 2],
    pub surface_alignment: usize,
    pub concurrent_kernels: i32,
    pub ecc_enabled: i32,
    pub pci_bus_id: i32,
    pub pci_device_id: i32,
    pub pci_domain_id: i32,
    pub tcc_driver: i32,
    pub async_engine_count: i32,
    pub unified_addressing: i32,
    pub memory_clock_rate: i32,
    pub memory_bus_width: i32,
    pub l2_cache_size: i32,
    pub persisting_l2_cache_max_size: i32,
    pub max_threads_per_multi_processor: i32,
    pub stream_priorities_supported: i32,
    pub global_l1_cache_supported: i32,
    pub local_l1_cache_supported: i32,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: i32,
    pub managed_memory: i32,
    pub is_multi_gpu_board: i32,
    pub multi_gpu_board_group_id: i32,
    pub host_native_atomic_supported: i32,
    pub single_to_double_precision_perf_ratio: i32,
    pub pageable_memory_access: i32,
    pub concurrent_managed_access: i32,
    pub compute_preemption_supported: i32,
    pub can_use_host_pointer_for_registered_mem: i32,
    pub cooperative_launch: i32,
    pub cooperative_multi_device_launch: i32,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: i32,
    pub direct_managed_mem_access_from_host: i32,
    pub max_blocks_per_multi_processor: i32,
    pub access_policy_max_window_size: i32,
    pub reserved_shared_mem_per_block: usize,
    pub host_register_supported: i32,
    pub sparse_hip_array_supported: i32,
    pub host_register_read_only_supported: i32,
    pub timeline_semaphore_interop_supported: i32,
    pub memory_pools_supported: i32,
    pub gpu_direct_rdma_supported: i32,
    pub gpu_direct_rdma_flush_writes_options: u32,
    pub gpu_direct_rdma_writes_ordering: i32,
    pub memory_pool_supported_handle_types: u32,
    pub deferred_mapping_hip_array_supported: i32,
    pub ipc_event_supported: i32,
    pub cluster_launch: i32,
    pub unified_function_pointers: i32,
    pub reserved: [i32; 63],
    pub hip_reserved: [i32; 32],
    pub gcn_arch_name: [c_char; 256],
    pub max_shared_memory_per_multi_processor: usize,
    pub clock_instruction_rate: i32,
    pub arch: u32,
    pub hdp_mem_flush_cntl: *mut u32,
    pub hdp_reg_flush_cntl: *mut u32,
    pub cooperative_multi_device_unmatched_func: i32,
    pub cooperative_multi_device_unmatched_grid_dim: i32,
    pub cooperative_multi_device_unmatched_block_dim: i32,
    pub cooperative_multi_device_unmatched_shared_mem: i32,
    pub is_large_bar: i32,
    pub asic_revision: i32,
}

/// Compile-time check of a struct's size and field offsets against AMD's numbers.
macro_rules! assert_layout {
    ($ty:ty, size $size:literal { $($field:ident @ $off:literal),* $(,)? }) => {
        const _: () = {
            assert!(std::mem::size_of::<$ty>() == $size);
            $( assert!(offset_of!($ty, $field) == $off); )*
        };
    };
}

// Offsets from AMD's hipDeviceProp_tR0000 (hipDeviceProp_layouts.txt).
assert_layout!(DevicePropR0000, size 792 {
    name @ 0, total_global_mem @ 256, shared_mem_per_block @ 264, regs_per_block @ 272,
    warp_size @ 276, max_threads_per_block @ 280, max_threads_dim @ 284, max_grid_size @ 296,
    clock_rate @ 308, memory_clock_rate @ 312, memory_bus_width @ 316, total_const_mem @ 320,
    major @ 328, minor @ 332, multi_processor_count @ 336, l2_cache_size @ 340,
    max_threads_per_multi_processor @ 344, compute_mode @ 348, clock_instruction_rate @ 352,
    arch @ 356, concurrent_kernels @ 360, pci_domain_id @ 364, pci_bus_id @ 368,
    pci_device_id @ 372, max_shared_memory_per_multi_processor @ 376, is_multi_gpu_board @ 384,
    can_map_host_memory @ 388, gcn_arch @ 392, gcn_arch_name @ 396, integrated @ 652,
    cooperative_launch @ 656, cooperative_multi_device_launch @ 660,
    max_texture_1d_linear @ 664, max_texture_1d @ 668, max_texture_2d @ 672,
    max_texture_3d @ 680, hdp_mem_flush_cntl @ 696, hdp_reg_flush_cntl @ 704, mem_pitch @ 712,
    texture_alignment @ 720, texture_pitch_alignment @ 728, kernel_exec_timeout_enabled @ 736,
    ecc_enabled @ 740, tcc_driver @ 744, cooperative_multi_device_unmatched_func @ 748,
    cooperative_multi_device_unmatched_grid_dim @ 752,
    cooperative_multi_device_unmatched_block_dim @ 756,
    cooperative_multi_device_unmatched_shared_mem @ 760, is_large_bar @ 764,
    asic_revision @ 768, managed_memory @ 772, direct_managed_mem_access_from_host @ 776,
    concurrent_managed_access @ 780, pageable_memory_access @ 784,
    pageable_memory_access_uses_host_page_tables @ 788,
});

// Offsets from AMD's hipDeviceProp_tR0600 (hipDeviceProp_layouts.txt).
assert_layout!(DevicePropR0600, size 1472 {
    name @ 0, uuid @ 256, luid @ 272, luid_device_node_mask @ 280, total_global_mem @ 288,
    shared_mem_per_block @ 296, regs_per_block @ 304, warp_size @ 308, mem_pitch @ 312,
    max_threads_per_block @ 320, max_threads_dim @ 324, max_grid_size @ 336, clock_rate @ 348,
    total_const_mem @ 352, major @ 360, minor @ 364, texture_alignment @ 368,
    texture_pitch_alignment @ 376, device_overlap @ 384, multi_processor_count @ 388,
    kernel_exec_timeout_enabled @ 392, integrated @ 396, can_map_host_memory @ 400,
    compute_mode @ 404, max_texture_1d @ 408, max_texture_1d_mipmap @ 412,
    max_texture_1d_linear @ 416, max_texture_2d @ 420, max_texture_2d_mipmap @ 428,
    max_texture_2d_linear @ 436, max_texture_2d_gather @ 448, max_texture_3d @ 456,
    max_texture_3d_alt @ 468, max_texture_cubemap @ 480, max_texture_1d_layered @ 484,
    max_texture_2d_layered @ 492, max_texture_cubemap_layered @ 504, max_surface_1d @ 512,
    max_surface_2d @ 516, max_surface_3d @ 524, max_surface_1d_layered @ 536,
    max_surface_2d_layered @ 544, max_surface_cubemap @ 556, max_surface_cubemap_layered @ 560,
    surface_alignment @ 568, concurrent_kernels @ 576, ecc_enabled @ 580, pci_bus_id @ 584,
    pci_device_id @ 588, pci_domain_id @ 592, tcc_driver @ 596, async_engine_count @ 600,
    unified_addressing @ 604, memory_clock_rate @ 608, memory_bus_width @ 612,
    l2_cache_size @ 616, persisting_l2_cache_max_size @ 620,
    max_threads_per_multi_processor @ 624, stream_priorities_supported @ 628,
    global_l1_cache_supported @ 632, local_l1_cache_supported @ 636,
    shared_mem_per_multiprocessor @ 640, regs_per_multiprocessor @ 648, managed_memory @ 652,
    is_multi_gpu_board @ 656, multi_gpu_board_group_id @ 660,
    host_native_atomic_supported @ 664, single_to_double_precision_perf_ratio @ 668,
    pageable_memory_access @ 672, concurrent_managed_access @ 676,
    compute_preemption_supported @ 680, can_use_host_pointer_for_registered_mem @ 684,
    cooperative_launch @ 688, cooperative_multi_device_launch @ 692,
    shared_mem_per_block_optin @ 696, pageable_memory_access_uses_host_page_tables @ 704,
    direct_managed_mem_access_from_host @ 708, max_blocks_per_multi_processor @ 712,
    access_policy_max_window_size @ 716, reserved_shared_mem_per_block @ 720,
    host_register_supported @ 728, sparse_hip_array_supported @ 732,
    host_register_read_only_supported @ 736, timeline_semaphore_interop_supported @ 740,
    memory_pools_supported @ 744, gpu_direct_rdma_supported @ 748,
    gpu_direct_rdma_flush_writes_options @ 752, gpu_direct_rdma_writes_ordering @ 756,
    memory_pool_supported_handle_types @ 760, deferred_mapping_hip_array_supported @ 764,
    ipc_event_supported @ 768, cluster_launch @ 772, unified_function_pointers @ 776,
    reserved @ 780, hip_reserved @ 1032, gcn_arch_name @ 1160,
    max_shared_memory_per_multi_processor @ 1416, clock_instruction_rate @ 1424, arch @ 1428,
    hdp_mem_flush_cntl @ 1432, hdp_reg_flush_cntl @ 1440,
    cooperative_multi_device_unmatched_func @ 1448,
    cooperative_multi_device_unmatched_grid_dim @ 1452,
    cooperative_multi_device_unmatched_block_dim @ 1456,
    cooperative_multi_device_unmatched_shared_mem @ 1460, is_large_bar @ 1464,
    asic_revision @ 1468,
});

impl DevicePropR0000 {
    pub fn from_info(d: &DeviceInfo) -> Self {
        // SAFETY: all-zero bytes are a valid value of this plain C struct (integers, arrays
        // and raw pointers); every field hipshim knows is then set below.
        let mut p: Self = unsafe { std::mem::zeroed() };
        p.name = copy_str(&d.name);
        p.total_global_mem = d.total_global_mem;
        p.shared_mem_per_block = d.lds_bytes;
        p.regs_per_block = d.regs_per_block;
        p.warp_size = d.warp_size;
        p.max_threads_per_block = d.max_threads_per_block;
        p.max_threads_dim = d.max_threads_dim;
        p.max_grid_size = d.max_grid_size;
        p.clock_rate = d.clock_rate;
        p.memory_clock_rate = d.memory_clock_rate;
        p.memory_bus_width = d.memory_bus_width;
        p.total_const_mem = d.total_const_mem();
        p.major = d.major;
        p.minor = d.minor;
        p.multi_processor_count = d.compute_units;
        p.l2_cache_size = d.l2_cache_size;
        p.max_threads_per_multi_processor = d.max_threads_per_cu;
        p.clock_instruction_rate = d.clock_instruction_rate;
        p.arch = d.arch_bits();
        p.concurrent_kernels = 1;
        p.pci_domain_id = d.pci_domain;
        p.pci_bus_id = d.pci_bus;
        p.pci_device_id = d.pci_device;
        p.max_shared_memory_per_multi_processor = d.lds_bytes;
        p.can_map_host_memory = 1;
        p.gcn_arch = d.gcn_arch;
        p.gcn_arch_name = copy_str(&d.gcn_arch_name);
        p.cooperative_launch = i32::from(d.cooperative_launch);
        p.cooperative_multi_device_launch = i32::from(d.cooperative_multi_device_launch);
        p.mem_pitch = MAX_PITCH;
        p.texture_alignment = TEXTURE_ALIGNMENT;
        p.texture_pitch_alignment = TEXTURE_ALIGNMENT;
        (p.max_texture_1d, p.max_texture_2d, p.max_texture_3d) = array_limits();
        if d.image_support {
            p.max_texture_1d_linear = MAX_LINEAR_ELEMENTS as i32;
        }
        p.ecc_enabled = i32::from(d.ecc_enabled);
        p.asic_revision = d.asic_revision;
        p.managed_memory = 1;
        p.direct_managed_mem_access_from_host = 1;
        p.concurrent_managed_access = 1;
        p
    }
}

impl DevicePropR0600 {
    pub fn from_info(d: &DeviceInfo) -> Self {
        // SAFETY: all-zero bytes are a valid value of this plain C struct (integers, arrays
        // and raw pointers); every field hipshim knows is then set below.
        let mut p: Self = unsafe { std::mem::zeroed() };
        p.name = copy_str(&d.name);
        p.uuid = d.uuid;
        p.total_global_mem = d.total_global_mem;
        p.shared_mem_per_block = d.lds_bytes;
        p.regs_per_block = d.regs_per_block;
        p.warp_size = d.warp_size;
        p.mem_pitch = MAX_PITCH;
        p.max_threads_per_block = d.max_threads_per_block;
        p.max_threads_dim = d.max_threads_dim;
        p.max_grid_size = d.max_grid_size;
        p.clock_rate = d.clock_rate;
        p.total_const_mem = d.total_const_mem();
        p.major = d.major;
        p.minor = d.minor;
        p.texture_alignment = TEXTURE_ALIGNMENT;
        p.texture_pitch_alignment = TEXTURE_ALIGNMENT;
        (p.max_texture_1d, p.max_texture_2d, p.max_texture_3d) = array_limits();
        p.max_texture_1d_mipmap = p.max_texture_1d;
        p.max_texture_2d_mipmap = p.max_texture_2d;
        p.max_texture_1d_layered = [p.max_texture_1d, MAX_LAYERS as i32];
        p.max_texture_2d_layered = [p.max_texture_2d[0], p.max_texture_2d[1], MAX_LAYERS as i32];
        p.device_overlap = i32::from(d.async_engines > 0);
        p.multi_processor_count = d.compute_units;
        p.can_map_host_memory = 1;
        p.surface_alignment = TEXTURE_ALIGNMENT;
        if d.image_support {
            p.max_texture_1d_linear = MAX_LINEAR_ELEMENTS as i32;
            p.max_surface_1d = p.max_texture_1d;
            p.max_surface_2d = p.max_texture_2d;
            p.max_surface_3d = p.max_texture_3d;
        }
        p.concurrent_kernels = 1;
        p.ecc_enabled = i32::from(d.ecc_enabled);
        p.pci_bus_id = d.pci_bus;
        p.pci_device_id = d.pci_device;
        p.pci_domain_id = d.pci_domain;
        p.async_engine_count = d.async_engines;
        p.unified_addressing = 1;
        p.memory_clock_rate = d.memory_clock_rate;
        p.memory_bus_width = d.memory_bus_width;
        p.l2_cache_size = d.l2_cache_size;
        p.max_threads_per_multi_processor = d.max_threads_per_cu;
        p.stream_priorities_supported = 1;
        p.global_l1_cache_supported = 1;
        p.local_l1_cache_supported = 1;
        p.shared_mem_per_multiprocessor = d.lds_bytes;
        p.regs_per_multiprocessor = d.regs_per_cu;
        p.managed_memory = 1;
        p.host_native_atomic_supported = 1;
        p.concurrent_managed_access = 1;
        p.can_use_host_pointer_for_registered_mem = 1;
        p.cooperative_launch = i32::from(d.cooperative_launch);
        p.cooperative_multi_device_launch = i32::from(d.cooperative_multi_device_launch);
        p.shared_mem_per_block_optin = d.lds_bytes;
        p.direct_managed_mem_access_from_host = 1;
        p.max_blocks_per_multi_processor = d.max_waves_per_cu;
        p.host_register_supported = 1;
        p.host_register_read_only_supported = 1;
        p.gcn_arch_name = copy_str(&d.gcn_arch_name);
        p.max_shared_memory_per_multi_processor = d.lds_bytes;
        p.clock_instruction_rate = d.clock_instruction_rate;
        p.arch = d.arch_bits();
        p.asic_revision = d.asic_revision;
        p
    }
}

/// `hipDeviceAttribute_t` values (AMD's numbering, identical in ROCm 5.2 and 6.x).
pub mod attr {
    pub const ECC_ENABLED: u32 = 0;
    pub const ACCESS_POLICY_MAX_WINDOW_SIZE: u32 = 1;
    pub const ASYNC_ENGINE_COUNT: u32 = 2;
    pub const CAN_MAP_HOST_MEMORY: u32 = 3;
    pub const CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: u32 = 4;
    pub const CLOCK_RATE: u32 = 5;
    pub const COMPUTE_MODE: u32 = 6;
    pub const COMPUTE_PREEMPTION_SUPPORTED: u32 = 7;
    pub const CONCURRENT_KERNELS: u32 = 8;
    pub const CONCURRENT_MANAGED_ACCESS: u32 = 9;
    pub const COOPERATIVE_LAUNCH: u32 = 10;
    pub const COOPERATIVE_MULTI_DEVICE_LAUNCH: u32 = 11;
    pub const DEVICE_OVERLAP: u32 = 12;
    pub const DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: u32 = 13;
    pub const GLOBAL_L1_CACHE_SUPPORTED: u32 = 14;
    pub const HOST_NATIVE_ATOMIC_SUPPORTED: u32 = 15;
    pub const INTEGRATED: u32 = 16;
    pub const IS_MULTI_GPU_BOARD: u32 = 17;
    pub const KERNEL_EXEC_TIMEOUT: u32 = 18;
    pub const L2_CACHE_SIZE: u32 = 19;
    pub const LOCAL_L1_CACHE_SUPPORTED: u32 = 20;
    // 21 Luid, 22 LuidDeviceNodeMask: not integers.
    pub const COMPUTE_CAPABILITY_MAJOR: u32 = 23;
    pub const MANAGED_MEMORY: u32 = 24;
    pub const MAX_BLOCKS_PER_MULTI_PROCESSOR: u32 = 25;
    pub const MAX_BLOCK_DIM_X: u32 = 26;
    pub const MAX_BLOCK_DIM_Y: u32 = 27;
    pub const MAX_BLOCK_DIM_Z: u32 = 28;
    pub const MAX_GRID_DIM_X: u32 = 29;
    pub const MAX_GRID_DIM_Y: u32 = 30;
    pub const MAX_GRID_DIM_Z: u32 = 31;
    /// 32..=54: surface and texture limits: those below, and 0 for the CUDA-only rest.
    pub const FIRST_TEXTURE: u32 = 32;
    pub const MAX_SURFACE_1D: u32 = 32;
    pub const MAX_SURFACE_2D: u32 = 34;
    pub const MAX_SURFACE_3D: u32 = 36;
    pub const MAX_TEXTURE_1D_WIDTH: u32 = 39;
    pub const MAX_TEXTURE_1D_LINEAR: u32 = 41;
    pub const MAX_TEXTURE_2D_WIDTH: u32 = 43;
    pub const MAX_TEXTURE_2D_HEIGHT: u32 = 44;
    pub const MAX_TEXTURE_3D_WIDTH: u32 = 49;
    pub const MAX_TEXTURE_3D_HEIGHT: u32 = 50;
    pub const MAX_TEXTURE_3D_DEPTH: u32 = 51;
    pub const LAST_TEXTURE: u32 = 54;
    // 55 MaxThreadsDim: an array, not an integer.
    pub const MAX_THREADS_PER_BLOCK: u32 = 56;
    pub const MAX_THREADS_PER_MULTI_PROCESSOR: u32 = 57;
    pub const MAX_PITCH: u32 = 58;
    pub const MEMORY_BUS_WIDTH: u32 = 59;
    pub const MEMORY_CLOCK_RATE: u32 = 60;
    pub const COMPUTE_CAPABILITY_MINOR: u32 = 61;
    pub const MULTI_GPU_BOARD_GROUP_ID: u32 = 62;
    pub const MULTIPROCESSOR_COUNT: u32 = 63;
    // 64 Unused1 (was Name).
    pub const PAGEABLE_MEMORY_ACCESS: u32 = 65;
    pub const PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: u32 = 66;
    pub const PCI_BUS_ID: u32 = 67;
    pub const PCI_DEVICE_ID: u32 = 68;
    pub const PCI_DOMAIN_ID: u32 = 69;
    pub const PERSISTING_L2_CACHE_MAX_SIZE: u32 = 70;
    pub const MAX_REGISTERS_PER_BLOCK: u32 = 71;
    pub const MAX_REGISTERS_PER_MULTIPROCESSOR: u32 = 72;
    pub const RESERVED_SHARED_MEM_PER_BLOCK: u32 = 73;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: u32 = 74;
    pub const SHARED_MEM_PER_BLOCK_OPTIN: u32 = 75;
    pub const SHARED_MEM_PER_MULTIPROCESSOR: u32 = 76;
    pub const SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: u32 = 77;
    pub const STREAM_PRIORITIES_SUPPORTED: u32 = 78;
    pub const SURFACE_ALIGNMENT: u32 = 79;
    pub const TCC_DRIVER: u32 = 80;
    pub const TEXTURE_ALIGNMENT: u32 = 81;
    pub const TEXTURE_PITCH_ALIGNMENT: u32 = 82;
    pub const TOTAL_CONSTANT_MEMORY: u32 = 83;
    pub const TOTAL_GLOBAL_MEM: u32 = 84;
    pub const UNIFIED_ADDRESSING: u32 = 85;
    // 86 Unused2 (was Uuid).
    pub const WARP_SIZE: u32 = 87;
    pub const MEMORY_POOLS_SUPPORTED: u32 = 88;
    pub const VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: u32 = 89;
    pub const HOST_REGISTER_SUPPORTED: u32 = 90;
    pub const MEMORY_POOL_SUPPORTED_HANDLE_TYPES: u32 = 91;
    pub const CLOCK_INSTRUCTION_RATE: u32 = 10000;
    // 10001 Unused3 (was Arch).
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: u32 = 10002;
    /// Was `hipDeviceAttributeGcnArch` (ROCm 5); ROCm 6 calls it Unused4. Still answered.
    pub const GCN_ARCH: u32 = 10003;
    // 10004 Unused5 (was GcnArchName), 10005/10006 HDP registers: not integers.
    pub const COOPERATIVE_MULTI_DEVICE_UNMATCHED_FUNC: u32 = 10007;
    pub const COOPERATIVE_MULTI_DEVICE_UNMATCHED_GRID_DIM: u32 = 10008;
    pub const COOPERATIVE_MULTI_DEVICE_UNMATCHED_BLOCK_DIM: u32 = 10009;
    pub const COOPERATIVE_MULTI_DEVICE_UNMATCHED_SHARED_MEM: u32 = 10010;
    pub const IS_LARGE_BAR: u32 = 10011;
    pub const ASIC_REVISION: u32 = 10012;
    pub const CAN_USE_STREAM_WAIT_VALUE: u32 = 10013;
    pub const IMAGE_SUPPORT: u32 = 10014;
    pub const PHYSICAL_MULTI_PROCESSOR_COUNT: u32 = 10015;
    pub const FINE_GRAIN_SUPPORT: u32 = 10016;
    pub const WALL_CLOCK_RATE: u32 = 10017;
}

/// `hipDeviceGetAttribute`: the value, or `None` for an attribute that is unknown or not
/// an integer (`hipErrorInvalidValue`). Read from the R0600 properties, so the two agree.
pub fn attribute(d: &DeviceInfo, attribute: u32) -> Option<i32> {
    use attr::*;
    let p = DevicePropR0600::from_info(d);
    let clamp = |v: usize| v.min(i32::MAX as usize) as i32;
    Some(match attribute {
        ECC_ENABLED => p.ecc_enabled,
        ACCESS_POLICY_MAX_WINDOW_SIZE => p.access_policy_max_window_size,
        ASYNC_ENGINE_COUNT => p.async_engine_count,
        CAN_MAP_HOST_MEMORY => p.can_map_host_memory,
        CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM => p.can_use_host_pointer_for_registered_mem,
        CLOCK_RATE => p.clock_rate,
        COMPUTE_MODE => p.compute_mode,
        COMPUTE_PREEMPTION_SUPPORTED => p.compute_preemption_supported,
        CONCURRENT_KERNELS => p.concurrent_kernels,
        CONCURRENT_MANAGED_ACCESS => p.concurrent_managed_access,
        COOPERATIVE_LAUNCH => p.cooperative_launch,
        COOPERATIVE_MULTI_DEVICE_LAUNCH => p.cooperative_multi_device_launch,
        DEVICE_OVERLAP => p.device_overlap,
        DIRECT_MANAGED_MEM_ACCESS_FROM_HOST => p.direct_managed_mem_access_from_host,
        GLOBAL_L1_CACHE_SUPPORTED => p.global_l1_cache_supported,
        HOST_NATIVE_ATOMIC_SUPPORTED => p.host_native_atomic_supported,
        INTEGRATED => p.integrated,
        IS_MULTI_GPU_BOARD => p.is_multi_gpu_board,
        KERNEL_EXEC_TIMEOUT => p.kernel_exec_timeout_enabled,
        L2_CACHE_SIZE => p.l2_cache_size,
        LOCAL_L1_CACHE_SUPPORTED => p.local_l1_cache_supported,
        COMPUTE_CAPABILITY_MAJOR => p.major,
        MANAGED_MEMORY => p.managed_memory,
        MAX_BLOCKS_PER_MULTI_PROCESSOR => p.max_blocks_per_multi_processor,
        MAX_BLOCK_DIM_X => p.max_threads_dim[0],
        MAX_BLOCK_DIM_Y => p.max_threads_dim[1],
        MAX_BLOCK_DIM_Z => p.max_threads_dim[2],
        MAX_GRID_DIM_X => p.max_grid_size[0],
        MAX_GRID_DIM_Y => p.max_grid_size[1],
        MAX_GRID_DIM_Z => p.max_grid_size[2],
        MAX_TEXTURE_1D_WIDTH => p.max_texture_1d,
        MAX_TEXTURE_1D_LINEAR => p.max_texture_1d_linear,
        MAX_TEXTURE_2D_WIDTH => p.max_texture_2d[0],
        MAX_TEXTURE_2D_HEIGHT => p.max_texture_2d[1],
        MAX_TEXTURE_3D_WIDTH => p.max_texture_3d[0],
        MAX_TEXTURE_3D_HEIGHT => p.max_texture_3d[1],
        MAX_TEXTURE_3D_DEPTH => p.max_texture_3d[2],
        MAX_SURFACE_1D => p.max_surface_1d,
        MAX_SURFACE_2D => p.max_surface_2d[0],
        MAX_SURFACE_3D => p.max_surface_3d[0],
        _ if (FIRST_TEXTURE..=LAST_TEXTURE).contains(&attribute) => 0,
        MAX_THREADS_PER_BLOCK => p.max_threads_per_block,
        MAX_THREADS_PER_MULTI_PROCESSOR => p.max_threads_per_multi_processor,
        MAX_PITCH => clamp(p.mem_pitch),
        MEMORY_BUS_WIDTH => p.memory_bus_width,
        MEMORY_CLOCK_RATE => p.memory_clock_rate,
        COMPUTE_CAPABILITY_MINOR => p.minor,
        MULTI_GPU_BOARD_GROUP_ID => p.multi_gpu_board_group_id,
        MULTIPROCESSOR_COUNT => p.multi_processor_count,
        PAGEABLE_MEMORY_ACCESS => p.pageable_memory_access,
        PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES => {
            p.pageable_memory_access_uses_host_page_tables
        }
        PCI_BUS_ID => p.pci_bus_id,
        PCI_DEVICE_ID => p.pci_device_id,
        PCI_DOMAIN_ID => p.pci_domain_id,
        PERSISTING_L2_CACHE_MAX_SIZE => p.persisting_l2_cache_max_size,
        MAX_REGISTERS_PER_BLOCK => p.regs_per_block,
        MAX_REGISTERS_PER_MULTIPROCESSOR => p.regs_per_multiprocessor,
        RESERVED_SHARED_MEM_PER_BLOCK => clamp(p.reserved_shared_mem_per_block),
        MAX_SHARED_MEMORY_PER_BLOCK => clamp(p.shared_mem_per_block),
        SHARED_MEM_PER_BLOCK_OPTIN => clamp(p.shared_mem_per_block_optin),
        SHARED_MEM_PER_MULTIPROCESSOR => clamp(p.shared_mem_per_multiprocessor),
        SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO => p.single_to_double_precision_perf_ratio,
        STREAM_PRIORITIES_SUPPORTED => p.stream_priorities_supported,
        SURFACE_ALIGNMENT => clamp(p.surface_alignment),
        TCC_DRIVER => p.tcc_driver,
        TEXTURE_ALIGNMENT => clamp(p.texture_alignment),
        TEXTURE_PITCH_ALIGNMENT => clamp(p.texture_pitch_alignment),
        TOTAL_CONSTANT_MEMORY => clamp(p.total_const_mem),
        // An int cannot hold a large device's size: clamped (use hipDeviceTotalMem).
        TOTAL_GLOBAL_MEM => clamp(p.total_global_mem),
        UNIFIED_ADDRESSING => p.unified_addressing,
        WARP_SIZE => p.warp_size,
        MEMORY_POOLS_SUPPORTED => p.memory_pools_supported,
        VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED => i32::from(d.virtual_memory_management),
        HOST_REGISTER_SUPPORTED => p.host_register_supported,
        MEMORY_POOL_SUPPORTED_HANDLE_TYPES => p.memory_pool_supported_handle_types as i32,
        CLOCK_INSTRUCTION_RATE => p.clock_instruction_rate,
        MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => clamp(p.max_shared_memory_per_multi_processor),
        GCN_ARCH => d.gcn_arch,
        COOPERATIVE_MULTI_DEVICE_UNMATCHED_FUNC => p.cooperative_multi_device_unmatched_func,
        COOPERATIVE_MULTI_DEVICE_UNMATCHED_GRID_DIM => {
            p.cooperative_multi_device_unmatched_grid_dim
        }
        COOPERATIVE_MULTI_DEVICE_UNMATCHED_BLOCK_DIM => {
            p.cooperative_multi_device_unmatched_block_dim
        }
        COOPERATIVE_MULTI_DEVICE_UNMATCHED_SHARED_MEM => {
            p.cooperative_multi_device_unmatched_shared_mem
        }
        IS_LARGE_BAR => p.is_large_bar,
        ASIC_REVISION => p.asic_revision,
        // `runtime/stream/value.rs`: a barrier-value packet, which the GPUs hipshim targets run.
        CAN_USE_STREAM_WAIT_VALUE => 1,
        IMAGE_SUPPORT => i32::from(d.image_support),
        PHYSICAL_MULTI_PROCESSOR_COUNT => p.multi_processor_count,
        FINE_GRAIN_SUPPORT => 1,
        WALL_CLOCK_RATE => d.wall_clock_rate,
        _ => return None,
    })
}

/// How well `device` matches the fields `wanted` sets (non-zero), CUDA-style: more matching
/// requests win; the device with the most compute units breaks ties.
pub fn match_score(info: &DeviceInfo, wanted: &DevicePropR0600) -> (usize, i32) {
    let have = DevicePropR0600::from_info(info);
    let mut score = 0;
    let mut check = |want: i64, got: i64| {
        if want != 0 && got >= want {
            score += 1;
        }
    };
    check(wanted.major as i64, have.major as i64);
    check(wanted.minor as i64, have.minor as i64);
    check(wanted.total_global_mem as i64, have.total_global_mem as i64);
    check(
        wanted.shared_mem_per_block as i64,
        have.shared_mem_per_block as i64,
    );
    check(
        wanted.max_threads_per_block as i64,
        have.max_threads_per_block as i64,
    );
    check(
        wanted.multi_processor_count as i64,
        have.multi_processor_count as i64,
    );
    check(wanted.clock_rate as i64, have.clock_rate as i64);
    check(wanted.warp_size as i64, have.warp_size as i64);
    check(wanted.managed_memory as i64, have.managed_memory as i64);
    (score, have.multi_processor_count)
}

/// Widens an R0000 request into the R0600 fields `Runtime::choose_device` compares.
pub fn widen(p: &DevicePropR0000) -> DevicePropR0600 {
    // SAFETY: all-zero bytes are a valid DevicePropR0600 (plain integers and pointers).
    let mut w: DevicePropR0600 = unsafe { std::mem::zeroed() };
    w.major = p.major;
    w.minor = p.minor;
    w.total_global_mem = p.total_global_mem;
    w.shared_mem_per_block = p.shared_mem_per_block;
    w.max_threads_per_block = p.max_threads_per_block;
    w.multi_processor_count = p.multi_processor_count;
    w.clock_rate = p.clock_rate;
    w.warp_size = p.warp_size;
    w.managed_memory = p.managed_memory;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> DeviceInfo {
        DeviceInfo {
            name: "test gpu".into(),
            gcn_arch_name: "gfx942:sramecc+:xnack-".into(),
            gcn_arch: 942,
            major: 9,
            minor: 4,
            total_global_mem: 16 << 30,
            lds_bytes: 64 << 10,
            warp_size: 64,
            max_threads_per_block: 1024,
            max_threads_dim: [1024; 3],
            max_grid_size: [i32::MAX; 3],
            compute_units: 80,
            ..Default::default()
        }
    }

    #[test]
    fn gfx_names_give_versions_and_gcn_arch() {
        assert_eq!(gfx_version("gfx942"), Some((9, 4, 942)));
        assert_eq!(gfx_version("gfx90a"), Some((9, 0, 910)));
        assert_eq!(gfx_version("gfx1100"), Some((11, 0, 1100)));
        assert_eq!(gfx_version("sm_80"), None);
    }

    #[test]
    fn both_layouts_and_attributes_agree() {
        let d = sample();
        let old = DevicePropR0000::from_info(&d);
        let new = DevicePropR0600::from_info(&d);
        assert_eq!(old.multi_processor_count, 80);
        assert_eq!(new.multi_processor_count, 80);
        assert_eq!(old.total_global_mem, new.total_global_mem);
        assert_eq!(old.gcn_arch_name, new.gcn_arch_name);
        assert_eq!(attribute(&d, attr::MULTIPROCESSOR_COUNT), Some(80));
        assert_eq!(attribute(&d, attr::WARP_SIZE), Some(64));
        assert_eq!(attribute(&d, attr::COMPUTE_CAPABILITY_MAJOR), Some(9));
        assert_eq!(attribute(&d, attr::TOTAL_GLOBAL_MEM), Some(i32::MAX));
        assert_eq!(attribute(&d, 21), None, "Luid is not an integer");
        assert_eq!(attribute(&d, 9999), None);
        assert_eq!(attribute(&d, u32::MAX), None);
    }

    #[test]
    fn names_are_truncated_and_terminated() {
        let s: [c_char; 4] = copy_str("abcdef");
        assert_eq!(s, [b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]);
    }
}
