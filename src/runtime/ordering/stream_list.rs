//! The live streams of a device as a list a stream leaves in O(1): each entry knows its own
//! position (its slot), so leaving is a `swap_remove` and one slot fixed up, not a search
//! through every live stream under the write lock (which made destroying N streams cost
//! O(N²): 100,000 took 30.7 s to destroy and 1.3 s to create).
//!
//! The list's order is not creation order: the last entry moves into a leaver's place. Nothing
//! depends on the order; the device-wide calls wait for every entry and take every entry's
//! report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Where an entry of a [`SlotList`] keeps its position. Read and written only by the list,
/// under the lock that guards the list (the atomic lets the entry be shared meanwhile).
pub struct Slot(AtomicUsize);

/// The slot of an entry in no list.
const UNLISTED: usize = usize::MAX;

impl Slot {
    pub const fn new() -> Slot {
        Slot(AtomicUsize::new(UNLISTED))
    }

    fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, at: usize) {
        self.0.store(at, Ordering::Relaxed);
    }
}

impl Default for Slot {
    fn default() -> Self {
        Slot::new()
    }
}

/// What a [`SlotList`] holds: something with a [`Slot`] of its own.
pub trait Slotted {
    fn slot(&self) -> &Slot;
}

/// Shared entries, each at the index its slot names. An entry is in at most one list.
pub struct SlotList<T> {
    entries: Vec<Arc<T>>,
    /// Entries written by [`SlotList::remove`] (moved or checked), for the tests of its cost.
    #[cfg(test)]
    touched: usize,
}

impl<T: Slotted> SlotList<T> {
    pub const fn new() -> SlotList<T> {
        SlotList {
            entries: Vec::new(),
            #[cfg(test)]
            touched: 0,
        }
    }

    pub fn push(&mut self, entry: Arc<T>) {
        entry.slot().set(self.entries.len());
        self.entries.push(entry);
    }

    /// Takes `entry` out of the list; false if it was not in it. O(1): the last entry takes
    /// its place. The entries' capacity shrinks once three quarters of it are unused, so a
    /// list that held 100,000 streams does not keep their room after they are gone.
    pub fn remove(&mut self, entry: &Arc<T>) -> bool {
        let at = entry.slot().get();
        #[cfg(test)]
        {
            self.touched += 1;
        }
        if self.entries.get(at).is_none_or(|e| !Arc::ptr_eq(e, entry)) {
            return false;
        }
        self.entries.swap_remove(at);
        entry.slot().set(UNLISTED);
        if let Some(moved) = self.entries.get(at) {
            moved.slot().set(at);
            #[cfg(test)]
            {
                self.touched += 1;
            }
        }
        let capacity = self.entries.capacity();
        if capacity > 64 && self.entries.len() < capacity / 4 {
            self.entries.shrink_to(capacity / 2);
        }
        true
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Arc<T>> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Room kept for entries (for the tests of what a list gives back).
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    pub fn to_vec(&self) -> Vec<Arc<T>> {
        self.entries.clone()
    }
}

impl<T: Slotted> Default for SlotList<T> {
    fn default() -> Self {
        SlotList::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Entry {
        id: usize,
        slot: Slot,
    }

    impl Slotted for Entry {
        fn slot(&self) -> &Slot {
            &self.slot
        }
    }

    fn list_of(n: usize) -> (SlotList<Entry>, Vec<Arc<Entry>>) {
        let mut list = SlotList::new();
        let entries: Vec<Arc<Entry>> = (0..n)
            .map(|id| {
                Arc::new(Entry {
                    id,
                    slot: Slot::new(),
                })
            })
            .collect();
        for e in &entries {
            list.push(e.clone());
        }
        (list, entries)
    }

    #[test]
    fn removing_from_the_middle_of_many_touches_a_constant_number_of_entries() {
        let n = 100_000;
        let (mut list, entries) = list_of(n);
        assert!(list.remove(&entries[n / 2]));
        // One entry checked, one moved: a search or a `retain` would touch up to n.
        assert!(list.touched <= 2, "touched {} of {n}", list.touched);
        let before = list.touched;
        for e in entries.iter().skip(1).step_by(7) {
            list.remove(e);
        }
        let removals = entries.iter().skip(1).step_by(7).count();
        assert!(list.touched - before <= 2 * removals);
    }

    #[test]
    fn every_entry_stays_findable_through_its_slot() {
        let (mut list, entries) = list_of(1000);
        for e in entries.iter().filter(|e| e.id % 3 == 0) {
            assert!(list.remove(e));
        }
        assert_eq!(list.len(), 1000 - 334);
        for (at, e) in list.iter().enumerate() {
            assert_eq!(e.slot().get(), at);
            assert_ne!(e.id % 3, 0);
        }
        // Removed entries are in no list: a second removal is refused.
        assert!(!list.remove(&entries[0]));
        for e in entries.iter().filter(|e| e.id % 3 != 0) {
            assert!(list.remove(e));
        }
        assert_eq!(list.len(), 0);
    }

    #[test]
    fn an_entry_of_another_list_is_not_taken() {
        let (mut a, in_a) = list_of(4);
        let (mut b, in_b) = list_of(4);
        // Same slot number, other list: refused by identity, and the lists stay intact.
        assert!(!a.remove(&in_b[2]));
        assert_eq!(a.len(), 4);
        assert!(b.remove(&in_b[2]));
        assert!(a.remove(&in_a[2]));
    }

    #[test]
    fn an_emptied_list_gives_its_room_back() {
        let (mut list, entries) = list_of(100_000);
        let peak = list.capacity();
        for e in &entries {
            list.remove(e);
        }
        assert!(
            list.capacity() <= 128,
            "kept room for {} of {peak}",
            list.capacity()
        );
    }
}
