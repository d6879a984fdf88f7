//! The scheduler on a virtual time line (`HSASIM_TIME=virtual`): when each queue holds a
//! hardware slot, as a pure function of the runlist and the virtual times it changed at.
//!
//! [`crate::model::Table`] runs the scheduler on the host's clock: it maps a queue when its
//! packet processor asks, and unmaps it when a packet ends, so what it decides depends on how
//! fast the host's threads got there. Under virtual time the order in which host threads
//! finish work must change nothing, so the slots are computed here from what the program did,
//! not from when: the runlist (its queues, their processes and priorities) and the virtual
//! time of each change. The same rules as the table's apply:
//!
//! - **Runlist updates.** A change (a queue created, destroyed or reprioritised) to or from an
//!   oversubscribed runlist starts an update once the previous one finished: every queue is
//!   unmapped ([`Params::unmap_ns`], when any was mapped), the runlist is sent
//!   ([`Params::update_ns`]) and the first turn's queues are mapped ([`Params::map_ns`]). No
//!   packet starts meanwhile. This is KFD's serial path through the HIQ; batched updates
//!   ([`Params::serial_updates`] 0) are treated the same. A change between runlists that fit
//!   costs nothing here: KFD sends a new runlist then too, but HIP creates its queues with its
//!   streams, before the work it times, while hipshim creates a stream's queue at its first
//!   use; charging it there would put a setup cost into the work a program measures.
//! - **Oversubscription** is KFD's rule: more processes than [`Params::max_procs`] or more
//!   queues than [`Params::slots`]. Without it every queue holds a slot from the update on.
//! - **Turns.** With it, the runlist is walked by process, each turn mapping whole processes
//!   while they fit in the process limit and the slots (one process with more queues than
//!   slots gets a window of its queues, rotating), for [`Params::quantum_ns`]. Between turns
//!   the queues that leave are unmapped and those that arrive are mapped (`unmap_ns` +
//!   `map_ns`); a queue in two turns in a row keeps its slot. Turns follow the clock whether
//!   or not a queue has work, as the hardware scheduler's do (`skip_idle` is not modelled
//!   here).
//! - **Priorities** order the runlist: processes by their highest queue priority, then by
//!   arrival; within a process, queues by priority, then by arrival. So after an update the
//!   first turn goes to the highest priority, and with more queues than slots the window
//!   starts at them; every queue still gets turns.
//!
//! A packet may *start* only while its queue holds a slot; a packet that started runs to its
//! end even past its turn (hardware would preempt a dispatch by saving its waves: not
//! modelled, so a long kernel overlaps the next turn).

pub use crate::model::Member;
use crate::model::Params;

/// A runlist in force from `begin_ns`: its members in runlist order and its turns.
#[derive(Clone, Debug)]
struct Epoch {
    /// The update began here: from now on nothing starts until `open_ns`.
    begin_ns: u64,
    /// The first turn's queues are mapped.
    open_ns: u64,
    members: Vec<Member>,
    oversubscribed: bool,
    /// Each turn's members (indices into `members`, ascending). Turns past the end repeat
    /// from `cycle_from`.
    turns: Vec<Vec<usize>>,
    cycle_from: usize,
    /// Entries numbered below this (by the caller: its submission order) do not see this
    /// runlist (it did not exist when they were submitted).
    after_seq: u64,
    /// The last turn a packet started in (for the counters and the tracks).
    last_turn_used: u64,
}

/// What the scheduler did on the virtual time line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimelineCounters {
    pub runlist_updates: u64,
    /// 1 while the current runlist is oversubscribed.
    pub oversubscribed: u64,
    /// Turns after the first of each runlist that packets started in or after.
    pub time_slices: u64,
    /// Most queues holding a slot at once.
    pub max_slots_in_use: u64,
    pub packets_started: u64,
    /// Packets that were ready before their queue held a slot.
    pub waits: u64,
    /// Virtual time those packets waited for a slot, summed.
    pub wait_ns: u64,
}

