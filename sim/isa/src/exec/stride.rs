//! Prefetching for loads that stride through memory. Kept per workgroup in the handlers'
//! context ([`super::Ctx`]); the global load path reports its back-to-back loads here.

/// Where recent back-to-back loads read, by instruction and wave: a loop that strides
/// through memory (a grid-stride loop reads a wave's 256 bytes once per grid's worth,
/// across pages the host's own prefetchers do not follow) gets its next reads prefetched,
/// so the host's memory latency overlaps the instructions in between.
#[derive(Default)]
pub struct Strides {
    /// (instruction address ^ wave id << 56, host address of lane 0), direct-mapped.
    last: [(u64, u64); STRIDE_SLOTS],
}

const STRIDE_SLOTS: usize = 8;

/// How many strides ahead to prefetch: one loop trip of a grid-stride reduction takes well
/// under the host's memory latency, and the faster the interpreter runs a trip the further
/// ahead it must reach (on a 2-core host, one worker: 1 stride ahead 1,130, 4 ahead 1,670,
/// 8 ahead 1,480 M lane-instr/s; after loads lost about 150 host instructions each, on the
/// 16-core Xeon, best of 8 rounds: 4 ahead 1,462, 6 ahead 1,800, 8 ahead 1,632, 12 ahead
/// 1,775).
const AHEAD: u64 = 6;

impl Strides {
    /// Notes a back-to-back load of `bytes` at host address `host` by the instruction at
    /// `pc` of wave `wave`, and prefetches where the same stride leads [`AHEAD`] loads on.
    /// Prefetches never fault and change nothing a program can see, so a wrong guess (an
    /// address outside the guest's memory) costs only the hint.
    #[inline(always)]
    pub fn note(&mut self, pc: u64, wave: u32, host: u64, bytes: u64) {
        let key = pc ^ (wave as u64) << 56;
        let slot = &mut self.last[((pc >> 2) as usize ^ wave as usize) % STRIDE_SLOTS];
        if slot.0 == key {
            let stride = host.wrapping_sub(slot.1) as i64;
            // Beyond 4 KiB the host's prefetchers do not follow; below, they do.
            if stride.unsigned_abs() > 4096 && stride.unsigned_abs() < 1 << 30 {
                let ahead = host.wrapping_add((stride as u64).wrapping_mul(AHEAD));
                let mut line = 0;
                while line < bytes {
                    prefetch(ahead.wrapping_add(line));
                    line += 64;
                }
            }
        }
        *slot = (key, host);
    }
}

/// A hint to bring the host cache line at `host` in; never faults.
#[inline(always)]
fn prefetch(host: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address, and changes no
    // architectural state. SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            host as usize as *const i8,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = host;
}
