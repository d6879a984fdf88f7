//! Packet planning for a batch of kernel nodes: which queue ("lane") each node's dispatch goes
//! to, and the barrier-AND packets that make a node wait for nodes on other lanes. Pure
//! logic over node indices; `aql.rs` turns a plan into packets.
//!
//! Every packet hipshim publishes carries the barrier bit (see `hsa/queue.rs`), so on one lane
//! a packet starts only once every earlier packet of that lane has completed: a dependency on a
//! node of the same lane costs nothing. A dependency on a node of another lane is a
//! barrier-AND packet, placed right before the waiting node, on that node's completion signal
//! (a signal drawn per launch). Lane 0 is the launching stream's queue: the batch starts after
//! the stream's earlier work there, so a side lane's first node waits either for a node of the
//! batch (itself after that work) or for an *entry* barrier at the head of lane 0; and lane 0
//! ends with a wait for every side lane's last node not already waited for, so the last
//! packet of lane 0 completes after the whole batch.

/// A signal drawn per launch: `Entry` for the entry barrier, else the node's.
pub type SignalId = usize;

/// One packet of a lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packet {
    /// A barrier-AND at the head of lane 0 completing the entry signal: the stream's work
    /// before the batch is done.
    Entry { signal: SignalId },
    /// A barrier-AND waiting for these signals (at most five).
    Wait { deps: Vec<SignalId> },
    /// Node `node`'s dispatch, completing `signal` if another lane waits for it.
    Node {
        node: usize,
        signal: Option<SignalId>,
    },
}

/// How a batch is published: its lanes, lane 0 first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub lanes: Vec<Vec<Packet>>,
    /// Signals a launch draws (ids `0..signals`).
    pub signals: usize,
    /// For each signal, the lane and the position in it of the packet completing it.
    pub producers: Vec<(usize, usize)>,
}

impl Plan {
    /// Packets on the busiest lane.
    pub fn longest_lane(&self) -> usize {
        self.lanes.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Packets in all.
    #[cfg(test)]
    pub fn packets(&self) -> usize {
        self.lanes.iter().map(Vec::len).sum()
    }
}

/// Most dependency signals per barrier-AND packet.
const WAIT_DEPS: usize = crate::hsa::queue::BARRIER_DEPS;

/// Plans `deps.len()` nodes, given in an order that respects every dependency (each node's
/// `deps` are indices of earlier nodes), on at most `lanes` lanes.
///
/// A node continues the lane of its first dependency that is still that lane's last node (a
/// chain stays on one queue); a node that continues no lane starts on the lane with the fewest
/// nodes (lane 0 on ties), so independent branches spread over the lanes.
pub fn plan(deps: &[Vec<usize>], lanes: usize) -> Plan {
    let lanes = lanes.max(1);
    let n = deps.len();
    let mut lane_of = vec![0usize; n];
    let mut tail: Vec<Option<usize>> = vec![None; lanes];
    let mut load = vec![0usize; lanes];
    for (i, d) in deps.iter().enumerate() {
        let lane = d
            .iter()
            .map(|&p| lane_of[p])
            .find(|&l| d.iter().any(|&p| tail[l] == Some(p)))
            .filter(|_| lanes > 1)
            .unwrap_or_else(|| {
                if lanes == 1 {
                    0
                } else {
                    (0..lanes).min_by_key(|&l| (load[l], l)).unwrap_or(0)
                }
            });
        lane_of[i] = lane;
        tail[lane] = Some(i);
        load[lane] += 1;
    }

    // Signals: nodes another lane waits for (a dependency or a side lane's tail), and the
    // entry barrier if a side lane starts with a node that waits for nothing in the batch.
    let mut node_signal: Vec<Option<SignalId>> = vec![None; n];
    let mut signals = 0;
    let mut producers = Vec::new();
    let mut out: Vec<Vec<Packet>> = vec![Vec::new(); lanes];
    let mut position = vec![0usize; n];
    // waited[l][r]: the latest position on lane r lane l already waited for (+1; 0 = none).
    let mut waited = vec![vec![0usize; lanes]; lanes];
    let mut started = vec![false; lanes];
    let needs_entry = (0..n).any(|i| {
        lane_of[i] != 0 && deps[i].is_empty() && !(0..i).any(|j| lane_of[j] == lane_of[i])
    });
    let entry = needs_entry.then(|| {
        out[0].push(Packet::Entry { signal: 0 });
        producers.push((0, 0));
        signals = 1;
        0
    });
    let mut signal_of = |node: usize,
                         node_signal: &mut Vec<Option<SignalId>>,
                         producers: &mut Vec<(usize, usize)>,
                         lane: usize,
                         at: usize| {
        *node_signal[node].get_or_insert_with(|| {
            producers.push((lane, at));
            signals += 1;
            signals - 1
        })
    };
    // Positions are only known once each node is placed, and a node's signal is wanted only
    // by later nodes: place in order, giving signals on demand (patched into the placed
    // packet).
    for i in 0..n {
        let lane = lane_of[i];
        let mut wait: Vec<SignalId> = Vec::new();
        if lane != 0 && !started[lane] && deps[i].is_empty() {
            if let Some(e) = entry {
                wait.push(e);
            }
        }
        started[lane] = true;
        // Of each other lane, wait only for the latest dependency there.
        let mut latest: Vec<Option<usize>> = vec![None; lanes];
        for &p in &deps[i] {
            let r = lane_of[p];
            if r != lane && position[p] + 1 > waited[lane][r] {
                latest[r] =
                    Some(latest[r].map_or(
                        p,
                        |q: usize| {
                            if position[q] >= position[p] {
                                q
                            } else {
                                p
                            }
                        },
                    ));
            }
        }
        for (r, p) in latest.iter().enumerate() {
            let Some(p) = *p else { continue };
            waited[lane][r] = position[p] + 1;
            let s = signal_of(p, &mut node_signal, &mut producers, r, position[p]);
            wait.push(s);
        }
        for chunk in wait.chunks(WAIT_DEPS) {
            out[lane].push(Packet::Wait {
                deps: chunk.to_vec(),
            });
        }
        position[i] = out[lane].len();
        out[lane].push(Packet::Node {
            node: i,
            signal: None,
        });
    }
    // Lane 0 waits for what it has not waited for of each side lane.
    let mut join = Vec::new();
    for r in 1..lanes {
        let Some(last) = tail[r] else { continue };
        if position[last] + 1 > waited[0][r] {
            join.push(signal_of(
                last,
                &mut node_signal,
                &mut producers,
                r,
                position[last],
            ));
        }
    }
    for chunk in join.chunks(WAIT_DEPS) {
        out[0].push(Packet::Wait {
            deps: chunk.to_vec(),
        });
    }
    for (node, signal) in node_signal.iter().enumerate() {
        if let Some(s) = signal {
            if let Packet::Node { signal: slot, .. } = &mut out[lane_of[node]][position[node]] {
                *slot = Some(*s);
            }
        }
    }
    while out.len() > 1 && out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    Plan {
        lanes: out,
        signals,
        producers,
    }
}

#[cfg(test)]
mod tests {
    use super::Packet::*;
    use super::*;

