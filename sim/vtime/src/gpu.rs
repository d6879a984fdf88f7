//! Workgroups on compute units: the dispatcher's placement and the time each workgroup takes.
//!
//! Each CU is cut into `simds × max_waves_per_simd` lanes (its wave slots). A dispatch whose
//! occupancy is `n` workgroups per CU uses `n` slots per CU of `lanes / n` lanes each, so a
//! dispatch limited by registers or LDS takes its real share of the CU from everything else
//! placed there. A lane keeps the intervals it is busy, sorted, so a dispatch placed later but
//! earlier in time (backfill) fits into what is left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{occupancy, DeviceModel, DispatchShape, Occupancy, WorkgroupCost};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Busy {
    start: u64,
    end: u64,
    /// The placement it belongs to, so a dispatch does not count itself as a neighbour.
    id: u64,
    /// Waves of that workgroup per lane, ×1000 (a register-heavy workgroup holds more lanes
    /// than it has waves, and only waves compete for issue).
    milliwaves: u32,
}

#[derive(Clone, Debug, Default)]
struct Cu {
    lanes: Vec<Vec<Busy>>,
    max_end: u64,
}

#[derive(Clone, Copy, Debug)]
struct BandwidthUse {
    start: u64,
    end: u64,
    mb_per_s: u64,
}

/// One CU's part in a placement, for traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuBusy {
    pub cu: u32,
    /// From its first workgroup's start to its last workgroup's end.
    pub start_ns: u64,
    pub end_ns: u64,
    pub workgroups: u64,
}

/// Where and when a dispatch ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Sequence number of the call on its [`Gpu`].
    pub id: u64,
    /// The first workgroup's start (the `ready_ns` given when there are none).
    pub start_ns: u64,
    /// The last workgroup's end.
    pub end_ns: u64,
    pub cus_used: u32,
    pub workgroups: u64,
    pub occupancy: Occupancy,
    /// Most workgroups were timed by the bandwidth share rather than by their instructions.
    pub memory_bound: bool,
    pub bytes: u64,
    /// Sorted by CU index.
    pub cu_busy: Vec<CuBusy>,
}

impl Placement {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// The compute units of one modelled device, shared by all its queues.
#[derive(Clone, Debug)]
pub struct Gpu {
    model: &'static DeviceModel,
    cus: Vec<Cu>,
    bandwidth: Vec<BandwidthUse>,
    next_id: u64,
}

/// One workgroup's cost, unpacked from a (possibly bucketed) [`WorkgroupCost`].
#[derive(Clone, Copy, Debug)]
struct WgWork {
    waves: u32,
    cycles: u64,
    issue_per_wave: u64,
    bytes: u64,
}

/// The workgroups of `costs` one by one; an empty `costs` stands for `fallback` idle
/// workgroups of `waves` waves.
fn workgroups(
    costs: &[WorkgroupCost],
    fallback: u64,
    waves: u32,
) -> impl Iterator<Item = WgWork> + '_ {
    let idle = WgWork {
        waves,
        cycles: 0,
        issue_per_wave: 0,
        bytes: 0,
    };
    let listed = costs.iter().flat_map(|r| {
        // A record that never set its count is one workgroup.
        let n = r.workgroups.max(1) as u64;
        let waves = (r.waves as u64 / n).max(1) as u32;
        let per_wave = |x: u64| x / (r.waves.max(1) as u64);
        // A bucket keeps only its longest wave, which would make every workgroup in it as
        // slow as the slowest; its mean wave is the better guess for each.
        let cycles = if n == 1 {
            r.cycles_max
        } else {
            per_wave(r.cycles_sum)
        };
        let issue_per_wave = per_wave(r.issue_sum);
        let (share, extra) = (r.bytes / n, r.bytes % n);
        (0..n).map(move |i| WgWork {
            waves,
            cycles,
            issue_per_wave,
            bytes: share + u64::from(i < extra),
        })
    });
    let extra = if costs.is_empty() { fallback } else { 0 };
    listed.chain((0..extra).map(move |_| idle))
}

fn cu_allowed(mask: Option<&[u32]>, cu: u32) -> bool {
    match mask {
        None => true,
        Some(words) => words
            .get((cu / 32) as usize)
            .is_some_and(|w| w & (1 << (cu % 32)) != 0),
    }
}

/// The earliest time from `t` at which every lane is free for `d`.
fn earliest_free(lanes: &[Vec<Busy>], mut t: u64, d: u64) -> u64 {
    loop {
        let mut moved = false;
        for lane in lanes {
            // Intervals are disjoint and sorted, so their ends are sorted too.
            let i = lane.partition_point(|b| b.end <= t);
            if let Some(b) = lane.get(i) {
                if b.start < t.saturating_add(d) {
                    t = b.end;
                    moved = true;
                }
            }
        }
        if !moved {
            return t;
        }
    }
}

