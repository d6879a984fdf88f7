//! Maps keyed by the handles hsasim gives out (object addresses: signals, queues), and the
//! slabs that let the hottest entry points check such a handle without one.
//!
//! The signal and queue-index entry points look a handle up on every call, and the clients
//! that make those calls (a doorbell per packet, a signal read per poll) are the runtime's
//! own, not an adversary: SipHash's flood resistance buys nothing there and costs more than
//! the rest of the call.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A map keyed by an object address.
pub type HandleMap<V> = HashMap<u64, V, BuildHasherDefault<AddressHasher>>;

/// One multiply and a fold: an address's alignment zeros end up spread over all bits (the
/// map picks its bucket from the low bits and its tag byte from the high ones).
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    #[inline]
    fn write_u64(&mut self, key: u64) {
        let product = (key ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = product ^ (product >> 29);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Fixed-size slots in one reservation that is never unmapped, for objects whose address is
/// their handle (signals, queues): a handle is checked by arithmetic (inside the reservation,
/// on a slot boundary) and then by what the slot holds, with no lock, map or reference count,
/// and a stale or garbage handle inside the reservation reads memory that is still mapped.
/// The reservation is backed as slots are first used; a freed slot is reused.
pub struct Slab {
    base: *mut u8,
    slot_bytes: u64,
    slots: u64,
    /// Slots handed out at least once; those past it were never touched.
    high_water: AtomicU64,
    free: Mutex<Vec<u64>>,
}

// SAFETY: `base` is only used for slot arithmetic; what lives in a slot is shared through
// types of its owner's that are Sync.
unsafe impl Send for Slab {}
// SAFETY: as above.
unsafe impl Sync for Slab {}

impl Slab {
    /// Reserves `slots` slots of `slot_bytes` (a power of two; slots are aligned to it up to
    /// a page). `None` if the address space cannot be had.
    pub fn new(slot_bytes: u64, slots: u64) -> Option<Slab> {
        let base = crate::host_map::map_anon(slot_bytes.checked_mul(slots)?).ok()?;
        Some(Slab {
            base,
            slot_bytes,
            slots,
            high_water: AtomicU64::new(0),
            free: Mutex::new(Vec::new()),
        })
    }

    /// A free slot (zeroed if never used; as its last user left it otherwise), or `None`
    /// when all are in use.
    pub fn alloc(&self) -> Option<*mut u8> {
        let index = match self.free.lock().pop() {
            Some(index) => index,
            None => {
                let index = self.high_water.fetch_add(1, Ordering::AcqRel);
                if index >= self.slots {
                    self.high_water.fetch_sub(1, Ordering::AcqRel);
                    return None;
                }
                index
            }
        };
        // SAFETY: `index` < `slots`, so the slot lies inside the reservation.
        Some(unsafe { self.base.add((index * self.slot_bytes) as usize) })
    }

    /// Returns the slot at `slot` (from [`Slab::alloc`]) for reuse.
    pub fn release(&self, slot: *mut u8) {
        let index = (slot as u64 - self.base as u64) / self.slot_bytes;
        self.free.lock().push(index);
    }

    /// The reservation, as (start, bytes).
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, self.slots * self.slot_bytes)
    }

    /// The slot `handle` is the address of, if it is one: inside the reservation and on a
    /// slot boundary (whether it is in use is for the owner to tell from its contents).
    #[inline]
    pub fn slot(&self, handle: u64) -> Option<*mut u8> {
        let offset = handle.wrapping_sub(self.base as u64);
        (offset < self.slots * self.slot_bytes && offset & (self.slot_bytes - 1) == 0)
            .then_some(handle as *mut u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn aligned_addresses_spread_over_low_and_high_bits() {
        let build = BuildHasherDefault::<AddressHasher>::default();
        // Heap objects 64 bytes apart, as signals are.
        let hashes: Vec<u64> = (0..64u64)
            .map(|n| build.hash_one(0x5555_0000_0000u64 + 64 * n))
            .collect();
        let low: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 63).collect();
        let high: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(
            low.len() > 32 && high.len() > 32,
            "{} {}",
            low.len(),
            high.len()
        );
    }
}