/// Where a packet starts: the time, and the runlist (an index among those kept) and turn it
/// starts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    pub at_ns: u64,
    pub epoch: usize,
    pub turn: u64,
}

/// A queue holding slot `slot` from `from_ns` to `to_ns` (mapping included), for a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub pid: u32,
    pub queue_id: u64,
    pub slot: u32,
    pub pipe: u32,
    pub from_ns: u64,
    pub to_ns: u64,
}

/// The runlists of one device on the virtual time line, oldest first.
#[derive(Clone, Debug)]
pub struct Timeline {
    params: Params,
    epochs: Vec<Epoch>,
    counters: TimelineCounters,
    /// The slots held in runlists no packet can be placed in any more
    /// ([`Timeline::retire_before`]), for traces; the last [`MAX_HISTORY`] spans.
    history: std::collections::VecDeque<Mapped>,
}

/// Spans of retired runlists kept for traces.
const MAX_HISTORY: usize = 1 << 20;

/// Longest run of distinct turns looked for before a rotation repeats (it repeats within a
/// few turns per process; this only bounds a pathological runlist).
const MAX_TURNS: usize = 4096;

impl Timeline {
    pub fn new(params: Params) -> Timeline {
        Timeline {
            params: params.clamped(),
            epochs: Vec::new(),
            counters: TimelineCounters::default(),
            history: std::collections::VecDeque::new(),
        }
    }

    /// Forgets the runlists no packet can be placed in any more: those followed by a runlist
    /// that began by `horizon_ns` (no packet is ready before it from now on) and that every
    /// entry from `min_seq` on sees. Their slots stay for [`Timeline::mapped`].
    pub fn retire_before(&mut self, horizon_ns: u64, min_seq: u64) {
        let gone = self
            .epochs
            .iter()
            .skip(1)
            .take_while(|e| e.begin_ns <= horizon_ns && e.after_seq <= min_seq)
            .count();
        for i in 0..gone {
            let end = self.epochs[i + 1].begin_ns;
            let spans = self.epoch_spans(i, end);
            self.history.extend(spans);
        }
        while self.history.len() > MAX_HISTORY {
            self.history.pop_front();
        }
        self.epochs.drain(..gone);
    }

    /// Runlists kept (for tests of [`Timeline::retire_before`]).
    pub fn runlists(&self) -> usize {
        self.epochs.len()
    }

    pub fn params(&self) -> Params {
        self.params
    }

    pub fn counters(&self) -> TimelineCounters {
        self.counters
    }

    /// The runlist is now `members` (any order), changed at virtual time `at_ns`; entries
    /// numbered `after_seq` and later see it. Returns when its update ends (the first
    /// turn's queues are mapped).
    pub fn change(&mut self, at_ns: u64, members: Vec<Member>, after_seq: u64) -> u64 {
        let p = self.params;
        let (prev_open, any_mapped, was_over) = self.epochs.last().map_or((0, false, false), |e| {
            (e.open_ns, !e.members.is_empty(), e.oversubscribed)
        });
        let begin = at_ns.max(prev_open);
        let open = if was_over || self.is_oversubscribed(&members) {
            begin + if any_mapped { p.unmap_ns } else { 0 } + p.update_ns + p.map_ns
        } else {
            begin
        };
        self.push(begin, open, members, after_seq);
        open
    }

