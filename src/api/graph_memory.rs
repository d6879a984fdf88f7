//! Graph memory (`runtime/graph/memory.rs`): memory alloc and free nodes, and the device's
//! graph memory.

use super::convert::{FromAbi, Out};
use super::declare::hip_api;
use super::graph::add;
use super::types::{hipError_t, hipGraphNode_t, hipGraph_t, MemAllocNodeParams};
use crate::error::HipResult;
use crate::runtime::graph::{memory, Graph, Node, NodeParams};
use std::ffi::c_void;
use std::sync::Arc;

/// # Safety
/// HIP's contract for the dependency list.
unsafe fn add_free(
    node: Out<hipGraphNode_t>,
    graph: &Graph,
    dependencies: *const hipGraphNode_t,
    count: usize,
    dptr: *mut c_void,
) -> HipResult {
    let alloc = memory::find(dptr)?;
    // SAFETY: forwarded contract.
    unsafe { add(node, graph, dependencies, count, NodeParams::MemFree(alloc)) }
}

hip_api! {
    /// The allocation's address is written to `params->dptr` (fixed for the graph's life).
    fn hipGraphAddMemAllocNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *mut MemAllocNodeParams => Out<MemAllocNodeParams>,
    ) -> hipError_t {
        // SAFETY: the parameters are the caller's to read (an in-out structure).
        let given = unsafe { params.read() };
        let devices = crate::runtime::devices()?;
        // SAFETY: HIP's contract for the access descriptor list.
        let alloc = unsafe { memory::allocate(devices, &given) }?;
        let start = alloc.start;
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add(node, &graph, dependencies, count, NodeParams::MemAlloc(alloc)) }?;
        params.write(MemAllocNodeParams { dptr: start as *mut c_void, ..given })
    }

    /// `accessDescs` points into the node (valid while the node is).
    fn hipGraphMemAllocNodeGetParams(
        node: hipGraphNode_t => Arc<Node>,
        params: *mut MemAllocNodeParams => Out<MemAllocNodeParams>,
    ) -> hipError_t {
        match node.params() {
            NodeParams::MemAlloc(a) => params.write(a.to_abi()),
            _ => Err(super::graph::wrong_type()),
        }
    }

    /// `dev_ptr` must be the address of a graph allocation.
    fn hipGraphAddMemFreeNode(
        node: *mut hipGraphNode_t => Out<hipGraphNode_t>,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        count: usize,
        dev_ptr: *mut c_void,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the dependency list.
        unsafe { add_free(node, &graph, dependencies, count, dev_ptr) }
    }
    alias hipDrvGraphAddMemFreeNode = hipGraphAddMemFreeNode;

    /// Writes the freed address to `*(void**)dev_ptr`.
    fn hipGraphMemFreeNodeGetParams(node: hipGraphNode_t => Arc<Node>, dev_ptr: *mut c_void) -> hipError_t {
        // SAFETY: a pointer value only, checked for null.
        let out: Out<*mut c_void> = unsafe { FromAbi::from_abi(dev_ptr as *mut *mut c_void, "dev_ptr") }?;
        match node.params() {
            NodeParams::MemFree(a) => out.write(a.start as *mut c_void),
            _ => Err(super::graph::wrong_type()),
        }
    }

    fn hipDeviceGraphMemTrim(device: i32) -> hipError_t {
        memory::trim(crate::runtime::devices()?, device)
    }

    /// Every attribute is a `uint64_t`.
    fn hipDeviceGetGraphMemAttribute(device: i32, attr: u32, value: *mut c_void) -> hipError_t {
        let devices = crate::runtime::devices()?;
        // SAFETY: HIP's contract: `value` points to a `uint64_t`.
        unsafe { memory::get_attribute(devices, device, attr, value) }
    }

    /// Only the high watermarks, reset with 0.
    fn hipDeviceSetGraphMemAttribute(device: i32, attr: u32, value: *mut c_void) -> hipError_t {
        let devices = crate::runtime::devices()?;
        // SAFETY: HIP's contract: `value` points to a `uint64_t`.
        unsafe { memory::set_attribute(devices, device, attr, value) }
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_graph_memory.rs"));
