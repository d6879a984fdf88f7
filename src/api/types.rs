//! The vocabulary of ABI types declarations are written in: C's names for HIP's types, each
//! defined here once as the Rust type with the same C representation. Besides these, a
//! declaration uses only Rust's primitive C-compatible types (`i32`, `u32`, `u64`, `usize`,
//! `u8`, `u16`, `f32`, `c_void`, `c_char`) and raw pointers to them or to these.
#![allow(non_camel_case_types)]

use std::ffi::c_void;

pub use crate::error::hipError_t;
pub use crate::runtime::devices::device_props::{DevicePropR0000, DevicePropR0600};
pub use crate::runtime::graph::generic::{GraphNodeParams, InstantiateParams, KernelAttrValue};
pub use crate::runtime::graph::memory::MemAllocNodeParams;
pub use crate::runtime::graph::{DrvMemsetParams, HostNodeParams, KernelNodeParams, MemsetParams};
pub use crate::runtime::image::array::{
    Array3DDescriptor, ArrayDescriptor, ChannelFormatDesc, Extent, HipArray, HipMipmappedArray,
    PitchedPtr,
};
pub use crate::runtime::image::copy3d::{
    DrvMemcpy3D, Memcpy2DParams, Memcpy3DBatchOp, Memcpy3DParms, Memcpy3DPeerParms,
};
pub use crate::runtime::mem::ipc::IpcHandle;
/// `hipMemPoolPtrExportData`: 64 bytes, the same as an IPC memory handle's
/// (`runtime/mem/mempool.rs`).
pub type PoolPtrExportData = IpcHandle;
pub use crate::runtime::copy::MemcpyAttributes;
pub use crate::runtime::image::texture::{
    DrvResourceDesc, DrvResourceViewDesc, DrvTextureDesc, ResourceDesc, ResourceViewDesc,
    TextureDesc,
};
pub use crate::runtime::kernel::module::FuncAttributes;
pub use crate::runtime::launch::{Dim3, DrvLaunchConfig, LaunchConfig};
pub use crate::runtime::mem::memory::PointerAttributes;
pub use crate::runtime::mem::mempool::{MemAccessDesc, MemLocation, MemPoolProps};
pub use crate::runtime::mem::vmm::MemAllocationProp;
pub use crate::runtime::ops::texref::TextureReference;
pub use crate::runtime::stream::value::BatchMemOpParams;

/// Handles: values hipshim issues (`runtime/base/handles.rs`), never dereferenced by anyone.
pub type hipStream_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
/// A library's kernel is one of its module's functions (`runtime/kernel/library.rs`).
pub type hipKernel_t = *mut c_void;
pub type hipLibrary_t = *mut c_void;
pub type hipMemPool_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipGraphExec_t = *mut c_void;
pub type hipUserObject_t = *mut c_void;
pub type hipMemGenericAllocationHandle_t = *mut c_void;
pub type hiprtcProgram = *mut c_void;
pub type hiprtcLinkState = *mut c_void;
/// The module API's linker (`runtime/rtc/link.rs`), apart from hiprtc's.
pub type hipLinkState_t = *mut c_void;

/// hiprtc's status codes (`runtime::rtc::RtcError`), apart from HIP's.
pub type hiprtcResult = u32;

/// `hipUUID`: 16 bytes.
pub type hipUUID = [u8; 16];

/// `hipStreamCallback_t`.
pub type StreamCallback = unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void);
/// `hipHostFn_t`.
pub type HostFn = unsafe extern "C" fn(*mut c_void);

