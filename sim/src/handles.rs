//! Maps keyed by the handles hsasim gives out (object addresses: signals, queues).
//!
//! The signal and queue-index entry points look a handle up on every call, and the clients
//! that make those calls (a doorbell per packet, a signal read per poll) are the runtime's
//! own, not an adversary: SipHash's flood resistance buys nothing there and costs more than
//! the rest of the call.

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
