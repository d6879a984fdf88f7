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
    /// The placement that last committed here, and `max_end` before it did: what that
    /// placement sees of its neighbours without a per-call snapshot of every CU.
    last_id: Option<u64>,
    max_end_before_last: u64,
    /// Index of this CU's entry in the current placement's `cu_busy`.
    trace_index: usize,
    /// Intervals on all lanes, so that retiring skips idle CUs.
    kept: usize,
}

impl Cu {
    /// The end of the last work on this CU not belonging to placement `id`.
    fn foreign_end(&self, id: u64) -> u64 {
        if self.last_id == Some(id) {
            self.max_end_before_last
        } else {
            self.max_end
        }
    }
}

/// A CU mask resolved to the XCD groups the dispatcher walks, kept for the next call with the
/// same mask (queues keep their mask for many dispatches).
#[derive(Clone, Debug, Default)]
struct MaskGroups {
    mask: Option<Vec<u32>>,
    groups: Vec<Vec<u32>>,
    allowed: usize,
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
    mask_groups: MaskGroups,
}

/// One workgroup's cost, unpacked from a (possibly bucketed) [`WorkgroupCost`].
#[derive(Clone, Copy, Debug)]
struct WgWork {
    waves: u32,
    cycles: u64,
    issue_per_wave: u64,
    matrix_per_wave: u64,
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
        matrix_per_wave: 0,
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
        let matrix_per_wave = per_wave(r.matrix_sum);
        let (share, extra) = (r.bytes / n, r.bytes % n);
        (0..n).map(move |i| WgWork {
            waves,
            cycles,
            issue_per_wave,
            matrix_per_wave,
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

/// Intervals a lane keeps before one dispatch's gaps are merged away.
const MAX_GAPS_PER_LANE: usize = 16;

/// Records `b` on `lane`; false when it extended an interval already there.
fn insert(lane: &mut Vec<Busy>, b: Busy) -> bool {
    let lane_len = lane.len();
    let pos = lane.partition_point(|x| x.start < b.start);
    if pos > 0 {
        let prev = &mut lane[pos - 1];
        // Back-to-back workgroups of one dispatch on one slot: one interval, so that
        // history grows with dispatches, not with workgroups. Workgroups too short to keep
        // up with the launch rate leave gaps; past a few intervals per lane those gaps are
        // counted busy, which only denies later calls a backfill into nanosecond holes.
        let contiguous = prev.end == b.start || lane_len >= MAX_GAPS_PER_LANE;
        if contiguous && prev.id == b.id && prev.milliwaves == b.milliwaves && prev.end <= b.start {
            prev.end = b.end;
            return false;
        }
    }
    lane.insert(pos, b);
    true
}

impl Gpu {
    pub fn new(model: &'static DeviceModel) -> Gpu {
        let c = &model.compute;
        let lanes = (c.simds_per_cu.max(1) * c.max_waves_per_simd.max(1)) as usize;
        let cu = Cu {
            lanes: vec![Vec::new(); lanes],
            max_end: 0,
            last_id: None,
            max_end_before_last: 0,
            trace_index: 0,
            kept: 0,
        };
        Gpu {
            model,
            cus: vec![cu; c.compute_units.max(1) as usize],
            bandwidth: Vec::new(),
            next_id: 0,
            mask_groups: MaskGroups::default(),
        }
    }

    /// The allowed CUs of `mask`, by XCD, without the empty XCDs.
    fn resolve_mask(&mut self, mask: Option<&[u32]>) {
        if self.mask_groups.allowed > 0 && self.mask_groups.mask.as_deref() == mask {
            return;
        }
        let cu_count = self.cus.len() as u32;
        let mut allowed: Vec<u32> = (0..cu_count).filter(|&i| cu_allowed(mask, i)).collect();
        if allowed.is_empty() {
            allowed = (0..cu_count).collect();
        }
        // Mask bit i belongs to XCD i mod xcds: KFD spreads a queue's CU mask over the XCCs
        // that way (mqd_symmetrically_map_cu_mask steps by the XCC count).
        let xcds = self.model.compute.xcds.clamp(1, cu_count);
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); xcds as usize];
        for &cu in &allowed {
            groups[(cu % xcds) as usize].push(cu);
        }
        groups.retain(|g| !g.is_empty());
        self.mask_groups = MaskGroups {
            mask: mask.map(<[u32]>::to_vec),
            groups,
            allowed: allowed.len(),
        };
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
        for cu in self.cus.iter_mut().filter(|cu| cu.kept > 0) {
            if cu.max_end <= ns {
                cu.lanes.iter_mut().for_each(Vec::clear);
                cu.kept = 0;
                continue;
            }
            for lane in &mut cu.lanes {
                let k = lane.partition_point(|b| b.end <= ns);
                lane.drain(..k);
                cu.kept = cu.kept.saturating_sub(k);
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

        self.resolve_mask(cu_mask);
        let groups = std::mem::take(&mut self.mask_groups.groups);
        let allowed = self.mask_groups.allowed as u64;

        // The dispatch runs in rounds of up to `slots` workgroups on every allowed CU: what
        // one of its workgroups shares its SIMDs and the memory bandwidth with is the rest
        // of its round. A full round shares with `slots` workgroups per CU, even the first
        // workgroup placed on a CU (the others arrive within the launch time, not after it
        // ends); the last, partial round only with the workgroups left for it, so a grid
        // one workgroup per CU larger than the CUs hold ends with a round that runs as fast
        // as its waves alone allow, as on the hardware, not at the crowded rate.
        let per_round = (slots as u64).saturating_mul(allowed).max(1);
        let round_of = |i: u64| {
            let in_round = total
                .saturating_sub(i / per_round * per_round)
                .min(per_round);
            let resident = (slots as u64).min(in_round.div_ceil(allowed));
            (in_round.max(1), resident * waves_wg as u64 * 1000 / simds)
        };

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

        let launch_ps = (c.wave_launch_cycles as u128 * waves_wg as u128).saturating_mul(1_000_000)
            / c.shader_clock_mhz.max(1) as u128;

        let mut fresh: Vec<(usize, usize)> = vec![(0, 0); groups.len()];
        let mut heaps: Vec<BinaryHeap<Reverse<(u64, u32, u32)>>> =
            vec![BinaryHeap::new(); groups.len()];
        let mut cu_busy: Vec<CuBusy> = Vec::new();
        let (mut start_min, mut end_max, mut mem_bound) = (u64::MAX, 0u64, 0u64);

        for (i, wg) in workgroups(costs, shape.workgroups, waves_wg).enumerate() {
            let (concurrency, own_milli) = round_of(i as u64);
            let g = i % groups.len();
            let launch = ((i / groups.len()) as u128).saturating_mul(launch_ps) / 1000;
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
                let neighbours = start < unit.foreign_end(id);
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
                // The issue port and the matrix core are separate pipes: the SIMD's waves
                // are held up by the busier one.
                let busy = wg.issue_per_wave.max(wg.matrix_per_wave);
                let issue = (busy as u128 * k_milli as u128 / 1000).min(u64::MAX as u128) as u64;
                let compute_ns = model.cycles_to_ns(wg.cycles.max(issue));
                let mem_ns = ((wg.bytes as u128 * concurrency as u128).saturating_mul(1000)
                    / available as u128)
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
                let busy = Busy {
                    start,
                    end,
                    id,
                    milliwaves,
                };
                for lane in &mut unit.lanes[lanes] {
                    unit.kept += usize::from(insert(lane, busy));
                }
                if unit.last_id != Some(id) {
                    unit.last_id = Some(id);
                    unit.max_end_before_last = unit.max_end;
                    unit.trace_index = cu_busy.len();
                    cu_busy.push(CuBusy {
                        cu,
                        start_ns: start,
                        end_ns: end,
                        workgroups: 0,
                    });
                }
                unit.max_end = unit.max_end.max(end);
                heaps[g].push(Reverse((end, j, cu)));
                let entry = &mut cu_busy[unit.trace_index];
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
        cu_busy.sort_unstable_by_key(|b| b.cu);
        placement.cu_busy = cu_busy;
        self.mask_groups.groups = groups;
        placement.cus_used = placement.cu_busy.len() as u32;
        placement.memory_bound = mem_bound.saturating_mul(2) > total;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Class, Mix, MI300X, MI308X};

    fn wave(model: &DeviceModel, counts: &[(Class, u64)]) -> crate::WaveCost {
        let mut mix = Mix::default();
        for &(c, n) in counts {
            mix.count[c as usize] = n;
        }
        model.wave_costs.cost(&mix)
    }

    /// `n` workgroups of `waves` identical waves.
    fn grid(
        model: &DeviceModel,
        n: u32,
        waves: u32,
        counts: &[(Class, u64)],
    ) -> (DispatchShape, Vec<WorkgroupCost>) {
        let w = wave(model, counts);
        let mut wg = WorkgroupCost {
            workgroups: 1,
            ..Default::default()
        };
        for _ in 0..waves {
            wg.add_wave(w);
        }
        let shape = DispatchShape {
            workgroups: n as u64,
            waves_per_workgroup: waves,
            vgprs: 16,
            sgprs: 32,
            ..Default::default()
        };
        (shape, vec![wg; n as usize])
    }

    const ALU: &[(Class, u64)] = &[(Class::Valu, 1000)];

    #[test]
    fn a_known_mix_takes_a_known_time() {
        // 100 VALU (4 cycles each) and one exposed wait (1300 cycles): 1700 cycles alone,
        // 400 of them issue. At 2.1 GHz: 1700 / 2.1 = 809.5 -> 810 ns.
        let (shape, costs) = grid(&MI300X, 1, 1, &[(Class::Valu, 100), (Class::Waitcnt, 1)]);
        assert_eq!(costs[0].cycles_max, 1700);
        assert_eq!(costs[0].issue_sum, 400);
        let mut gpu = Gpu::new(&MI300X);
        let p = gpu.place(5_000, &shape, &costs, None);
        assert_eq!((p.start_ns, p.end_ns, p.cus_used), (5_000, 5_810, 1));
        assert_eq!(
            p.cu_busy,
            vec![CuBusy {
                cu: 0,
                start_ns: 5_000,
                end_ns: 5_810,
                workgroups: 1
            }]
        );
        assert!(!p.memory_bound);
        // Eight such waves on each SIMD: issue (8 x 400 = 3200 cycles) now binds.
        let (shape, costs) = grid(
            &MI300X,
            304 * 8,
            4,
            &[(Class::Valu, 100), (Class::Waitcnt, 1)],
        );
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        assert_eq!(p.occupancy.workgroups_per_cu, 8);
        let last_launch = MI300X.cycles_to_ns(4 * (304 * 8 / 8 - 1)) - 1;
        assert!(
            p.end_ns >= 1524 && p.end_ns <= 1524 + last_launch + 1,
            "{}",
            p.end_ns
        );
    }

    #[test]
    fn the_last_partial_round_shares_its_cus_only_with_itself() {
        // 68 VGPRs leave 7 waves per SIMD (72 of 512 per lane): 8 workgroups of 4 waves per
        // CU run as a round of 7 and a round of 1. Issue-bound waves (1000 VALU, 4000
        // cycles): the full round takes 7 x 4000 cycles, the last one 4000 (its waves are
        // alone on their SIMDs), 32000 in all; timed at the full round's 7 waves per SIMD
        // the last round took 28000 more.
        let (mut shape, costs) = grid(&MI300X, 304 * 8, 4, ALU);
        shape.vgprs = 68;
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        assert_eq!(p.occupancy.workgroups_per_cu, 7);
        let ideal = MI300X.cycles_to_ns(8 * 4000);
        let last_launch = MI300X.cycles_to_ns(4 * (304 * 7 / 8));
        assert!(
            p.end_ns >= ideal && p.end_ns <= ideal + last_launch,
            "{} vs {ideal}",
            p.end_ns
        );
        // Memory-bound workgroups: the last round's 304 share the bandwidth among
        // themselves, not as if the full round's 2128 still ran.
        let copy = &[
            (Class::Load16, 16),
            (Class::Store16, 16),
            (Class::Waitcnt, 2),
        ];
        let (mut shape, costs) = grid(&MI300X, 304 * 8, 4, copy);
        shape.vgprs = 68;
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        assert!(p.memory_bound);
        let ideal = p.bytes * 1000 / MI300X.effective_hbm_mb_per_s();
        assert!(
            p.duration_ns() >= ideal && p.duration_ns() < ideal * 11 / 10,
            "{} vs {ideal}",
            p.duration_ns()
        );
    }

    #[test]
    fn mfma_overlaps_the_vector_work_of_other_waves() {
        // Each wave: 100 MFMAs of 8 passes (3200 cycles on the matrix core, 400 of issue)
        // and 700 VALU (2800 cycles of issue): 6000 cycles alone. Eight waves per SIMD are
        // bound by the matrix core, 8 x 3200 cycles, not by the sum of both pipes
        // (8 x 6000).
        let mix = &[(Class::Mfma8, 100), (Class::Valu, 700)];
        let (shape, costs) = grid(&MI300X, 304 * 8, 4, mix);
        assert_eq!(costs[0].cycles_max, 6000);
        assert_eq!(costs[0].matrix_sum, 4 * 3200);
        assert_eq!(costs[0].issue_sum, 4 * 3200);
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        let ideal = MI300X.cycles_to_ns(8 * 3200);
        let last_launch = MI300X.cycles_to_ns(4 * (304 * 8 / 8));
        assert!(
            p.end_ns >= ideal && p.end_ns <= ideal + last_launch,
            "{} vs {ideal}",
            p.end_ns
        );
        // One wave per SIMD waits for its own MFMAs and VALU in turn: 6000 cycles.
        let (shape, costs) = grid(&MI300X, 304, 4, mix);
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        let alone = MI300X.cycles_to_ns(6000);
        let last_launch = MI300X.cycles_to_ns(4 * (304 / 8));
        assert!(
            p.end_ns >= alone && p.end_ns <= alone + last_launch,
            "{} vs {alone}",
            p.end_ns
        );
    }

    #[test]
    fn dispatches_sharing_cus_take_longer() {
        // One workgroup of 4 waves per CU: alone each is issue-bound at 4000 cycles.
        let (shape, costs) = grid(&MI300X, 304, 4, ALU);
        let alone = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        let mut gpu = Gpu::new(&MI300X);
        let a = gpu.place(0, &shape, &costs, None);
        let b = gpu.place(0, &shape, &costs, None);
        assert_eq!(
            a,
            Placement {
                id: 0,
                ..alone.clone()
            }
        );
        // B's waves share every SIMD with A's: twice the issue time.
        assert!(
            b.duration_ns() > alone.duration_ns() * 19 / 10,
            "{} vs {}",
            b.duration_ns(),
            alone.duration_ns()
        );
        // Saturating dispatches queue for slots instead.
        let (shape, costs) = grid(&MI300X, 304 * 8 * 4, 4, ALU);
        let alone = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        let mut gpu = Gpu::new(&MI300X);
        gpu.place(0, &shape, &costs, None);
        let b = gpu.place(0, &shape, &costs, None);
        assert!(
            b.end_ns > alone.end_ns * 19 / 10,
            "{} vs {}",
            b.end_ns,
            alone.end_ns
        );
    }

    #[test]
    fn a_cu_mask_matters_only_once_the_cus_are_full() {
        let half: Vec<u32> = (0..10)
            .map(|w| if w % 2 == 0 { u32::MAX } else { 0 })
            .collect();
        let run = |n: u32, mask: Option<&[u32]>| {
            let (shape, costs) = grid(&MI300X, n, 4, ALU);
            Gpu::new(&MI300X).place(0, &shape, &costs, mask)
        };
        // 100 workgroups fit on 160 CUs one each: same time.
        let (full, masked) = (run(100, None), run(100, Some(&half)));
        assert_eq!(full.duration_ns(), masked.duration_ns());
        assert!(masked.cu_busy.iter().all(|c| (c.cu / 32) % 2 == 0));
        // Eight rounds of 304 x 8 workgroups: half the CUs, about twice the time.
        let (full, masked) = (run(304 * 8 * 8, None), run(304 * 8 * 8, Some(&half)));
        assert_eq!(masked.cus_used, 160);
        let ratio = masked.duration_ns() as f64 / full.duration_ns() as f64;
        assert!((1.7..2.1).contains(&ratio), "{ratio}");
        // A mask naming no CU of the device means all of them.
        assert_eq!(run(100, Some(&[0, 0])).duration_ns(), full_small());
        fn full_small() -> u64 {
            let (shape, costs) = grid(&MI300X, 100, 4, ALU);
            Gpu::new(&MI300X)
                .place(0, &shape, &costs, None)
                .duration_ns()
        }
    }

    #[test]
    fn streaming_is_bound_by_hbm_bandwidth() {
        // float4 copy: 16 + 16 bytes per lane; 64 MiB each way.
        let mix = &[
            (Class::Load16, 1),
            (Class::Store16, 1),
            (Class::Valu, 8),
            (Class::Waitcnt, 2),
        ];
        let (shape, costs) = grid(&MI300X, 16_384, 4, mix);
        let p = Gpu::new(&MI300X).place(0, &shape, &costs, None);
        assert!(p.memory_bound);
        assert_eq!(p.bytes, 128 << 20);
        // 128 MiB at 80% of 5.3 TB/s is 31.7 us.
        let ideal = (p.bytes as f64 / 4.24e3) as u64;
        assert!(
            p.duration_ns() >= ideal && p.duration_ns() < ideal * 11 / 10,
            "{} vs {ideal}",
            p.duration_ns()
        );
        // A second stream running at the same time gets half the bandwidth at most.
        let mut gpu = Gpu::new(&MI308X);
        let a = gpu.place(0, &shape, &costs, None);
        let b = gpu.place(0, &shape, &costs, None);
        assert!(
            b.duration_ns() > a.duration_ns() * 3 / 2,
            "{} vs {}",
            b.duration_ns(),
            a.duration_ns()
        );
    }

    #[test]
    fn backfill_uses_only_what_earlier_calls_left() {
        let (big, big_costs) = grid(&MI300X, 304 * 8, 4, ALU);
        let (small, small_costs) = grid(&MI300X, 304, 4, &[(Class::Valu, 10)]);
        let mut gpu = Gpu::new(&MI300X);
        let late = gpu.place(1_000_000, &big, &big_costs, None);
        assert_eq!(late.start_ns, 1_000_000);
        // Ready earlier, placed later, short: it runs before.
        let early = gpu.place(0, &small, &small_costs, None);
        assert_eq!(early.start_ns, 0);
        assert!(early.end_ns < 1_000_000);
        // Ready just before, too long for the gap: it waits for the slots the earlier call
        // holds, and that call's times do not move.
        let (long, long_costs) = grid(&MI300X, 304 * 8, 4, ALU);
        let after = gpu.place(999_000, &long, &long_costs, None);
        assert!(
            after.end_ns > late.end_ns,
            "{} vs {}",
            after.end_ns,
            late.end_ns
        );
        assert!(after.start_ns >= 999_000);
    }

    #[test]
    fn identical_call_sequences_give_identical_results() {
        let run = || {
            let mut gpu = Gpu::new(&MI308X);
            let mut out = Vec::new();
            for k in 0..20u64 {
                let n = 1 + (k * 37 % 500) as u32;
                let (shape, costs) = grid(
                    &MI308X,
                    n,
                    1 + (k % 4) as u32,
                    &[
                        (Class::Valu, 10 * k),
                        (Class::Load4, k),
                        (Class::Waitcnt, 1),
                    ],
                );
                let mask: Vec<u32> = vec![(0x5555_5555u32).rotate_left(k as u32); 3];
                let ready = (k * 7_919) % 20_000;
                out.push(gpu.place(ready, &shape, &costs, (k % 3 == 0).then_some(&mask[..])));
            }
            out
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn history_is_bounded_and_odd_input_is_harmless() {
        let mut gpu = Gpu::new(&MI300X);
        let (shape, costs) = grid(&MI300X, 5_000, 4, ALU);
        let mut t = 0;
        for _ in 0..50 {
            let p = gpu.place(t, &shape, &costs, None);
            t = p.end_ns;
            gpu.retire_before(p.start_ns);
        }
        // Back-to-back workgroups on a slot merge: a few intervals per lane, not per workgroup.
        assert!(gpu.history_len() < 304 * 32 * 4, "{}", gpu.history_len());
        gpu.retire_before(u64::MAX);
        assert_eq!(gpu.history_len(), 0);

        // A launch-bound grid of tiny workgroups leaves gaps on every slot: still bounded.
        let (tiny, tiny_costs) = grid(&MI300X, 200_000, 1, &[(Class::Other, 1)]);
        gpu.place(0, &tiny, &tiny_costs, None);
        assert!(
            gpu.history_len() <= 304 * 32 * (MAX_GAPS_PER_LANE + 1),
            "{}",
            gpu.history_len()
        );
        gpu.retire_before(u64::MAX);

        let p = gpu.place(42, &DispatchShape::default(), &[], None);
        assert_eq!(
            (p.start_ns, p.end_ns, p.cus_used, p.workgroups),
            (42, 42, 0, 0)
        );
        // Nothing fits (too much LDS), costs at the limits, a clock at the end of time.
        let huge = WorkgroupCost {
            workgroups: 0,
            waves: u32::MAX,
            cycles_sum: u64::MAX,
            cycles_max: u64::MAX,
            bytes: u64::MAX,
            issue_sum: u64::MAX,
            matrix_sum: u64::MAX,
        };
        let shape = DispatchShape {
            workgroups: 3,
            waves_per_workgroup: 64,
            lds_bytes: u32::MAX,
            ..Default::default()
        };
        let p = gpu.place(u64::MAX - 5, &shape, &[huge, huge], Some(&[]));
        assert_eq!(p.end_ns, u64::MAX);
        let p = gpu.place(0, &shape, &[], None);
        assert_eq!(p.workgroups, 3);
        assert!(p.end_ns > 0);
    }
}
