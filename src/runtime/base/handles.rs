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
//! in `kernel/module.rs`.

use crate::error::{HipError, HipResult};
use dashmap::DashMap;
use std::cell::Cell;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::LazyLock;
use std::sync::{Arc, Weak};
use std::thread::LocalKey;

/// A thread's latest lookups in one table, direct-mapped by key: each entry is the key, the
/// table's change count when it was made, and the object as a raw `Weak` (so that the cache
/// never keeps a destroyed object alive). The launch and synchronize paths look their stream
/// and kernel up here instead of in the shared map.
///
/// Holds nothing with a destructor, so a `const` thread-local of it costs only its TLS
/// address on each access; one whose type needs dropping is checked, and registered for the
/// thread's exit, on every access (~60 instructions). The price: a thread that exits keeps
/// the allocation (not the contents: those go with the last strong reference) of the at most
/// `N` objects its cache still names.
pub struct RecentLookups<T, const N: usize> {
    entries: [Cell<Recent<T>>; N],
}

struct Recent<T> {
    key: usize,
    changes: u64,
    /// From `Weak::into_raw`, owned by the entry; null when the entry is empty.
    object: *const T,
}

impl<T> Clone for Recent<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Recent<T> {}

impl<T, const N: usize> RecentLookups<T, N> {
    const EMPTY: Recent<T> = Recent {
        key: 0,
        changes: 0,
        object: std::ptr::null(),
    };

    pub const fn new() -> Self {
        RecentLookups {
            entries: [const { Cell::new(Self::EMPTY) }; N],
        }
    }

    fn entry(&self, key: usize) -> &Cell<Recent<T>> {
        // Keys are aligned addresses or tagged handles: their low byte varies least.
        &self.entries[(key >> 4) % N]
    }

    /// The object cached for `key`, if the table has not changed since (`changes`) and the
    /// object is still alive.
    #[inline(always)]
    pub fn get(&self, key: usize, changes: u64) -> Option<Arc<T>> {
        let recent = self.entry(key).get();
        if recent.key != key || recent.changes != changes || recent.object.is_null() {
            return None;
        }
        // SAFETY: `object` came from `Weak::into_raw` and the entry still owns that weak
        // reference (it is given back only in `put`); ManuallyDrop leaves it owned.
        let weak = std::mem::ManuallyDrop::new(unsafe { Weak::from_raw(recent.object) });
        weak.upgrade()
    }

    /// Caches `object` for `key`, found while the table's change count was `changes`.
    #[inline(never)]
    pub fn put(&self, key: usize, changes: u64, object: &Arc<T>) {
        let old = self.entry(key).replace(Recent {
            key,
            changes,
            object: Weak::into_raw(Arc::downgrade(object)),
        });
        if !old.object.is_null() {
            // SAFETY: the replaced entry owned this weak reference, and nothing else names
            // it now.
            drop(unsafe { Weak::from_raw(old.object) });
        }
    }
}

