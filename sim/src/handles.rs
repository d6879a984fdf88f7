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
///
/// Memory goes back too: once pages whose slots are all free are many and free slots
/// outnumber used ones, those pages are given back to the kernel (`MADV_DONTNEED`: they stay
/// mapped, and read as zeros until written again), so a million signals, once destroyed, do
/// not keep 64 MiB resident. The bookkeeping is a bit per slot and a few bytes per page,
/// bounded by the reservation, never a list as long as the slots ever freed.
pub struct Slab {
    base: *mut u8,
    slot_bytes: u64,
    slots: u64,
    /// Bytes given back at a time: a page, or a slot when slots are larger.
    unit_bytes: u64,
    /// Slots per unit (at most 64: one bit each in a `u64`).
    per_unit: u64,
    units: Mutex<Units>,
}

/// Which slots of each unit touched so far are in use.
#[derive(Default)]
struct Units {
    /// Per unit: a bit per slot in use.
    used: Vec<u64>,
    /// Per unit: [`OPEN`], [`EMPTIED`].
    flags: Vec<u8>,
    /// Units with a free slot, each once; slots are taken from the last.
    open: Vec<u32>,
    /// Units whose slots all became free since memory was last given back, each once.
    emptied: Vec<u32>,
    /// Slots in use.
    live: u64,
    /// Units given back so far.
    #[cfg(test)]
    given_back: u64,
}

/// The unit is listed in `open`.
const OPEN: u8 = 1;
/// The unit is listed in `emptied`.
const EMPTIED: u8 = 2;
/// Emptied units gathered before any is given back: one batch of system calls, not one per
/// freed slot of a unit that a client keeps emptying and filling again.
const GIVE_BACK_BATCH: usize = 16;

// SAFETY: `base` is only used for slot arithmetic and `madvise`; what lives in a slot is
// shared through types of its owner's that are Sync.
unsafe impl Send for Slab {}
// SAFETY: as above.
unsafe impl Sync for Slab {}

impl Slab {
    /// Reserves `slots` slots of `slot_bytes` (a power of two of at least 1/64 of a page;
    /// slots are aligned to it up to a page). `None` if the address space cannot be had or
    /// the slots are smaller.
    pub fn new(slot_bytes: u64, slots: u64) -> Option<Slab> {
        let page = crate::host_map::PAGE;
        let unit_bytes = slot_bytes.max(page);
        let per_unit = unit_bytes / slot_bytes;
        if !slot_bytes.is_power_of_two() || per_unit > 64 {
            return None;
        }
        let base = crate::host_map::map_anon(slot_bytes.checked_mul(slots)?).ok()?;
        Some(Slab {
            base,
            slot_bytes,
            slots,
            unit_bytes,
            per_unit,
            units: Mutex::new(Units::default()),
        })
    }

    /// The bits of unit `unit`'s slots that lie inside the reservation.
    fn valid(&self, unit: u64) -> u64 {
        let n = (self.slots - unit * self.per_unit).min(self.per_unit);
        if n == 64 {
            u64::MAX
        } else {
            (1u64 << n) - 1
        }
    }

    /// A free slot (zeroed if never used or given back; as its last user left it otherwise),
    /// or `None` when all are in use.
    pub fn alloc(&self) -> Option<*mut u8> {
        let mut units = self.units.lock();
        let unit = match units.open.last() {
            Some(&unit) => u64::from(unit),
            None => {
                let unit = units.used.len() as u64;
                if unit * self.per_unit >= self.slots {
                    return None;
                }
                units.used.push(0);
                units.flags.push(OPEN);
                units.open.push(unit as u32);
                unit
            }
        };
        let u = unit as usize;
        let valid = self.valid(unit);
        let bit = (!units.used[u] & valid).trailing_zeros() as u64;
        units.used[u] |= 1 << bit;
        units.live += 1;
        if units.used[u] == valid {
            units.open.pop();
            units.flags[u] &= !OPEN;
        }
        let index = unit * self.per_unit + bit;
        // SAFETY: `index` < `slots`, so the slot lies inside the reservation.
        Some(unsafe { self.base.add((index * self.slot_bytes) as usize) })
    }

    /// Returns the slot at `slot` (from [`Slab::alloc`]) for reuse.
    pub fn release(&self, slot: *mut u8) {
        let index = (slot as u64 - self.base as u64) / self.slot_bytes;
        let (unit, bit) = (index / self.per_unit, index % self.per_unit);
        let u = unit as usize;
        let mut units = self.units.lock();
        units.used[u] &= !(1 << bit);
        units.live -= 1;
        if units.flags[u] & OPEN == 0 {
            units.flags[u] |= OPEN;
            units.open.push(unit as u32);
        }
        if units.used[u] == 0 && units.flags[u] & EMPTIED == 0 {
            units.flags[u] |= EMPTIED;
            units.emptied.push(unit as u32);
        }
        let free = units.used.len() as u64 * self.per_unit - units.live;
        if units.emptied.len() >= GIVE_BACK_BATCH && free > units.live {
            self.give_back(&mut units);
        }
    }