    /// KFD's rule: more processes than may be mapped at once, or more queues than slots.
    fn is_oversubscribed(&self, members: &[Member]) -> bool {
        let mut pids: Vec<u32> = members.iter().map(|m| m.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        pids.len() > self.params.max_procs as usize || members.len() > self.params.slots as usize
    }

    /// A runlist that another process put in place: its update began at `begin_ns` and
    /// ended at `open_ns` (both on the time line all processes share).
    pub fn adopt(&mut self, begin_ns: u64, open_ns: u64, members: Vec<Member>, after_seq: u64) {
        // Updates begin in order (each after the last one's end); kept so for the search.
        let begin_ns = begin_ns.max(self.epochs.last().map_or(0, |e| e.begin_ns));
        self.push(begin_ns, open_ns.max(begin_ns), members, after_seq);
    }

    /// The last update: when it began and when it ended.
    pub fn last_update(&self) -> Option<(u64, u64)> {
        self.epochs.last().map(|e| (e.begin_ns, e.open_ns))
    }

    fn push(&mut self, begin_ns: u64, open_ns: u64, mut members: Vec<Member>, after_seq: u64) {
        let p = self.params;
        // Runlist order: processes by their highest priority, then arrival; queues within.
        let top = |pid: u32, ms: &[Member]| {
            ms.iter()
                .filter(|m| m.pid == pid)
                .map(|m| m.priority)
                .max()
                .unwrap_or(0)
        };
        let tops: Vec<u32> = members.iter().map(|m| top(m.pid, &members)).collect();
        let mut keyed: Vec<(Member, u32)> = members.drain(..).zip(tops).collect();
        keyed.sort_by_key(|(m, top)| {
            (
                std::cmp::Reverse(*top),
                m.proc_seq,
                m.pid,
                std::cmp::Reverse(m.priority),
                m.seq,
                m.queue_id,
            )
        });
        let members: Vec<Member> = keyed.into_iter().map(|(m, _)| m).collect();
        let mut procs: Vec<std::ops::Range<usize>> = Vec::new();
        for (i, m) in members.iter().enumerate() {
            match procs.last_mut() {
                Some(r) if members[r.start].pid == m.pid => r.end = i + 1,
                _ => procs.push(i..i + 1),
            }
        }
        let oversubscribed = self.is_oversubscribed(&members);
        let (turns, cycle_from) = if oversubscribed {
            rotation(&procs, p.slots as usize, p.max_procs as usize)
        } else {
            (vec![(0..members.len()).collect()], 0)
        };
        self.counters.runlist_updates += 1;
        self.counters.oversubscribed = u64::from(oversubscribed);
        let widest = turns.iter().map(Vec::len).max().unwrap_or(0) as u64;
        self.counters.max_slots_in_use = self.counters.max_slots_in_use.max(widest);
        self.epochs.push(Epoch {
            begin_ns,
            open_ns,
            members,
            oversubscribed,
            turns,
            cycle_from,
            after_seq,
            last_turn_used: 0,
        });
    }

    /// When a packet of queue `queue_id` of process `pid`, ready at `ready_ns`, starts: the
    /// earliest time from then on at which its queue holds a slot, in the runlists that entry
    /// `seq` sees. A queue in none of them is not held back.
    pub fn start(&mut self, pid: u32, queue_id: u64, ready_ns: u64, seq: u64) -> Start {
        let usable = self.epochs.partition_point(|e| e.after_seq <= seq);
        let found = self.find(pid, queue_id, ready_ns, usable);
        let start = found.unwrap_or(Start {
            at_ns: ready_ns,
            epoch: usable.saturating_sub(1),
            turn: 0,
        });
        self.counters.packets_started += 1;
        if start.at_ns > ready_ns {
            self.counters.waits += 1;
            self.counters.wait_ns += start.at_ns - ready_ns;
        }
        if found.is_some() {
            let e = &mut self.epochs[start.epoch];
            if start.turn > e.last_turn_used {
                self.counters.time_slices += start.turn - e.last_turn_used;
                e.last_turn_used = start.turn;
            }
        }
        start
    }

    /// [`Timeline::start`] without counting it (a guess at a dispatch's start).
    pub fn peek_start(&self, pid: u32, queue_id: u64, ready_ns: u64, seq: u64) -> u64 {
        let usable = self.epochs.partition_point(|e| e.after_seq <= seq);
        self.find(pid, queue_id, ready_ns, usable)
            .map_or(ready_ns, |s| s.at_ns)
    }

    fn find(&self, pid: u32, queue_id: u64, ready_ns: u64, usable: usize) -> Option<Start> {
        if usable == 0 {
            return None;
        }
        // The runlist in force at `ready_ns` (or the first one, for a packet ready before any):
        // updates begin in order, so a binary search finds it.
        let mut e = self.epochs[..usable]
            .partition_point(|e| e.begin_ns <= ready_ns)
            .saturating_sub(1);
        let mut t = ready_ns.max(self.epochs[e].begin_ns);
        loop {
            let next_begin = self.epochs[..usable].get(e + 1).map(|n| n.begin_ns);
            let here = self.epochs[e].earliest(&self.params, pid, queue_id, t);
            match (here, next_begin) {
                (Some((at, turn)), nb) if nb.is_none_or(|nb| at < nb) => {
                    return Some(Start {
                        at_ns: at,
                        epoch: e,
                        turn,
                    })
                }
                (_, Some(nb)) => {
                    e += 1;
                    t = t.max(nb);
                }
                (_, None) => return None,
            }
        }
    }

    /// The slots held from `from_ns` to `until_ns`, for a trace: every runlist's turns up to
    /// the last one a packet started in (turns nobody used are left out, or an idle program
    /// would fill its trace with them).
    pub fn mapped(&self, until_ns: u64) -> Vec<Mapped> {
        let mut out: Vec<Mapped> = self
            .history
            .iter()
            .filter(|m| m.from_ns < until_ns)
            .map(|m| Mapped {
                to_ns: m.to_ns.min(until_ns),
                ..*m
            })
            .collect();
        for i in 0..self.epochs.len() {
            let end = self
                .epochs
                .get(i + 1)
                .map_or(until_ns, |n| n.begin_ns)
                .min(until_ns);
            out.extend(self.epoch_spans(i, end));
        }
        out.retain(|m| m.to_ns > m.from_ns);
        out.sort_by_key(|m| (m.from_ns, m.slot));
        out
    }

    /// The slots held in runlist `i` until `end`.
    fn epoch_spans(&self, i: usize, end: u64) -> Vec<Mapped> {
        let p = self.params;
        let e = &self.epochs[i];
        let mut out = Vec::new();
        if e.open_ns >= end || e.members.is_empty() {
            return out;
        }
        let last = if e.oversubscribed {
            e.last_turn_used
        } else {
            0
        };
        // Slots stay with a queue while it stays mapped; arrivals take a free one.
        let mut held: Vec<(usize, u32, u64)> = Vec::new(); // (member, slot, since)
        for k in 0..=last {
            let (turn_from, turn_to) = e.turn_span(&p, k);
            if turn_from >= end {
                break;
            }
            let sel = e.selected(k);
            let mut kept = Vec::new();
            for &(m, slot, since) in &held {
                if sel.binary_search(&m).is_ok() {
                    kept.push((m, slot, since));
                } else {
                    out.push(e.mapped(&p, m, slot, since, turn_from + p.unmap_ns));
                }
            }
            held = kept;
            // Arrivals are mapped at the end of the update or of the switch.
            let arrive = if k == 0 {
                // (An update that cost nothing mapped nothing anew.)
                e.open_ns.saturating_sub(p.map_ns).max(e.begin_ns)
            } else {
                turn_from + p.unmap_ns
            };
            for &m in sel {
                if held.iter().any(|h| h.0 == m) {
                    continue;
                }
                // A free slot on the pipe with the fewest queues, as the table maps them.
                let load = |pipe: u32| held.iter().filter(|h| p.pipe_of(h.1) == pipe).count();
                let slot = (0..p.slots)
                    .filter(|s| !held.iter().any(|h| h.1 == *s))
                    .min_by_key(|&s| (load(p.pipe_of(s)), s))
                    .unwrap_or(0);
                held.push((m, slot, arrive));
            }
            if k == last || !e.oversubscribed {
                // The last turn's queues leave at the next switch (or stay to the end).
                let to = if e.oversubscribed {
                    (turn_to + p.unmap_ns).min(end)
                } else {
                    end
                };
                for &(m, slot, since) in &held {
                    out.push(e.mapped(&p, m, slot, since, to));
                }
            }
        }
        out
    }
}

impl Epoch {
    fn selected(&self, k: u64) -> &[usize] {
        let n = self.turns.len();
        let i = if (k as usize) < n {
            k as usize
        } else {
            let period = n - self.cycle_from;
            self.cycle_from + ((k as usize - self.cycle_from) % period)
        };
        &self.turns[i]
    }