fn insert(lane: &mut Vec<Busy>, b: Busy) {
    let pos = lane.partition_point(|x| x.start < b.start);
    if pos > 0 {
        let prev = &mut lane[pos - 1];
        // Back-to-back workgroups of one dispatch on one slot: one interval, so that
        // history grows with dispatches, not with workgroups.
        if prev.end == b.start && prev.id == b.id && prev.milliwaves == b.milliwaves {
            prev.end = b.end;
            return;
        }
    }
    lane.insert(pos, b);
}

impl Gpu {
    pub fn new(model: &'static DeviceModel) -> Gpu {
        let c = &model.compute;
        let lanes = (c.simds_per_cu.max(1) * c.max_waves_per_simd.max(1)) as usize;
        let cu = Cu {
            lanes: vec![Vec::new(); lanes],
            max_end: 0,
        };
        Gpu {
            model,
            cus: vec![cu; c.compute_units.max(1) as usize],
            bandwidth: Vec::new(),
            next_id: 0,
        }
    }

    pub fn model(&self) -> &'static DeviceModel {
        self.model
    }

    /// The end of the last work placed on any CU.
    pub fn busy_until(&self) -> u64 {
        self.cus.iter().map(|c| c.max_end).max().unwrap_or(0)
    }

    /// Busy intervals kept, all CUs together (what [`Gpu::retire_before`] bounds).
    pub fn history_len(&self) -> usize {
        self.cus
            .iter()
            .flat_map(|c| &c.lanes)
            .map(Vec::len)
            .sum::<usize>()
            + self.bandwidth.len()
    }

    /// Forgets work that ended at or before `ns`. A later [`Gpu::place`] with a `ready_ns`
    /// before `ns` would see those CUs idle: call it with the earliest time any queue can
    /// still place work at.
    pub fn retire_before(&mut self, ns: u64) {
        for cu in &mut self.cus {
            for lane in &mut cu.lanes {
                let k = lane.partition_point(|b| b.end <= ns);
                lane.drain(..k);
            }
        }
        self.bandwidth.retain(|b| b.end > ns);
    }

    /// Places a dispatch that may start at `ready_ns` (its packet has been processed):
    /// its workgroups go, in order, to the CUs of `cu_mask` (bit i = CU i; `None`, or a mask
    /// naming none of this device's CUs, = all), each to the slot that frees first, taking
    /// XCDs in turn as the hardware does. Work placed by earlier calls keeps its CUs and
    /// bandwidth; this call only uses what is left.
    pub fn place(
        &mut self,
        ready_ns: u64,
        shape: &DispatchShape,
        costs: &[WorkgroupCost],
        cu_mask: Option<&[u32]>,
    ) -> Placement {
        let model = self.model;
        let c = &model.compute;
        let occ = occupancy(model, shape);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);

        let total: u64 = if costs.is_empty() {
            shape.workgroups
        } else {
            costs
                .iter()
                .map(|r| r.workgroups.max(1) as u64)
                .fold(0, u64::saturating_add)
        };
        let bytes_total = costs.iter().map(|r| r.bytes).fold(0, u64::saturating_add);
        let mut placement = Placement {
            id,
            start_ns: ready_ns,
            end_ns: ready_ns,
            cus_used: 0,
            workgroups: total,
            occupancy: occ,
            memory_bound: false,
            bytes: bytes_total,
            cu_busy: Vec::new(),
        };
        if total == 0 {
            return placement;
        }

        let lanes_per_cu = self.cus[0].lanes.len();
        let slots = (occ.workgroups_per_cu.max(1) as usize).min(lanes_per_cu);
        let lanes_per_slot = lanes_per_cu / slots;
        let waves_wg = shape.waves_per_workgroup.max(1);
        let simds = c.simds_per_cu.max(1) as u64;

        let cu_count = self.cus.len() as u32;
        let mut allowed: Vec<u32> = (0..cu_count).filter(|&i| cu_allowed(cu_mask, i)).collect();
        if allowed.is_empty() {
            allowed = (0..cu_count).collect();
        }
        let xcds = c.xcds.clamp(1, cu_count);
        let per_xcd = cu_count.div_ceil(xcds);
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); xcds as usize];
        for &cu in &allowed {
            groups[((cu / per_xcd).min(xcds - 1)) as usize].push(cu);
        }
        groups.retain(|g| !g.is_empty());

        // Waves of this dispatch per SIMD in steady state: what its own workgroups share
        // issue with. Taken for the whole dispatch so the first workgroup on a CU is not
        // timed as if it stayed alone there.
        let resident = (slots as u64).min(total.div_ceil(allowed.len() as u64));
        let own_milli = resident * waves_wg as u64 * 1000 / simds;

        // The HBM share: what dispatches already running at `ready_ns` leave, but never less
        // than an equal split with them.
        let effective = model.effective_hbm_mb_per_s();
        let (mut foreign_bw, mut sharers) = (0u64, 0u64);
        for b in self
            .bandwidth
            .iter()
            .filter(|b| b.start <= ready_ns && ready_ns < b.end)
        {
            foreign_bw = foreign_bw.saturating_add(b.mb_per_s);
            sharers += 1;
        }
        let available = effective
            .saturating_sub(foreign_bw)
            .max(effective / (sharers + 1))
            .max(1);
        let concurrency = (slots as u64 * allowed.len() as u64).min(total).max(1);

        let launch_ps = c.wave_launch_cycles as u128 * waves_wg as u128 * 1_000_000
            / c.shader_clock_mhz.max(1) as u128;
        let foreign_end: Vec<u64> = self.cus.iter().map(|cu| cu.max_end).collect();

        let mut fresh: Vec<(usize, usize)> = vec![(0, 0); groups.len()];
        let mut heaps: Vec<BinaryHeap<Reverse<(u64, u32, u32)>>> =
            vec![BinaryHeap::new(); groups.len()];
        let mut per_cu: Vec<Option<CuBusy>> = vec![None; self.cus.len()];
        let (mut start_min, mut end_max, mut mem_bound) = (u64::MAX, 0u64, 0u64);

        for (i, wg) in workgroups(costs, shape.workgroups, waves_wg).enumerate() {
            let g = i % groups.len();
            let launch = (i / groups.len()) as u128 * launch_ps / 1000;
            let earliest = ready_ns.saturating_add(launch.min(u64::MAX as u128) as u64);
            loop {
                // Untouched slots are free at `ready_ns`, before any slot a workgroup has used.
                let (t, j, cu) = {
                    let (fj, fi) = &mut fresh[g];
                    if *fj < slots {
                        let key = (ready_ns, *fj as u32, groups[g][*fi]);
                        *fi += 1;
                        if *fi == groups[g].len() {
                            (*fj, *fi) = (*fj + 1, 0);
                        }
                        key
                    } else if let Some(Reverse(key)) = heaps[g].pop() {
                        key
                    } else {
                        // Unreachable: every slot taken is put back. Stop rather than spin.
                        (u64::MAX, 0, groups[g][0])
                    }
                };
                let start = t.max(earliest);
                let unit = &self.cus[cu as usize];
                let neighbours = start < foreign_end[cu as usize];
                let foreign_milli: u64 = if neighbours {
                    unit.lanes
                        .iter()
                        .filter_map(|lane| {
                            let b = lane.get(lane.partition_point(|b| b.end <= start))?;
                            (b.start <= start && b.id != id).then_some(b.milliwaves as u64)
                        })
                        .sum()
                } else {
                    0
                };
                let k_milli = (own_milli + foreign_milli / simds).max(1000);
                let issue = (wg.issue_per_wave as u128 * k_milli as u128 / 1000)
                    .min(u64::MAX as u128) as u64;
                let compute_ns = model.cycles_to_ns(wg.cycles.max(issue));
                let mem_ns = (wg.bytes as u128 * concurrency as u128 * 1000 / available as u128)
                    .min(u64::MAX as u128) as u64;
                let d = compute_ns.max(mem_ns).max(1);
                let first = j as usize * lanes_per_slot;
                let lanes = first..first + lanes_per_slot;
                if neighbours && t != u64::MAX {
                    let free = earliest_free(&unit.lanes[lanes.clone()], start, d);
                    if free != start {
                        heaps[g].push(Reverse((free, j, cu)));
                        continue;
                    }
                }
                let end = start.saturating_add(d);
                let milliwaves =
                    (wg.waves as u64 * 1000 / lanes_per_slot as u64).min(u32::MAX as u64) as u32;
                let unit = &mut self.cus[cu as usize];
                for lane in &mut unit.lanes[lanes] {
                    insert(
                        lane,
                        Busy {
                            start,
                            end,
                            id,
                            milliwaves,
                        },
                    );
                }
                unit.max_end = unit.max_end.max(end);
                heaps[g].push(Reverse((end, j, cu)));
                let entry = per_cu[cu as usize].get_or_insert(CuBusy {
                    cu,
                    start_ns: start,
                    end_ns: end,
                    workgroups: 0,
                });
                entry.start_ns = entry.start_ns.min(start);
                entry.end_ns = entry.end_ns.max(end);
                entry.workgroups += 1;
                start_min = start_min.min(start);
                end_max = end_max.max(end);
                mem_bound += u64::from(mem_ns > compute_ns);
                break;
            }
        }

        placement.start_ns = start_min.min(end_max);
        placement.end_ns = end_max;
        placement.cu_busy = per_cu.into_iter().flatten().collect();
        placement.cus_used = placement.cu_busy.len() as u32;
        placement.memory_bound = mem_bound * 2 > total;
        let span = placement.duration_ns().max(1);
        if bytes_total > 0 {
            let rate = (bytes_total as u128 * 1000 / span as u128).min(u64::MAX as u128) as u64;
            self.bandwidth.push(BandwidthUse {
                start: placement.start_ns,
                end: placement.end_ns,
                mb_per_s: rate,
            });
        }
        placement
    }
}