impl<T, const N: usize> Default for RecentLookups<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A map keyed by a handle or a host address. Such keys come from the runtime or the
/// program, not from an adversary, so SipHash's flood resistance buys nothing and costs
/// ~250 instructions per lookup on the launch and synchronize paths.
pub type AddressMap<V> = DashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// One multiply and a fold: spreads the handles' fixed low byte (their tag) and the
/// addresses' alignment zeros over all bits, as hashbrown (low bits pick the bucket, high bits
/// the tag byte) and dashmap (high bits pick the shard) both need.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    #[inline]
    fn write_usize(&mut self, key: usize) {
        let product = (key as u64 ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = product ^ (product >> 29);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_usize(u64::from_le_bytes(word) as usize);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Returns the heap's free pages to the kernel, after a table lost most of its objects. glibc
/// gives memory back on `free` only from the top of the heap, so once 100,000 streams or a
/// million events are gone, one small allocation still in use above them keeps all their
/// pages resident (130 MB and 260 MB, measured); `malloc_trim` releases the free pages below
/// it too. It walks the free chunks: called only when a table shrinks, O(1) per removal.
fn give_heap_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// One counter for every table: a value is issued once in the process, whatever its kind.
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// The live objects of one kind by handle.
pub struct HandleTable<T> {
    /// What the log calls one of these ("stream", "event", ...).
    kind: &'static str,
    /// Low byte of every handle of this kind: a multiple of 16, so handles look aligned like
    /// the pointers C declares them as, and a log line's handle shows its kind.
    tag: u8,
    live: LazyLock<AddressMap<Arc<T>>>,
    /// Handles ended so far: a thread's cached lookup is good while this has not moved.
    removals: AtomicU64,
    /// Live handles, and the most there were since the map last gave its room back: a map
    /// grown for a million events keeps their room after they are gone unless told to shrink
    /// (see [`HandleTable::shrink_when_emptied`]).
    count: AtomicUsize,
    peak: AtomicUsize,
}

/// Maps smaller than this are never shrunk: their room is not worth the rehash.
const SHRINK_FROM: usize = 1024;

impl<T> HandleTable<T> {
    pub const fn new(kind: &'static str, tag: u8) -> HandleTable<T> {
        assert!(
            tag.is_multiple_of(16) && tag != 0,
            "a tag keeps handles aligned and non-zero"
        );
        HandleTable {
            kind,
            tag,
            live: LazyLock::new(AddressMap::default),
            removals: AtomicU64::new(0),
            count: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
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
        // Counted before it can be removed.
        self.counted_in();
        self.live.insert(handle, object);
        Ok(handle)
    }

    pub fn insert(&self, object: Arc<T>) -> usize {
        let handle = self.issue();
        self.counted_in();
        self.live.insert(handle, object);
        handle
    }

    fn counted_in(&self) {
        let count = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(count, Ordering::Relaxed);
    }

    /// Gives the map's room back once three quarters of the handles it held at its peak are
    /// gone. The rehash costs O(peak) and comes after peak * 3/4 removals: O(1) per removal.
    fn shrink_when_emptied(&self, removed: usize) {
        let count = self
            .count
            .fetch_sub(removed, Ordering::Relaxed)
            .saturating_sub(removed);
        let peak = self.peak.load(Ordering::Relaxed);
        if peak < SHRINK_FROM || count >= peak / 4 {
            return;
        }
        // One thread shrinks; the others go on.
        if self
            .peak
            .compare_exchange(peak, count, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.live.shrink_to_fit();
            give_heap_back();
        }
    }

    /// Room the map keeps for handles (for tests of what removals give back).
    pub fn capacity(&self) -> usize {
        self.live.capacity()
    }

    /// The live object `handle` names: a map read and a reference count, no allocation (the
    /// launch path resolves streams here). Anything else is `hipErrorInvalidHandle`.
    pub fn get(&self, handle: usize) -> HipResult<Arc<T>> {
        match self.live.get(&handle) {
            Some(object) => Ok(object.value().clone()),
            None => Err(self.not_live(handle, "used")),
        }
    }

    /// Handles ended so far: an object looked up while this read the same is still live.
    #[inline(always)]
    pub fn removals(&self) -> u64 {
        self.removals.load(Ordering::Acquire)
    }

    /// [`HandleTable::get`] through the calling thread's `recent` lookups: a handle used again
    /// by the same thread (a stream launched on in a loop) costs a few loads instead of a map
    /// read. The cached entry is trusted only while no handle of the table has been ended
    /// since it was made.
    #[inline(always)]
    pub fn get_via<const N: usize>(
        &self,
        handle: usize,
        recent: &'static LocalKey<RecentLookups<T, N>>,
    ) -> HipResult<Arc<T>> {
        let removals = self.removals();
        match recent.with(|recent| recent.get(handle, removals)) {
            Some(object) => Ok(object),
            None => self.get_and_remember(handle, removals, recent),
        }
    }

    #[inline(never)]
    fn get_and_remember<const N: usize>(
        &self,
        handle: usize,
        removals: u64,
        recent: &'static LocalKey<RecentLookups<T, N>>,
    ) -> HipResult<Arc<T>> {
        let object = self.get(handle)?;
        recent.with(|recent| recent.put(handle, removals, &object));
        Ok(object)
    }

    /// Ends `handle`; the object lives on while others hold it.
    pub fn remove(&self, handle: usize) -> HipResult<Arc<T>> {
        match self.live.remove(&handle) {
            Some((_, object)) => {
                self.removals.fetch_add(1, Ordering::AcqRel);
                self.shrink_when_emptied(1);
                Ok(object)
            }
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
        let removed: Vec<Arc<T>> = handles
            .into_iter()
            .filter_map(|handle| self.live.remove(&handle).map(|(_, object)| object))
            .collect();
        self.removals.fetch_add(1, Ordering::AcqRel);
        self.shrink_when_emptied(removed.len());
        removed
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

    thread_local! {
        static LAST_NUMBER: RecentLookups<u32, 1> = const { RecentLookups::new() };
    }

    #[test]
    fn a_cached_lookup_never_outlives_its_handle_nor_keeps_the_object() {
        let table: &'static HandleTable<u32> = Box::leak(Box::new(HandleTable::new("n", 0x90)));
        let a = table.insert(Arc::new(1));
        let b = table.insert(Arc::new(2));
        assert_eq!(*table.get_via(a, &LAST_NUMBER).unwrap(), 1);
        // Cached now; a second lookup hits the cache and sees the same object.
        assert_eq!(*table.get_via(a, &LAST_NUMBER).unwrap(), 1);
        // Another handle replaces the cached one.
        assert_eq!(*table.get_via(b, &LAST_NUMBER).unwrap(), 2);
        let held = table.get_via(a, &LAST_NUMBER).unwrap();
        // Ended: the cached entry must not answer for it, even while the object lives on.
        table.remove(a).unwrap();
        assert_eq!(
            table.get_via(a, &LAST_NUMBER).err(),
            Some(HipError::INVALID_HANDLE)
        );
        assert_eq!(*held, 1);
        // The cache holds the object weakly: once the table and its users let go, it is gone.
        let weak = Arc::downgrade(&table.get_via(b, &LAST_NUMBER).unwrap());
        drop(held);
        drop(table.remove(b).unwrap());
        assert!(
            weak.upgrade().is_none(),
            "the thread's cache kept a released object alive"
        );
        // Other handles keep working after removals.
        let c = table.insert(Arc::new(3));
        assert_eq!(*table.get_via(c, &LAST_NUMBER).unwrap(), 3);
        assert_eq!(*table.get_via(c, &LAST_NUMBER).unwrap(), 3);
    }

    #[test]
    fn address_keys_spread_over_buckets_and_shards() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<AddressHasher>::default();
        // Handles share their low byte (the tag), addresses their alignment zeros: the hash's
        // low bits (hashbrown's bucket) and high bits (dashmap's shard) must still differ.
        let hashes: Vec<u64> = (1..=64usize)
            .map(|n| build.hash_one((n << 8) | 0x70))
            .collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 63).collect();
        let high: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 58).collect();
        assert!(low.len() > 32, "low bits collide: {}", low.len());
        assert!(high.len() > 16, "high bits collide: {}", high.len());
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
    fn a_table_emptied_after_a_peak_gives_its_room_back() {
        let table: HandleTable<u32> = HandleTable::new("number", 0xa0);
        let handles: Vec<usize> = (0..100_000).map(|n| table.insert(Arc::new(n))).collect();
        let peak = table.capacity();
        assert!(peak >= 100_000);
        for h in &handles[..99_000] {
            table.remove(*h).unwrap();
        }
        assert!(
            table.capacity() < peak / 8,
            "room for {} kept of {peak}",
            table.capacity()
        );
        for (n, h) in handles.iter().enumerate().skip(99_000) {
            assert_eq!(*table.get(*h).unwrap(), n as u32, "the rest stay live");
        }
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