/// Every type string a declaration may use, as `stringify!` writes it (what
/// `api::ABI_SIGNATURES` holds); a test keeps the declarations inside it.
pub const VOCABULARY: &[&str] = &[
    "()",
    "bool",
    "u8",
    "u16",
    "u32",
    "u64",
    "i32",
    "usize",
    "Dim3",
    "hipError_t",
    "hipStream_t",
    "hipEvent_t",
    "hipModule_t",
    "hipFunction_t",
    "hipKernel_t",
    "hipLibrary_t",
    "hipMemPool_t",
    "hipGraph_t",
    "hipGraphNode_t",
    "hipGraphExec_t",
    "hipUserObject_t",
    "hiprtcResult",
    "hiprtcProgram",
    "hiprtcLinkState",
    "hipLinkState_t",
    "Option<HostFn>",
    "Option<StreamCallback>",
    "*const c_char",
    "*const *const c_char",
    "*const c_void",
    "*const u32",
    "*mut BatchMemOpParams",
    "*mut MemcpyAttributes",
    "*mut Memcpy3DBatchOp",
    "*const DevicePropR0000",
    "*const DevicePropR0600",
    "*const LaunchConfig",
    "*const DrvLaunchConfig",
    "*const MemPoolProps",
    "*const MemAccessDesc",
    "*const hipGraphNode_t",
    "*const KernelNodeParams",
    "*const MemsetParams",
    "*const HostNodeParams",
    "*mut c_char",
    "*mut *const c_char",
    "*mut c_void",
    "*mut *mut c_void",
    "*mut f32",
    "*mut i32",
    "*mut u32",
    "*mut usize",
    "*mut u64",
    "*mut hipUUID",
    "*mut Dim3",
    "*mut hipStream_t",
    "*mut hipEvent_t",
    "*mut hipModule_t",
    "*mut hipFunction_t",
    "*mut hipKernel_t",
    "*mut hipLibrary_t",
    "*mut hipMemPool_t",
    "*mut hipGraph_t",
    "*mut hipGraphNode_t",
    "*mut hipGraphExec_t",
    "*mut hipUserObject_t",
    "*mut *const hipGraphNode_t",
    "*mut u64",
    "*mut MemAllocNodeParams",
    "*mut GraphNodeParams",
    "*mut InstantiateParams",
    "*mut KernelAttrValue",
    "*const KernelAttrValue",
    "*const DrvMemsetParams",
    "*mut KernelNodeParams",
    "*mut MemsetParams",
    "*mut HostNodeParams",
    "*mut MemLocation",
    "MemLocation",
    "*mut hiprtcProgram",
    "*mut hiprtcLinkState",
    "*mut hipLinkState_t",
    "*mut DevicePropR0000",
    "*mut DevicePropR0600",
    "*mut FuncAttributes",
    "*mut PointerAttributes",
    // Arrays and 3D copies (`runtime/image/array.rs`, `runtime/image/copy3d.rs`).
    "Extent",
    "PitchedPtr",
    "ChannelFormatDesc",
    "*mut HipArray",
    "*const HipArray",
    "*mut *mut HipArray",
    "*mut HipMipmappedArray",
    "*const HipMipmappedArray",
    "*mut *mut HipMipmappedArray",
    "*const ChannelFormatDesc",
    "*mut ChannelFormatDesc",
    "*mut Extent",
    "*mut PitchedPtr",
    "*const ArrayDescriptor",
    "*mut ArrayDescriptor",
    "*const Array3DDescriptor",
    "*mut Array3DDescriptor",
    "*const Memcpy3DParms",
    "*mut Memcpy3DParms",
    "*mut DrvMemcpy3D",
    "*mut Memcpy3DPeerParms",
    "*const DrvMemcpy3D",
    "*const Memcpy2DParams",
    // Texture and surface objects (`runtime/image/texture.rs`).
    "*const ResourceDesc",
    "*mut ResourceDesc",
    "*const TextureDesc",
    "*mut TextureDesc",
    "*const ResourceViewDesc",
    "*mut ResourceViewDesc",
    "*const DrvResourceDesc",
    "*mut DrvResourceDesc",
    "*const DrvTextureDesc",
    "*mut DrvTextureDesc",
    "*const DrvResourceViewDesc",
    "*mut DrvResourceViewDesc",
    // Texture references (`runtime/ops/texref.rs`).
    "*const TextureReference",
    "*mut TextureReference",
    "*mut *mut TextureReference",
    "*mut *const TextureReference",
    "f32",
    // Virtual memory management (`runtime/mem/vmm.rs`).
    "hipMemGenericAllocationHandle_t",
    "*mut hipMemGenericAllocationHandle_t",
    "*const MemAllocationProp",
    "*mut MemAllocationProp",
    "*const MemLocation",
    // Inter-process memory (`runtime/mem/ipc.rs`).
    "IpcHandle",
    "*mut IpcHandle",
    "*mut PoolPtrExportData",
];