    /// Turn `k`'s span: turn 0 from the update's end for a quantum; each later turn starts
    /// with its switch (unmapping the leavers, mapping the arrivals), then a quantum.
    fn turn_span(&self, p: &Params, k: u64) -> (u64, u64) {
        let period = p.quantum_ns + p.unmap_ns + p.map_ns;
        if k == 0 {
            (self.open_ns, self.open_ns + p.quantum_ns)
        } else {
            let from = self.open_ns + p.quantum_ns + (k - 1) * period;
            (from, from + period)
        }
    }

    fn mapped(&self, p: &Params, m: usize, slot: u32, from: u64, to: u64) -> Mapped {
        Mapped {
            pid: self.members[m].pid,
            queue_id: self.members[m].queue_id,
            slot,
            pipe: p.pipe_of(slot),
            from_ns: from,
            to_ns: to,
        }
    }

    /// The earliest time from `t` at which the queue holds a slot in this runlist, and the
    /// turn; None if it is not in it.
    fn earliest(&self, p: &Params, pid: u32, queue_id: u64, t: u64) -> Option<(u64, u64)> {
        let m = self
            .members
            .iter()
            .position(|m| m.pid == pid && m.queue_id == queue_id)?;
        let t = t.max(self.open_ns);
        if !self.oversubscribed {
            return Some((t, 0));
        }
        let period = p.quantum_ns + p.unmap_ns + p.map_ns;
        let first = if t < self.open_ns + p.quantum_ns {
            0
        } else {
            1 + (t - self.open_ns - p.quantum_ns) / period
        };
        // Every member is in some turn of the rotation, so one pass over it finds one.
        for k in first..first + self.turns.len() as u64 + 1 {
            if self.selected(k).binary_search(&m).is_err() {
                continue;
            }
            let (from, to) = self.turn_span(p, k);
            let opens = if k == 0 || self.selected(k - 1).binary_search(&m).is_ok() {
                from
            } else {
                from + p.unmap_ns + p.map_ns
            };
            if t < to {
                return Some((t.max(opens), k));
            }
        }
        None
    }
}

/// The turns of an oversubscribed runlist whose processes are `procs` (ranges of members in
/// runlist order), as [`crate::model::Table`] selects them: from the process the last turn
/// left out, whole processes while they fit in the process limit and the slots; a process
/// with more queues than slots alone, a window of its queues rotating. Returns the turns up
/// to the first repeat of the walk's state and where the repeating part begins.
fn rotation(
    procs: &[std::ops::Range<usize>],
    slots: usize,
    max_procs: usize,
) -> (Vec<Vec<usize>>, usize) {
    let n = procs.len();
    let mut cursor = 0usize;
    let mut windows = vec![0usize; n];
    let mut seen: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut turns: Vec<Vec<usize>> = Vec::new();
    while turns.len() < MAX_TURNS {
        if let Some(at) = seen.iter().position(|s| s.0 == cursor && s.1 == windows) {
            return (turns, at);
        }
        seen.push((cursor, windows.clone()));
        let mut sel = Vec::new();
        let mut next = None;
        for k in 0..n {
            let pi = (cursor + k) % n;
            let qs = procs[pi].clone();
            if k == max_procs {
                next = Some(pi);
                break;
            }
            if sel.len() + qs.len() > slots {
                if k == 0 {
                    let len = qs.len();
                    let from = windows[pi] % len;
                    for j in 0..slots {
                        sel.push(qs.start + (from + j) % len);
                    }
                    windows[pi] = (from + slots) % len;
                    next = Some(if from + slots >= len {
                        (pi + 1) % n
                    } else {
                        pi
                    });
                } else {
                    next = Some(pi);
                }
                break;
            }
            sel.extend(qs);
        }
        sel.sort_unstable();
        turns.push(sel);
        cursor = next.unwrap_or(0);
    }
    (turns, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(slots: u32, max_procs: u32) -> Params {
        Params {
            slots,
            pipes: 1,
            max_procs,
            quantum_ns: 1_000_000,
            map_ns: 20_000,
            unmap_ns: 50_000,
            update_ns: 200_000,
            ..Params::default()
        }
    }

    fn member(pid: u32, queue_id: u64) -> Member {
        Member {
            pid,
            queue_id,
            priority: 1,
            proc_seq: u64::from(pid),
            seq: queue_id,
        }
    }

    #[test]
    fn a_runlist_that_fits_holds_every_queue_from_its_update_on() {
        let mut t = Timeline::new(params(2, 8));
        let open = t.change(1_000, vec![member(1, 0), member(1, 1)], 0);
        assert_eq!(open, 1_000, "a runlist that fits costs nothing");
        assert_eq!(t.start(1, 1, 0, 0).at_ns, open);
        assert_eq!(t.start(1, 1, open + 5, 0).at_ns, open + 5);
        // Three queues on two slots: an update, unmapping what was mapped.
        let three = vec![member(1, 0), member(1, 1), member(1, 2)];
        let open2 = t.change(open + 10, three, 3);
        assert_eq!(open2, open + 10 + 270_000);
        // Entry 2 was submitted before the second update and does not see it.
        assert_eq!(t.start(1, 0, open + 20, 2).at_ns, open + 20);
        assert_eq!(t.start(1, 0, open + 20, 3).at_ns, open2);
        assert_eq!(t.counters().oversubscribed, 1);
        // Back to a runlist that fits: the update out of oversubscription costs too.
        let open3 = t.change(open2 + 10, vec![member(1, 0)], 4);
        assert_eq!(open3, open2 + 10 + 270_000);
        assert_eq!(t.counters().oversubscribed, 0);
    }

    #[test]
    fn queues_beyond_the_slots_take_turns_of_a_quantum() {
        let p = params(1, 8);
        let mut t = Timeline::new(p);
        let open = t.change(0, (0..3).map(|q| member(1, q)).collect(), 0);
        let switch = p.unmap_ns + p.map_ns;
        let period = p.quantum_ns + switch;
        assert_eq!(t.start(1, 0, open, 0).at_ns, open);
        assert_eq!(t.start(1, 1, open, 0).at_ns, open + p.quantum_ns + switch);
        assert_eq!(
            t.start(1, 2, open, 0).at_ns,
            open + p.quantum_ns + period + switch
        );
        // Queue 0's next turn is the fourth.
        assert_eq!(
            t.start(1, 0, open + 10, 0).at_ns,
            open + 10,
            "still its turn"
        );
        assert_eq!(
            t.start(1, 0, open + p.quantum_ns, 0).at_ns,
            open + p.quantum_ns + 2 * period + switch
        );
        let c = t.counters();
        assert_eq!((c.oversubscribed, c.max_slots_in_use), (1, 1));
        assert_eq!(c.time_slices, 3);
        assert_eq!(c.packets_started, 5);
    }

    #[test]
    fn processes_beyond_the_limit_share_turns_and_the_top_priority_goes_first() {
        let p = params(32, 4);
        let mut t = Timeline::new(p);
        let mut ms: Vec<Member> = (1..=6)
            .flat_map(|pid| (0..4).map(move |q| member(pid, u64::from(pid) * 10 + q)))
            .collect();
        ms[20].priority = 2; // a queue of process 6
        let open = t.change(0, ms, 0);
        // Turn 0: processes 6, 1, 2, 3; turn 1: 4, 5, 6, 1; turn 2: 2, 3, 4, 5; then again.
        assert_eq!(t.start(6, 60, 0, 0).at_ns, open);
        assert_eq!(t.start(3, 30, 0, 0).at_ns, open);
        let switch = p.unmap_ns + p.map_ns;
        let turn1 = open + p.quantum_ns;
        assert_eq!(t.start(4, 40, 0, 0).at_ns, turn1 + switch);
        // Process 1 stays mapped from turn 0 into turn 1: no switch.
        assert_eq!(t.start(1, 10, turn1 + 5, 0).at_ns, turn1 + 5);
        let shares: Vec<usize> = (1..=6u32)
            .map(|pid| {
                (0..3u64)
                    .filter(|&k| {
                        let e = &t.epochs[0];
                        let m = e.members.iter().position(|m| m.pid == pid).unwrap();
                        e.selected(k).contains(&m)
                    })
                    .count()
            })
            .collect();
        assert_eq!(shares, [2; 6], "each process in two turns of three");
    }

    #[test]
    fn the_tracks_show_each_turns_queue_in_its_slot() {
        let p = params(1, 8);
        let mut t = Timeline::new(p);
        let open = t.change(0, (0..3).map(|q| member(1, q)).collect(), 0);
        for q in 0..3 {
            t.start(1, q, open, 0);
        }
        let (qn, period) = (p.quantum_ns, p.quantum_ns + p.unmap_ns + p.map_ns);
        let spans: Vec<(u64, u32, u64, u64)> = t
            .mapped(u64::MAX / 2)
            .iter()
            .map(|m| (m.queue_id, m.slot, m.from_ns, m.to_ns))
            .collect();
        assert_eq!(
            spans,
            [
                (0, 0, open - p.map_ns, open + qn + p.unmap_ns),
                (
                    1,
                    0,
                    open + qn + p.unmap_ns,
                    open + qn + period + p.unmap_ns
                ),
                (
                    2,
                    0,
                    open + qn + period + p.unmap_ns,
                    open + qn + 2 * period + p.unmap_ns
                ),
            ]
        );
        // A runlist that fits: every queue in a slot of its own from its update to the end.
        let mut t = Timeline::new(params(4, 8));
        let open = t.change(5_000, (0..2).map(|q| member(1, q)).collect(), 0);
        let slots: Vec<(u32, u64, u64)> = t
            .mapped(open + 1000)
            .iter()
            .map(|m| (m.slot, m.from_ns, m.to_ns))
            .collect();
        assert_eq!(slots, [(0, 5_000, 6_000), (1, 5_000, 6_000)]);
    }

    #[test]
    fn retired_runlists_keep_their_slots_for_traces_and_change_no_start() {
        let build = || {
            let mut t = Timeline::new(params(1, 8));
            for n in 1..=6u64 {
                let at = n * 5_000_000;
                t.change(at, (0..1 + n % 3).map(|q| member(1, q)).collect(), n);
                t.start(1, 0, at + 1, n);
                t.start(1, n % 3, at + 2, n);
            }
            t
        };
        let kept = build();
        let mut retired = build();
        let later = 40_000_000;
        retired.retire_before(later, 6);
        assert_eq!(
            retired.runlists(),
            1,
            "one runlist is in force from the horizon on"
        );
        assert_eq!(retired.mapped(later * 2), kept.mapped(later * 2));
        for q in 0..3 {
            let (mut a, mut b) = (kept.clone(), retired.clone());
            let (x, y) = (a.start(1, q, later, 7), b.start(1, q, later, 7));
            assert_eq!((x.at_ns, x.turn), (y.at_ns, y.turn));
        }
    }

    #[test]
    fn the_same_changes_give_the_same_slots() {
        let run = || {
            let mut t = Timeline::new(params(2, 8));
            t.change(0, (0..5).map(|q| member(1, q)).collect(), 0);
            let starts: Vec<u64> = (0..20)
                .map(|i| t.start(1, i % 5, i * 300_000, 0).at_ns)
                .collect();
            (starts, t.mapped(u64::MAX / 2))
        };
        assert_eq!(run(), run());
        let (_, mapped) = run();
        assert!(mapped.iter().all(|m| m.slot < 2));
    }
}
