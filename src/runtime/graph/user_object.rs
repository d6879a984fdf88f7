//! User objects (`hipUserObjectCreate`): a program's pointer with a destructor and a reference
//! count, which graphs can own references to, so that a resource lives as long as the graphs
//! (and executable graphs made from them) that use it.
//!
//! The program holds references (`hipUserObjectRetain` / `Release`); a graph holds its own
//! (`hipGraphRetainUserObject`, moved or added), which its clones and child-graph copies
//! retain again and an executable graph retains for its lifetime. When the last reference
//! goes, the destructor runs, as CUDA does, asynchronously: on a thread of its own, never on
//! the thread dropping the reference, which may hold a graph's lock or be inside a host node
//! the destructor might wait for. Nothing waits for it (CUDA's
//! `hipUserObjectNoDestructorSync`, the only flag): a program that needs to know signals
//! from the destructor itself.

use crate::error::{HipError, HipResult};
use crate::runtime::base::handles::HandleTable;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

/// `hipHostFn_t`: a host node's function, a user object's destructor.
pub type HostFunction = unsafe extern "C" fn(*mut c_void);

static OBJECTS: HandleTable<UserObject> = HandleTable::new("user object", 0x70);

/// `hipUserObjectNoDestructorSync`.
pub const NO_DESTRUCTOR_SYNC: u32 = 1;
/// `hipGraphUserObjectMove`.
pub const GRAPH_MOVE: u32 = 1;

pub struct UserObject {
    pub handle: usize,
    ptr: usize,
    destroy: HostFunction,
    /// References held by the program and by graphs together.
    refs: Mutex<u64>,
}

pub fn lookup(handle: *mut c_void) -> HipResult<Arc<UserObject>> {
    OBJECTS
        .get(handle as usize)
        .map_err(|_| HipError::INVALID_VALUE)
}

/// `hipUserObjectCreate`.
pub fn create(
    ptr: *mut c_void,
    destroy: Option<HostFunction>,
    initial: u32,
    flags: u32,
) -> HipResult<*mut c_void> {
    let Some(destroy) = destroy else {
        tracing::warn!("hipUserObjectCreate: no destructor");
        return Err(HipError::INVALID_VALUE);
    };
    // CUDA requires the flag; 0 is taken too (the destructor is never waited for anyway).
    if initial == 0 || flags & !NO_DESTRUCTOR_SYNC != 0 {
        tracing::warn!(
            initial,
            flags,
            "hipUserObjectCreate: no initial reference, or unknown flags"
        );
        return Err(HipError::INVALID_VALUE);
    }
    OBJECTS
        .insert_with(|handle| {
            Ok(Arc::new(UserObject {
                handle,
                ptr: ptr as usize,
                destroy,
                refs: Mutex::new(u64::from(initial)),
            }))
        })
        .map(|h| h as *mut c_void)
}

/// Adds `count` references.
pub fn retain(object: &UserObject, count: u32) -> HipResult {
    if count == 0 {
        return Err(HipError::INVALID_VALUE);
    }
    *object.refs.lock() += u64::from(count);
    Ok(())
}

/// Drops `count` references; the last one runs the destructor (asynchronously). Dropping
/// more than there are is refused.
pub fn release(object: &UserObject, count: u32) -> HipResult {
    if count == 0 {
        return Err(HipError::INVALID_VALUE);
    }
    let mut refs = object.refs.lock();
    let Some(left) = refs.checked_sub(u64::from(count)) else {
        tracing::warn!(
            count,
            held = *refs,
            "hipUserObjectRelease: more references than the object has"
        );
        return Err(HipError::INVALID_VALUE);
    };
    *refs = left;
    drop(refs);
    if left == 0 {
        let _ = OBJECTS.remove(object.handle);
        run_destructor(object.destroy, object.ptr);
    }
    Ok(())
}

type Job = (HostFunction, usize);

static DESTRUCTORS: Mutex<Option<Sender<Job>>> = Mutex::new(None);

fn run_destructor(destroy: HostFunction, ptr: usize) {
    let mut sender = DESTRUCTORS.lock();
    if sender.is_none() {
        let (tx, rx) = channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("hipshim-user-object".into())
            .spawn(move || {
                for (destroy, ptr) in rx {
                    // SAFETY: the program gave this destructor for this pointer.
                    unsafe { destroy(ptr as *mut c_void) };
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "user object destructor thread: not started; running the destructor here");
            drop(sender);
            // SAFETY: as above.
            unsafe { destroy(ptr as *mut c_void) };
            return;
        }
        *sender = Some(tx);
    }
    if let Some(tx) = sender.as_ref() {
        if tx.send((destroy, ptr)).is_err() {
            tracing::warn!("user object destructor thread is gone; the destructor does not run");
        }
    }
}

/// References a graph (or an executable graph) owns; dropping them releases them.
#[derive(Default)]
pub struct Owned(Vec<(Arc<UserObject>, u32)>);

impl Owned {
    /// `hipGraphRetainUserObject`: `count` more references, taken from the program's own with
    /// `GRAPH_MOVE`, else added.
    pub fn retain(&mut self, object: Arc<UserObject>, count: u32, flags: u32) -> HipResult {
        if count == 0 || flags & !GRAPH_MOVE != 0 {
            tracing::warn!(
                count,
                flags,
                "hipGraphRetainUserObject: a zero count or unknown flags"
            );
            return Err(HipError::INVALID_VALUE);
        }
        if flags & GRAPH_MOVE == 0 {
            retain(&object, count)?;
        }
        match self.0.iter_mut().find(|(o, _)| Arc::ptr_eq(o, &object)) {
            Some((_, held)) => *held += count,
            None => self.0.push((object, count)),
        }
        Ok(())
    }

    /// `hipGraphReleaseUserObject`: at most the references the graph holds.
    pub fn release(&mut self, object: &Arc<UserObject>, count: u32) -> HipResult {
        let Some(at) = self.0.iter().position(|(o, _)| Arc::ptr_eq(o, object)) else {
            tracing::warn!("hipGraphReleaseUserObject: the graph holds no reference to it");
            return Err(HipError::INVALID_VALUE);
        };
        let held = &mut self.0[at].1;
        if count == 0 || count > *held {
            tracing::warn!(
                count,
                held = *held,
                "hipGraphReleaseUserObject: more references than the graph holds"
            );
            return Err(HipError::INVALID_VALUE);
        }
        *held -= count;
        if *held == 0 {
            self.0.swap_remove(at);
        }
        release(object, count)
    }

    /// The same references once more (for a clone or an executable graph).
    pub fn duplicate(&self) -> Owned {
        for (object, count) in &self.0 {
            let _ = retain(object, *count);
        }
        Owned(self.0.clone())
    }

    /// Adds `other`'s references to these (without retaining again).
    pub fn absorb(&mut self, other: Owned) {
        let mut other = other;
        self.0.append(&mut std::mem::take(&mut other.0));
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        for (object, count) in self.0.drain(..) {
            let _ = release(&object, count);
        }
    }
}
