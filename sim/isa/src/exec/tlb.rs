//! Translations kept across accesses: a few spans of guest addresses with the offset to
//! their host bytes, tagged with the value of the memory's generation counter
//! ([`GuestMemory::generation`]) they were made at. An access inside a span whose tag equals
//! the counter's current value reuses the offset; anything else asks the memory again
//! ([`GuestMemory::translate_span`]). hsasim's registry answers under a lock that every
//! worker thread would otherwise take on every access.
//!
//! Why a kept span is never used after its memory went away. The memory changes its map
//! first and moves the counter after (both inside its write lock), and hsasim unmaps host
//! pages only after that; a fill reads the counter *before* it asks for the span. So:
//! - A fill whose lookup saw the map before a change read the counter before the change
//!   moved it (its read-locked lookup happened before the writer's critical section), so
//!   its tag is older than the counter from then on and the span is never used again.
//! - A check that reads the counter's current value (an acquire load, ordered before the
//!   access it guards) and finds the tag equal has seen no change published since the fill:
//!   the span is what a fresh lookup at that moment would answer. A change that lands
//!   between the check and the access races with the access exactly as it would with a
//!   fresh lookup (on hardware too, freeing memory a running kernel uses is the program's
//!   race); once the check sees the moved counter, the old span is dead.
//!
//! Kept per worker and emptied at the start of every dispatch: two dispatches may see the
//! same registry through different agents (other GPUs' memory is reachable or not), so a
//! span is only valid for the `GuestMemory` that gave it.

use crate::api::{GuestMemory, Span};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Spans kept: a kernel's hot loop rarely touches more buffers than this.
const ENTRIES: usize = 8;

/// A span no access matches.
const EMPTY: Span = Span {
    start: u64::MAX,
    end: 0,
    offset: 0,
};

/// The kept translations of one worker (cells: handlers translate through `&Ctx`). All
/// kept spans carry one tag, the counter's value they were made at: when the counter moves,
/// every kept span is dead at once, so the first fill after it forgets them all, and a
/// look-up compares the tag once rather than per span.
pub struct Tlb {
    spans: [Cell<Span>; ENTRIES],
    generation: Cell<u64>,
    /// The entry the next fill replaces (round robin).
    next: Cell<usize>,
}

impl Default for Tlb {
    fn default() -> Tlb {
        Tlb {
            spans: std::array::from_fn(|_| Cell::new(EMPTY)),
            generation: Cell::new(0),
            next: Cell::new(0),
        }
    }
}

impl Tlb {
    /// Forgets every span (a new dispatch, maybe through other memory).
    pub fn clear(&self) {
        for e in &self.spans {
            e.set(EMPTY);
        }
    }

    /// The host address of `[address, address + len)`, as `mem.translate` would give it,
    /// where `generation` is `mem.generation()`.
    #[inline(always)]
    pub fn translate(
        &self,
        mem: &dyn GuestMemory,
        generation: Option<&AtomicU64>,
        address: u64,
        len: u64,
    ) -> Option<u64> {
        let Some(counter) = generation else {
            return mem.translate(address, len);
        };
        let end = address.checked_add(len)?;
        let now = counter.load(Ordering::Acquire);
        if self.generation.get() == now {
            let holds = |s: Span| address >= s.start && end <= s.end;
            for e in &self.spans {
                let s = e.get();
                if holds(s) {
                    return Some(address.wrapping_add(s.offset));
                }
            }
        }
        self.fill(mem, now, address, len)
    }

    /// Asks the memory and keeps the answer, tagged with `now`: the counter's value read
    /// before asking (see the module comment).
    #[cold]
    #[inline(never)]
    fn fill(&self, mem: &dyn GuestMemory, now: u64, address: u64, len: u64) -> Option<u64> {
        if self.generation.get() != now {
            // Spans made at another value of the counter are never used again.
            self.clear();
            self.generation.set(now);
        }
        let span = mem.translate_span(address, len)?;
        let end = address.checked_add(len)?;
        if address < span.start || end > span.end {
            // A span that does not hold the access is the memory's bug; do not keep it.
            return mem.translate(address, len);
        }
        let k = self.next.get();
        self.spans[k].set(span);
        self.next.set((k + 1) % ENTRIES);
        Some(address.wrapping_add(span.offset))
    }
}
