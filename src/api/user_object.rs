//! User objects and the references graphs own to them (`runtime/graph/user_object.rs`).

use super::convert::Out;
use super::declare::hip_api;
use super::types::{hipError_t, hipGraph_t, hipUserObject_t, HostFn};
use crate::runtime::graph::user_object::{self, UserObject};
use crate::runtime::graph::{self, Graph};
use std::ffi::c_void;
use std::sync::Arc;

hip_api! {
    /// The destructor runs on a thread of its own once the last reference goes.
    fn hipUserObjectCreate(
        object: *mut hipUserObject_t => Out<hipUserObject_t>,
        ptr: *mut c_void,
        destroy: Option<HostFn>,
        initial_refcount: u32,
        flags: u32,
    ) -> hipError_t {
        object.write(user_object::create(ptr, destroy, initial_refcount, flags)?)
    }

    fn hipUserObjectRetain(object: hipUserObject_t => Arc<UserObject>, count: u32) -> hipError_t {
        user_object::retain(&object, count)
    }

    fn hipUserObjectRelease(object: hipUserObject_t => Arc<UserObject>, count: u32) -> hipError_t {
        user_object::release(&object, count)
    }

    /// `flags`: `hipGraphUserObjectMove` moves the caller's references to the graph.
    fn hipGraphRetainUserObject(
        graph: hipGraph_t => Arc<Graph>,
        object: hipUserObject_t => Arc<UserObject>,
        count: u32,
        flags: u32,
    ) -> hipError_t {
        graph::retain_user_object(&graph, object, count, flags)
    }

    fn hipGraphReleaseUserObject(
        graph: hipGraph_t => Arc<Graph>,
        object: hipUserObject_t => Arc<UserObject>,
        count: u32,
    ) -> hipError_t {
        graph::release_user_object(&graph, &object, count)
    }
}

#[cfg(not(test))]
include!(concat!(env!("OUT_DIR"), "/symver_user_object.rs"));
