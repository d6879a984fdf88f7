//! The structures of the later graph calls (ROCm 5.5 to 6.2): the generic node parameters of
//! `hipGraphAddNode` / `hipGraph[Exec]NodeSetParams`, the driver-style memset parameters,
//! `hipGraphInstantiateWithParams`'s parameters and a kernel node attribute's value.

use super::memory::{self, MemAllocNodeParams};
use super::{
    bad, graph, host, memset, node_type, AccessPolicyWindow, EventRef, HostNodeParams,
    KernelNodeParams, MemsetParams, NodeParams,
};
use crate::error::{HipError, HipResult};
use crate::runtime::devices::current;
use crate::runtime::devices::device::Device;
use std::ffi::c_void;

/// The union of `hipGraphNodeParams`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union NodeParamsBody {
    reserved: [i64; 29],
    pub kernel: KernelNodeParams,
    pub memset: MemsetParams,
    pub host: HostNodeParams,
    /// `hipChildGraphNodeParams`, `hipEventWaitNodeParams`, `hipEventRecordNodeParams`,
    /// `hipMemFreeNodeParams`: one handle or pointer each.
    pub handle: *mut c_void,
    pub alloc: MemAllocNodeParams,
}

/// `hipGraphNodeParams` (256 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct GraphNodeParams {
    pub type_: u32,
    reserved0: [i32; 3],
    pub body: NodeParamsBody,
    reserved2: i64,
}

const _: () = {
    assert!(std::mem::size_of::<GraphNodeParams>() == 256);
    assert!(std::mem::offset_of!(GraphNodeParams, body) == 16);
};

/// Reads the node `params` describes, with its pointed-to data copied (a kernel's arguments
/// as the current one of `devices` takes them). A memory alloc node takes its memory now.
///
/// # Safety
/// HIP's contract for the member `params.type_` selects.
pub unsafe fn node_params(devices: &[Device], params: &GraphNodeParams) -> HipResult<NodeParams> {
    // SAFETY (each union read): `type_` says which member the program filled in.
    unsafe {
        Ok(match params.type_ {
            node_type::KERNEL => NodeParams::Kernel(super::kernel_node(
                current::device(devices)?,
                &params.body.kernel,
            )?),
            // The union's memset member has the layout of the program's ABI.
            node_type::MEMSET => {
                NodeParams::Memset(memset(&MemsetParams::read(&params.body.memset)?)?)
            }
            node_type::HOST => NodeParams::Host(host(&params.body.host)?),
            node_type::GRAPH => NodeParams::Child(graph(params.body.handle)?),
            node_type::EMPTY => NodeParams::Empty,
            node_type::WAIT_EVENT => NodeParams::EventWait(EventRef::new(params.body.handle)?),
            node_type::EVENT_RECORD => NodeParams::EventRecord(EventRef::new(params.body.handle)?),
            node_type::MEM_ALLOC => {
                NodeParams::MemAlloc(memory::allocate(devices, &params.body.alloc)?)
            }
            node_type::MEM_FREE => NodeParams::MemFree(memory::find(params.body.handle)?),
            node_type::MEMCPY | node_type::EXT_SEMAPHORE_SIGNAL | node_type::EXT_SEMAPHORE_WAIT => {
                tracing::warn!(
                    node_type = params.type_,
                    "generic graph node parameters: memcpy (hipMemcpy3DParms) and external semaphore nodes are not supported"
                );
                return Err(HipError::NOT_SUPPORTED);
            }
            other => {
                return Err(bad(&format!(
                    "graph node parameters of unknown type {other}"
                )))
            }
        })
    }
}

/// `hipGraphInstantiateParams` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct InstantiateParams {
    pub error_node: *mut c_void,
    pub flags: u64,
    pub result: u32,
    pub upload_stream: *mut c_void,
}

const _: () = assert!(std::mem::size_of::<InstantiateParams>() == 32);

/// `hipGraphInstantiateResult`.
pub mod instantiate_result {
    pub const SUCCESS: u32 = 0;
    pub const ERROR: u32 = 1;
    pub const INVALID_STRUCTURE: u32 = 2;
    pub const NODE_OPERATION_NOT_SUPPORTED: u32 = 3;
}

/// `hipKernelNodeAttrValue` / `hipLaunchAttributeValue` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub union KernelAttrValue {
    pub access_policy_window: AccessPolicyWindow,
    pub int: i32,
}

const _: () = assert!(std::mem::size_of::<KernelAttrValue>() == 32);
