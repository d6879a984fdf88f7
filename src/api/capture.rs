//! Stream capture (`runtime/graph/capture.rs`): begin (into a new graph or an existing one),
//! end, the queries and the capture dependencies of a stream.

use super::convert::{Out, PerThread, Stream};
use super::declare::hip_api;
use super::graph::deps;
use super::types::{hipError_t, hipGraphNode_t, hipGraph_t, hipStream_t};
use crate::error::{HipError, HipResult};
use crate::runtime::graph::{capture, Graph};
use std::ffi::c_void;
use std::sync::Arc;

fn capture_info(stream: &Stream, status: Out<u32>, id: *mut usize) -> HipResult {
    let (code, value) = capture::info(&stream.stream);
    if !id.is_null() && code != capture::STATUS_NONE {
        // SAFETY: a non-null `pId` is writable (HIP's contract).
        unsafe { id.write(value as usize) };
    }
    status.write(code)
}

/// `hipStreamGetCaptureInfo_v2`: every output but the status may be null; they are written
/// only while the stream captures, except the dependency count (0 when not capturing).
fn capture_info_v2(
    stream: &Stream,
    status: Out<u32>,
    id: *mut usize,
    graph: *mut hipGraph_t,
    deps: *mut *const hipGraphNode_t,
    count: *mut usize,
) -> HipResult {
    let info = capture::info_v2(&stream.stream);
    // SAFETY (every write below): a non-null output is writable (HIP's contract).
    unsafe {
        if let Some(info) = &info {
            if !id.is_null() {
                id.write(info.id as usize);
            }
            if !graph.is_null() {
                graph.write(info.graph as hipGraph_t);
            }
            if !deps.is_null() {
                deps.write(info.deps as *const hipGraphNode_t);
            }
        }
        if !count.is_null() {
            count.write(info.as_ref().map_or(0, |i| i.count));
        }
    }
    status.write(info.map_or(capture::STATUS_NONE, |i| i.status))
}

/// `hipStreamBeginCaptureToGraph`: edge data, if given, must be the default edges (all
/// zero): edges of other kinds (programmatic launch) do not exist here.
///
/// # Safety
/// HIP's contract: `dependencies` and a non-null `edge_data` hold `count` entries.
unsafe fn begin_to_graph(
    stream: &Stream,
    graph: Arc<Graph>,
    dependencies: *const hipGraphNode_t,
    edge_data: *const [u8; 8],
    count: usize,
    mode: u32,
) -> HipResult {
    // SAFETY: forwarded contract.
    let dependencies = unsafe { deps(dependencies, count) }?;
    if !edge_data.is_null() && count > 0 {
        // SAFETY: forwarded contract.
        let edges = unsafe { std::slice::from_raw_parts(edge_data, count) };
        if edges.iter().any(|e| *e != [0; 8]) {
            tracing::warn!("hipStreamBeginCaptureToGraph: only default edges are supported");
            return Err(HipError::INVALID_VALUE);
        }
    }
    capture::begin_to_graph(&stream.stream, mode, graph, dependencies)
}

/// # Safety
/// HIP's contract: a non-null `nodes` holds `count` handles.
unsafe fn update_dependencies(
    stream: &Stream,
    nodes: *mut hipGraphNode_t,
    count: usize,
    flags: u32,
) -> HipResult {
    // SAFETY: forwarded contract.
    let nodes = unsafe { deps(nodes, count) }?;
    capture::update_dependencies(&stream.stream, nodes, flags)
}

hip_api! {
    fn hipStreamBeginCapture(stream: hipStream_t => Stream, mode: u32) -> hipError_t {
        capture::begin(&stream.stream, mode)
    }
    alias hipStreamBeginCapture_spt = hipStreamBeginCapture with stream: PerThread;

    /// Edge data, if given, must be all default edges.
    fn hipStreamBeginCaptureToGraph(
        stream: hipStream_t => Stream,
        graph: hipGraph_t => Arc<Graph>,
        dependencies: *const hipGraphNode_t,
        edge_data: *const c_void,
        count: usize,
        mode: u32,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the lists (`hipGraphEdgeData` is 8 bytes).
        unsafe { begin_to_graph(&stream, graph, dependencies, edge_data as *const [u8; 8], count, mode) }
    }

    /// The graph belongs to the program (`hipGraphDestroy`).
    fn hipStreamEndCapture(stream: hipStream_t => Stream, graph: *mut hipGraph_t => Out<hipGraph_t>) -> hipError_t {
        graph.write(capture::end(&stream.stream)?)
    }
    alias hipStreamEndCapture_spt = hipStreamEndCapture with stream: PerThread;

    fn hipStreamIsCapturing(stream: hipStream_t => Stream, status: *mut u32 => Out<u32>) -> hipError_t {
        status.write(capture::info(&stream.stream).0)
    }
    alias hipStreamIsCapturing_spt = hipStreamIsCapturing with stream: PerThread;

    /// `pId` may be null; it is written only while the stream captures.
    fn hipStreamGetCaptureInfo(stream: hipStream_t => Stream, status: *mut u32 => Out<u32>, id: *mut usize) -> hipError_t {
        capture_info(&stream, status, id)
    }
    alias hipStreamGetCaptureInfo_spt = hipStreamGetCaptureInfo with stream: PerThread;

    /// The dependency array stays valid until the stream's next capture call.
    fn hipStreamGetCaptureInfo_v2(
        stream: hipStream_t => Stream,
        status: *mut u32 => Out<u32>,
        id: *mut usize,
        graph: *mut hipGraph_t,
        dependencies: *mut *const hipGraphNode_t,
        count: *mut usize,
    ) -> hipError_t {
        capture_info_v2(&stream, status, id, graph, dependencies, count)
    }
    alias hipStreamGetCaptureInfo_v2_spt = hipStreamGetCaptureInfo_v2 with stream: PerThread;

    /// `flags`: 0 adds the nodes to the stream's capture dependencies, 1 makes them the set.
    fn hipStreamUpdateCaptureDependencies(
        stream: hipStream_t => Stream,
        dependencies: *mut hipGraphNode_t,
        count: usize,
        flags: u32,
    ) -> hipError_t {
        // SAFETY: HIP's contract for the list.
        unsafe { update_dependencies(&stream, dependencies, count, flags) }
    }

    fn hipThreadExchangeStreamCaptureMode(mode: *mut u32 => Out<u32>) -> hipError_t {
        // SAFETY: an in-out value (HIP's contract).
        let wanted = unsafe { mode.read() };
        mode.write(capture::exchange_mode(wanted)?)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_capture.rs"));
