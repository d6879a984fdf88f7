//! The one handle scheme of every object hipshim hands to the program: `hipStream_t`,
//! `hipEvent_t`, `hipModule_t`, `hipFunction_t` and the fat-binary handle of
//! `__hipRegisterFatBinary`.
//!
//! A handle is a number, not an address: the program never dereferences one, and the runtime
//! only ever looks it up in the live table of its kind. So a pointer that never was a handle,
//! a destroyed handle or a handle of another kind is rejected without being dereferenced, and
//! a destroyed handle stays invalid for good (values are never reused, across all kinds).
//!
//! Not a handle we issue: the host address of a kernel stub or a device variable's host
//! shadow, which the program registers (`__hipRegisterFunction`, `__hipRegisterVar`) and
//! passes back to `hipLaunchKernel` and the symbol calls. Those stay keyed by that address
//! in `module.rs`.

use crate::error::{HipError, HipResult};
use dashmap::DashMap;
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One counter for every table: a value is issued once in the process, whatever its kind.
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// The live objects of one kind by handle.
pub struct HandleTable<T> {
    /// What the log calls one of these ("stream", "event", ...).
    kind: &'static str,
    /// Low byte of every handle of this kind: a multiple of 16, so handles look aligned like
    /// the pointers C declares them as, and a log line's handle shows its kind.
    tag: u8,
    live: Lazy<DashMap<usize, Arc<T>>>,
}

impl<T> HandleTable<T> {
    pub const fn new(kind: &'static str, tag: u8) -> HandleTable<T> {
        assert!(
            tag.is_multiple_of(16) && tag != 0,
            "a tag keeps handles aligned and non-zero"
        );
        HandleTable {
            kind,
            tag,
            live: Lazy::new(DashMap::new),
        }
    }

    /// A fresh handle value: never 0, never `hipStreamLegacy` (1) or `hipStreamPerThread`
    /// (2), never issued before.
    fn issue(&self) -> usize {
        (NEXT.fetch_add(1, Ordering::Relaxed) << 8) | self.tag as usize
    }

    /// Makes the object for a fresh handle (it may need to know its own handle) and makes
    /// the handle live. Nothing is issued for an object that fails to be made.
    pub fn insert_with(&self, make: impl FnOnce(usize) -> HipResult<Arc<T>>) -> HipResult<usize> {
        let handle = self.issue();
        let object = make(handle)?;
        self.live.insert(handle, object);
        Ok(handle)
    }

    pub fn insert(&self, object: Arc<T>) -> usize {
        let handle = self.issue();
        self.live.insert(handle, object);
        handle
    }

    /// The live object `handle` names: a map read and a reference count, no allocation (the
    /// launch path resolves streams here). Anything else is `hipErrorInvalidHandle`.
    pub fn get(&self, handle: usize) -> HipResult<Arc<T>> {
        match self.live.get(&handle) {
            Some(object) => Ok(object.value().clone()),
            None => Err(self.not_live(handle, "used")),
        }
    }

    /// Ends `handle`; the object lives on while others hold it.
    pub fn remove(&self, handle: usize) -> HipResult<Arc<T>> {
        match self.live.remove(&handle) {
            Some((_, object)) => Ok(object),
            None => Err(self.not_live(handle, "released")),
        }
    }

    /// Ends every handle whose object `doomed` picks; returns those objects.
    pub fn remove_where(&self, mut doomed: impl FnMut(&T) -> bool) -> Vec<Arc<T>> {
        let handles: Vec<usize> = self
            .live
            .iter()
            .filter(|entry| doomed(entry.value()))
            .map(|entry| *entry.key())
            .collect();
        handles
            .into_iter()
            .filter_map(|handle| self.live.remove(&handle).map(|(_, object)| object))
            .collect()
    }

    fn not_live(&self, handle: usize, action: &str) -> HipError {
        tracing::warn!(
            handle = format_args!("{handle:#x}"),
            "{} {action} with a handle that is not a live {}",
            self.kind,
            self.kind
        );
        HipError::INVALID_HANDLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NUMBERS: HandleTable<u32> = HandleTable::new("number", 0x70);
    static WORDS: HandleTable<&str> = HandleTable::new("word", 0x80);

    #[test]
    fn handles_are_fresh_aligned_and_never_the_special_stream_values() {
        let a = NUMBERS.insert(Arc::new(1));
        let b = NUMBERS.insert(Arc::new(2));
        let c = WORDS.insert(Arc::new("three"));
        assert_ne!(a, b);
        for h in [a, b, c] {
            assert_eq!(h % 16, 0);
            assert!(
                h > 2,
                "0, hipStreamLegacy and hipStreamPerThread are never issued"
            );
        }
        assert_eq!(*NUMBERS.get(a).unwrap(), 1);
        assert_eq!(*NUMBERS.get(b).unwrap(), 2);
    }

    #[test]
    fn released_foreign_and_garbage_handles_are_invalid() {
        let a = NUMBERS.insert(Arc::new(7));
        let word = WORDS.insert(Arc::new("seven"));
        assert_eq!(*NUMBERS.remove(a).unwrap(), 7);
        assert_eq!(NUMBERS.get(a).err(), Some(HipError::INVALID_HANDLE));
        assert_eq!(NUMBERS.remove(a).err(), Some(HipError::INVALID_HANDLE));
        assert_eq!(NUMBERS.get(word).err(), Some(HipError::INVALID_HANDLE));
        for garbage in [0, 1, 2, 0xdead_beef] {
            assert_eq!(NUMBERS.get(garbage).err(), Some(HipError::INVALID_HANDLE));
        }
        let b = NUMBERS.insert(Arc::new(8));
        assert_ne!(a, b, "a released value is never issued again");
    }

    #[test]
    fn a_failed_make_leaves_nothing_live() {
        let mut seen = 0;
        let made = NUMBERS.insert_with(|handle| {
            seen = handle;
            Err(HipError::OUT_OF_MEMORY)
        });
        assert_eq!(made, Err(HipError::OUT_OF_MEMORY));
        assert_eq!(NUMBERS.get(seen).err(), Some(HipError::INVALID_HANDLE));
    }

    #[test]
    fn remove_where_ends_exactly_the_chosen_handles() {
        let table: HandleTable<u32> = HandleTable::new("number", 0x90);
        let odd = table.insert(Arc::new(3));
        let even = table.insert(Arc::new(4));
        let removed = table.remove_where(|n| n % 2 == 1);
        assert_eq!(removed.iter().map(|n| **n).collect::<Vec<_>>(), [3]);
        assert!(table.get(odd).is_err());
        assert_eq!(*table.get(even).unwrap(), 4);
    }
}
