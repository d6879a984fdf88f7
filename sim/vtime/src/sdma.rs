//! SDMA engines: each a timeline of copies, one copy at a time.

use crate::DeviceModel;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyTiming {
    pub start_ns: u64,
    pub end_ns: u64,
    pub engine: u32,
}

/// The copy engines of one device.
#[derive(Clone, Debug)]
pub struct Sdma {
    model: &'static DeviceModel,
    /// Per engine, disjoint busy intervals sorted by start.
    engines: Vec<Vec<(u64, u64)>>,
}

impl Sdma {
    pub fn new(model: &'static DeviceModel) -> Sdma {
        Sdma {
            model,
            engines: vec![Vec::new(); model.sdma.engines.max(1) as usize],
        }
    }

    pub fn engines(&self) -> u32 {
        self.engines.len() as u32
    }

    /// How long one copy keeps an engine: the fixed latency, then the bytes at the
    /// direction's rate.
    pub fn duration_ns(&self, bytes: u64, dir: Direction) -> u64 {
        let s = &self.model.sdma;
        let rate = match dir {
            Direction::HostToDevice => s.h2d_mb_per_s,
            Direction::DeviceToHost => s.d2h_mb_per_s,
            Direction::DeviceToDevice => s.d2d_mb_per_s,
            Direction::HostToHost => s.h2h_mb_per_s,
        };
        let transfer = (bytes as u128 * 1000).div_ceil(rate.max(1) as u128);
        s.copy_latency_ns
            .saturating_add(transfer.min(u64::MAX as u128) as u64)
            .max(1)
    }

    /// Times a copy that may start at `ready_ns` on `engine` (taken modulo the engine
    /// count), or with `None` on the engine that can start it first (the lowest index on a
    /// tie). Copies placed by earlier calls keep their engine time; a copy placed later but
    /// ready earlier goes into a gap long enough for it.
    pub fn copy(
        &mut self,
        ready_ns: u64,
        bytes: u64,
        dir: Direction,
        engine: Option<u32>,
    ) -> CopyTiming {
        let d = self.duration_ns(bytes, dir);
        let n = self.engines.len() as u32;
        let (engine, start) = match engine {
            Some(e) => (
                e % n,
                earliest_gap(&self.engines[(e % n) as usize], ready_ns, d),
            ),
            None => (0..n)
                .map(|e| (e, earliest_gap(&self.engines[e as usize], ready_ns, d)))
                .min_by_key(|&(e, s)| (s, e))
                .unwrap_or((0, ready_ns)),
        };
        let end = start.saturating_add(d);
        let timeline = &mut self.engines[engine as usize];
        let pos = timeline.partition_point(|&(s, _)| s < start);
        match pos.checked_sub(1).map(|p| &mut timeline[p]) {
            // Back-to-back copies on one engine become one interval.
            Some(prev) if prev.1 == start => prev.1 = end,
            _ => timeline.insert(pos, (start, end)),
        }
        CopyTiming {
            start_ns: start,
            end_ns: end,
            engine,
        }
    }

    /// Whether `engine` (taken modulo the engine count) is copying at `ns`.
    pub fn busy_at(&self, engine: u32, ns: u64) -> bool {
        let n = self.engines.len() as u32;
        self.engines[(engine % n) as usize]
            .iter()
            .any(|&(start, end)| start <= ns && ns < end)
    }

    /// Forgets copies that ended at or before `ns` (see [`crate::Gpu::retire_before`]).
    pub fn retire_before(&mut self, ns: u64) {
        for timeline in &mut self.engines {
            let k = timeline.partition_point(|&(_, e)| e <= ns);
            timeline.drain(..k);
        }
    }
}

fn earliest_gap(timeline: &[(u64, u64)], ready: u64, d: u64) -> u64 {
    let mut t = ready;
    let first = timeline.partition_point(|&(_, e)| e <= t);
    for &(s, e) in &timeline[first..] {
        if t.saturating_add(d) <= s {
            break;
        }
        t = t.max(e);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MI250X_GCD, MI300X};

    #[test]
    fn bandwidth_and_latency() {
        let mut s = Sdma::new(&MI300X);
        // 51 GB/s: 51 MB take 1 ms, plus 2 us of latency.
        let t = s.copy(0, 51_000_000, Direction::HostToDevice, None);
        assert_eq!(
            t,
            CopyTiming {
                start_ns: 0,
                end_ns: 1_002_000,
                engine: 0
            }
        );
        // A small copy is all latency.
        assert_eq!(s.duration_ns(4, Direction::DeviceToHost), 2_001);
        // MI250X's PCIe 4 link is half as fast.
        let g = Sdma::new(&MI250X_GCD);
        assert_eq!(
            g.duration_ns(25_000_000, Direction::HostToDevice),
            1_002_000
        );
    }

    #[test]
    fn engine_choice_and_queueing() {
        let mut s = Sdma::new(&MI300X);
        let d = s.duration_ns(1 << 20, Direction::DeviceToDevice);
        let a = s.copy(100, 1 << 20, Direction::DeviceToDevice, None);
        let b = s.copy(100, 1 << 20, Direction::DeviceToDevice, None);
        let c = s.copy(100, 1 << 20, Direction::DeviceToDevice, None);
        assert_eq!((a.engine, a.start_ns), (0, 100));
        assert_eq!((b.engine, b.start_ns), (1, 100));
        // Both busy: the first to free is engine 0 (tie broken by index).
        assert_eq!((c.engine, c.start_ns, c.end_ns), (0, 100 + d, 100 + 2 * d));
        // A named engine waits for itself even when the other is idle; 7 wraps to 1.
        let e = s.copy(100, 1 << 20, Direction::DeviceToDevice, Some(7));
        assert_eq!((e.engine, e.start_ns), (1, 100 + d));
    }

    #[test]
    fn backfill_and_retire() {
        let mut s = Sdma::new(&MI300X);
        let late = s.copy(1_000_000, 0, Direction::HostToDevice, Some(0));
        // Placed after, ready before, short enough for the gap before it.
        let early = s.copy(0, 0, Direction::HostToDevice, Some(0));
        assert_eq!((early.start_ns, early.end_ns), (0, 2_000));
        // Too long for the gap: after the late copy.
        let long = s.copy(0, 51_000_000, Direction::HostToDevice, Some(0));
        assert_eq!(long.start_ns, late.end_ns);
        s.retire_before(u64::MAX);
        assert!(s.engines.iter().all(Vec::is_empty));
        // Zero rates and huge sizes do not panic.
        assert!(
            s.copy(u64::MAX, u64::MAX, Direction::HostToHost, None)
                .end_ns
                == u64::MAX
        );
    }
}
