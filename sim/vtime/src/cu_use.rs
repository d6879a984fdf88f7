//! Which compute units had work when, for traces: the union over dispatches of each CU's
//! busy intervals ([`CuBusy`]), kept merged per CU, and read back as the number of CUs in
//! use over time.

use crate::gpu::CuBusy;

/// Intervals kept over all CUs before recording stops (a long run with gaps between its
/// dispatches adds one per CU each time); 16 bytes each.
pub const MAX_INTERVALS: usize = 1 << 20;

#[derive(Clone, Debug, Default)]
pub struct CuUse {
    /// Per CU, disjoint busy intervals `[start, end)` sorted by start.
    cus: Vec<Vec<(u64, u64)>>,
    intervals: usize,
    /// Recording stopped at [`MAX_INTERVALS`]: what is kept is the start of the run.
    pub truncated: bool,
}

impl CuUse {
    /// Adds one placement's CUs (`Placement::cu_busy`).
    pub fn record(&mut self, busy: &[CuBusy]) {
        for b in busy.iter().filter(|b| b.end_ns > b.start_ns) {
            if self.intervals >= MAX_INTERVALS {
                self.truncated = true;
                return;
            }
            let cu = b.cu as usize;
            if self.cus.len() <= cu {
                self.cus.resize_with(cu + 1, Vec::new);
            }
            let list = &mut self.cus[cu];
            let before = list.len();
            insert_merged(list, (b.start_ns, b.end_ns));
            self.intervals = self.intervals + list.len() - before;
        }
    }

    /// The number of CUs with work, as `(time, CUs)` steps in time order: each holds until
    /// the next; the last is 0.
    pub fn samples(&self) -> Vec<(u64, u32)> {
        let mut edges: Vec<(u64, i32)> = self
            .cus
            .iter()
            .flatten()
            .flat_map(|&(s, e)| [(s, 1), (e, -1)])
            .collect();
        edges.sort_unstable();
        let mut out: Vec<(u64, u32)> = Vec::new();
        let mut busy = 0i64;
        for (i, &(at, delta)) in edges.iter().enumerate() {
            busy += i64::from(delta);
            // One step per time, after all of its edges.
            if edges.get(i + 1).is_some_and(|n| n.0 == at) {
                continue;
            }
            let cus = busy.max(0) as u32;
            if out.last().is_none_or(|l| l.1 != cus) {
                out.push((at, cus));
            }
        }
        out
    }
}

/// Inserts `[start, end)` into sorted disjoint `list`, merging what it overlaps or touches.
fn insert_merged(list: &mut Vec<(u64, u64)>, (mut start, mut end): (u64, u64)) {
    // The first interval that ends at or after `start` (earlier ones cannot touch it).
    let from = list.partition_point(|&(_, e)| e < start);
    let mut to = from;
    while to < list.len() && list[to].0 <= end {
        start = start.min(list[to].0);
        end = end.max(list[to].1);
        to += 1;
    }
    list.splice(from..to, [(start, end)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(cu: u32, start_ns: u64, end_ns: u64) -> CuBusy {
        CuBusy {
            cu,
            start_ns,
            end_ns,
            workgroups: 1,
        }
    }

    #[test]
    fn cus_shared_by_two_dispatches_count_once() {
        let mut u = CuUse::default();
        u.record(&[busy(0, 10, 30), busy(1, 10, 20)]);
        // The second dispatch shares CU 0 with the first and adds CU 2.
        u.record(&[busy(0, 15, 40), busy(2, 25, 35)]);
        assert_eq!(
            u.samples(),
            vec![(10, 2), (20, 1), (25, 2), (35, 1), (40, 0)]
        );
    }

    #[test]
    fn back_to_back_work_on_a_cu_is_one_interval() {
        let mut u = CuUse::default();
        for i in 0..100 {
            u.record(&[busy(3, i * 10, i * 10 + 10)]);
        }
        assert_eq!(u.intervals, 1);
        assert_eq!(u.samples(), vec![(0, 1), (1000, 0)]);
    }

    #[test]
    fn recording_stops_at_its_bound() {
        let mut u = CuUse::default();
        for i in 0..(MAX_INTERVALS as u64 + 10) {
            u.record(&[busy(0, i * 10, i * 10 + 5)]);
        }
        assert!(u.truncated);
        assert_eq!(u.intervals, MAX_INTERVALS);
    }
}