    /// Gives the memory of the emptied units that are still empty back to the kernel. Under
    /// the lock: no slot of such a unit can be handed out (and written) meanwhile.
    fn give_back(&self, units: &mut Units) {
        let mut emptied = std::mem::take(&mut units.emptied);
        emptied.sort_unstable();
        let mut run: Option<(u64, u64)> = None;
        let advise = |start: u64, count: u64| {
            // SAFETY: whole units of the reservation whose slots are all free: nothing lives
            // there, and a stale handle reads zeros afterwards (the mapping stays).
            unsafe {
                libc::madvise(
                    self.base.add((start * self.unit_bytes) as usize).cast(),
                    (count * self.unit_bytes) as usize,
                    libc::MADV_DONTNEED,
                )
            };
        };
        for &unit in &emptied {
            let u = unit as usize;
            units.flags[u] &= !EMPTIED;
            if units.used[u] != 0 {
                continue;
            }
            #[cfg(test)]
            {
                units.given_back += 1;
            }
            let unit = u64::from(unit);
            run = match run {
                Some((start, count)) if start + count == unit => Some((start, count + 1)),
                Some((start, count)) => {
                    advise(start, count);
                    Some((unit, 1))
                }
                None => Some((unit, 1)),
            };
        }
        if let Some((start, count)) = run {
            advise(start, count);
        }
        emptied.clear();
        units.emptied = emptied;
        // The lists are bounded by the units touched; the emptied list's room is kept for
        // the next batch only if it is small.
        if units.emptied.capacity() > 4 * GIVE_BACK_BATCH {
            units.emptied.shrink_to(GIVE_BACK_BATCH);
        }
    }

    /// Units given back to the kernel so far.
    #[cfg(test)]
    fn given_back(&self) -> u64 {
        self.units.lock().given_back
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

    /// Whether the page at `addr` is resident.
    fn resident(addr: *mut u8) -> bool {
        let mut vec = [0u8; 1];
        // SAFETY: a page-aligned address of a mapping; mincore writes one byte.
        let rc = unsafe { libc::mincore(addr.cast(), 1, vec.as_mut_ptr()) };
        assert_eq!(rc, 0);
        vec[0] & 1 == 1
    }

    #[test]
    fn slots_are_reused_and_never_handed_out_twice() {
        let slab = Slab::new(64, 1000).unwrap();
        let a: Vec<*mut u8> = (0..1000).map(|_| slab.alloc().unwrap()).collect();
        assert!(slab.alloc().is_none(), "1000 of 1000 in use");
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert_eq!(distinct.len(), 1000);
        for &p in a.iter().step_by(3) {
            slab.release(p);
        }
        let again: std::collections::HashSet<_> = (0..334).map(|_| slab.alloc().unwrap()).collect();
        let freed: std::collections::HashSet<_> = a.iter().step_by(3).collect();
        assert_eq!(
            again.iter().collect::<std::collections::HashSet<_>>(),
            freed
        );
        assert!(slab.alloc().is_none());
    }

    #[test]
    fn emptied_pages_go_back_to_the_kernel() {
        let slab = Slab::new(64, 1 << 16).unwrap();
        let slots: Vec<*mut u8> = (0..1 << 16).map(|_| slab.alloc().unwrap()).collect();
        for &p in &slots {
            // SAFETY: a slot of the slab, ours.
            unsafe { p.write(1) };
        }
        let page = crate::host_map::PAGE as usize;
        let per_page = page / 64;
        assert!(resident(slots[0]));
        for &p in &slots {
            slab.release(p);
        }
        // All but the last batch's worth went back (each batch when free outnumber used).
        let pages = slots.len() / per_page;
        assert!(
            slab.given_back() as usize >= pages - GIVE_BACK_BATCH,
            "{} of {pages} pages given back",
            slab.given_back()
        );
        let still = slots
            .iter()
            .step_by(per_page)
            .filter(|&&p| resident(p))
            .count();
        assert!(still <= GIVE_BACK_BATCH, "{still} pages still resident");
        // A slot of a page given back reads as zeros and works again.
        let p = slab.alloc().unwrap();
        // SAFETY: a slot of the slab, ours.
        unsafe {
            p.write(7);
            assert_eq!(p.read(), 7);
        }
    }

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