    fn node(node: usize) -> Packet {
        Node { node, signal: None }
    }

    #[test]
    fn one_lane_needs_no_barriers_whatever_the_joins() {
        // Diamond 0 -> {1, 2} -> 3, then 4 after 0 and 3.
        let deps = vec![vec![], vec![0], vec![0], vec![1, 2], vec![0, 3]];
        let p = plan(&deps, 1);
        assert_eq!(
            p.lanes,
            vec![vec![node(0), node(1), node(2), node(3), node(4)]]
        );
        assert_eq!(p.signals, 0);
    }

    #[test]
    fn a_diamond_on_two_lanes_forks_and_joins_with_barrier_and_packets() {
        let deps = vec![vec![], vec![0], vec![0], vec![1, 2]];
        let p = plan(&deps, 2);
        // 1 continues 0's lane; 2 starts lane 1 after a wait for 0; 3 continues lane 0 after
        // a wait for 2, which also covers lane 1's tail: no join at the end.
        assert_eq!(
            p.lanes,
            vec![
                vec![
                    Node {
                        node: 0,
                        signal: Some(0)
                    },
                    node(1),
                    Wait { deps: vec![1] },
                    node(3)
                ],
                vec![
                    Wait { deps: vec![0] },
                    Node {
                        node: 2,
                        signal: Some(1)
                    }
                ],
            ]
        );
        assert_eq!(p.signals, 2);
        assert_eq!(p.producers, vec![(0, 0), (1, 1)]);
    }

    #[test]
    fn independent_roots_on_side_lanes_wait_for_the_entry_and_lane_0_joins_them() {
        // Three independent nodes on three lanes, nothing after them.
        let deps = vec![vec![], vec![], vec![]];
        let p = plan(&deps, 3);
        assert_eq!(
            p.lanes,
            vec![
                vec![Entry { signal: 0 }, node(0), Wait { deps: vec![1, 2] }],
                vec![
                    Wait { deps: vec![0] },
                    Node {
                        node: 1,
                        signal: Some(1)
                    }
                ],
                vec![
                    Wait { deps: vec![0] },
                    Node {
                        node: 2,
                        signal: Some(2)
                    }
                ],
            ]
        );
        assert_eq!(p.producers, vec![(0, 0), (1, 1), (2, 1)]);
    }

    #[test]
    fn a_chain_stays_on_one_lane_however_many_lanes_there_are() {
        let deps: Vec<Vec<usize>> = (0..5)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let p = plan(&deps, 4);
        assert_eq!(p.lanes.len(), 1);
        assert_eq!(p.signals, 0);
        assert_eq!(p.packets(), 5);
    }

    #[test]
    fn a_wide_join_waits_in_packets_of_five_and_only_once_per_lane() {
        // 0 forks into 1..=7 (spread over lanes), 8 joins them all.
        let mut deps = vec![vec![]];
        deps.extend((1..=7).map(|_| vec![0]));
        deps.push((1..=7).collect());
        let p = plan(&deps, 8);
        let waits: Vec<usize> = p.lanes[0]
            .iter()
            .filter_map(|pk| match pk {
                Wait { deps } => Some(deps.len()),
                _ => None,
            })
            .collect();
        // Lane 0 holds 0 and 1 (continuing 0), then 8 waits for the six other lanes: 5 + 1.
        assert_eq!(waits, vec![5, 1]);
        assert_eq!(p.lanes[0].last(), Some(&node(8)));
        assert!(p.lanes.iter().skip(1).all(|l| l.len() == 2));
    }
}
