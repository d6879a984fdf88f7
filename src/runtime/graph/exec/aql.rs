//! An executable graph's kernel nodes as prebuilt AQL packets, and their publication.
//!
//! Per device a graph is launched on, [`Prebuilt`] holds each kernel node's dispatch packet,
//! checked and laid out once by the launch path's own code (`launch::check_launch`,
//! `CheckedLaunch::prebuild`: the same validation, kernarg layout and packet as
//! `hipLaunchKernel`), its kernarg image (explicit and hidden arguments) in kernarg memory the
//! executable graph owns, and each batch's [`Plan`] on one queue and on the configured number
//! of queues. A launch copies the packets into the rings, patching only completion signals,
//! under the stream's lock through `Stream::submit_batch`, one doorbell per queue (a batch
//! longer than a quarter of the ring goes in quarter-ring pieces, each rung, so that a graph
//! larger than the ring waits for room instead of for itself).
//!
//! Kernarg images are never written while a launch may read them: a launch keeps its
//! `Arc<Prebuilt>` until its packets complete (the stream holds it), and a change of
//! parameters patches the images in place only when no launch holds them, else a copy.

use super::plan::{Packet, Plan};
use super::{KernelNode, Step};
use crate::error::{HipError, HipResult};
use crate::hsa::memory::PoolBuffer;
use crate::hsa::queue::{barrier_and, set_completion, Marker, Queue};
use crate::hsa::signal::PooledSignal;
use crate::runtime::devices::device::Device;
use crate::runtime::kernel::module::Function;
use crate::runtime::launch::{self, Args, GridSize, LaunchRequest};
use hsa_abi::{hsa_signal_t, AqlPacket};
use parking_lot::Mutex;
use std::sync::Arc;

/// Kernarg images start at this alignment (a cache line; the ABI asks for 16).
const KERNARG_ALIGN: usize = 64;

/// One kernel node, ready to publish.
#[derive(Clone)]
struct Dispatch {
    /// The packet, its kernarg address in the images, no completion signal.
    packet: AqlPacket,
    /// Where its image is in the images, and the room it has there.
    offset: usize,
    room: usize,
    /// For the trace.
    function: Arc<Function>,
    kernarg_bytes: u32,
}

/// A batch's kernel nodes (flat indices, in plan order) and their dependencies inside the
/// batch (indices into `nodes`): the structure the plans are made from.
pub struct BatchShape {
    pub nodes: Vec<usize>,
    pub deps: Vec<Vec<usize>>,
}

/// How a batch goes out: on the stream's queue alone, and spread over several queues.
struct BatchPlans {
    single: Plan,
    spread: Option<Plan>,
}

/// An executable graph's packets for one device.
pub struct Prebuilt {
    pub device: usize,
    /// The kernarg images of every kernel node (none if the graph has no kernel node).
    images: Option<PoolBuffer>,
    /// By flat index: the kernel nodes' dispatches.
    dispatches: Vec<Option<Dispatch>>,
    plans: Vec<BatchPlans>,
}

/// Serialises publications that spread over several queues: the branch queues are shared by
/// every graph of the device, and a batch's packets on one queue may wait for its packets on
/// another; published whole one at a time, no batch can end up waiting for one whose packets
/// are queued behind its own.
static SPREAD: Mutex<()> = Mutex::new(());

fn align(n: usize) -> usize {
    n.max(1).div_ceil(KERNARG_ALIGN) * KERNARG_ALIGN
}

/// Checks kernel node `k` as a launch on `device` would, and writes its image into `image`
/// when given; returns the packet (kernarg address `image`'s), the image's size and the
/// alignment its address needs (the kernel's `.kernarg_segment_align`, at least
/// [`KERNARG_ALIGN`]).
fn check_node(
    device: &Device,
    k: &KernelNode,
    image: Option<&mut [u8]>,
) -> HipResult<(Option<AqlPacket>, usize, usize)> {
    // SAFETY: packed arguments need no caller contract; `check_launch` checks they cover the
    // kernel's explicit arguments. The null stream only serves the check.
    let checked = unsafe {
        launch::check_launch(
            device,
            &k.function,
            LaunchRequest {
                grid: GridSize::Blocks(k.grid),
                block: k.block,
                shared_mem: k.shared_mem as usize,
                args: Args::Packed(&k.args.bytes),
                stream: std::ptr::null_mut(),
            },
            false,
        )
    }?;
    let bytes = checked.kernarg_bytes();
    let alignment = checked.kernarg_align().max(KERNARG_ALIGN);
    Ok((image.map(|image| checked.prebuild(image)), bytes, alignment))
}

/// The kernarg images as a mutable slice from `offset`, `len` bytes. Mutable from `&`: the
/// buffer is memory shared with the device, which `PoolBuffer` only owns the right to free.
///
/// # Safety
/// No packet that reads these bytes may be in flight (the caller holds the only reference to
/// the `Prebuilt`), nothing else borrows them, and `offset + len` lies inside the buffer.
#[allow(clippy::mut_from_ref)]
unsafe fn image_at(images: &PoolBuffer, offset: usize, len: usize) -> &mut [u8] {
    // SAFETY: the caller's contract; the buffer is host-accessible kernarg memory.
    unsafe { std::slice::from_raw_parts_mut(images.as_ptr().add(offset), len) }
}

impl Prebuilt {
    /// Checks every kernel node of `steps` on `device` and lays out their packets and images;
    /// plans each batch on one queue and on `lanes`.
    pub fn build(
        device: &Device,
        steps: &[Step],
        batches: &[BatchShape],
        lanes: usize,
    ) -> HipResult<Prebuilt> {
        let mut dispatches: Vec<Option<Dispatch>> = vec![None; steps.len()];
        let mut total: usize = 0;
        let mut sizes = Vec::new();
        for (at, step) in steps.iter().enumerate() {
            if let Step::Kernel(k) = step {
                let (_, bytes, alignment) = check_node(device, k, None)?;
                total = total.next_multiple_of(alignment);
                sizes.push((at, total, align(bytes)));
                total += align(bytes);
            }
        }
        let images = if total == 0 {
            None
        } else {
            Some(device.kernarg_pool.allocate(total, &[device.agent])?)
        };
        if let Some(images) = &images {
            for (at, offset, room) in sizes {
                let Step::Kernel(k) = &steps[at] else {
                    continue;
                };
                // SAFETY: the buffer was just made; nothing reads it yet; the region is inside.
                let image = unsafe { image_at(images, offset, room) };
                let (Some(packet), bytes, _) = check_node(device, k, Some(image))? else {
                    continue;
                };
                dispatches[at] = Some(Dispatch {
                    packet,
                    offset,
                    room,
                    function: k.function.clone(),
                    kernarg_bytes: bytes as u32,
                });
            }
        }
        let plans = batches
            .iter()
            .map(|b| BatchPlans {
                single: super::plan::plan(&b.deps, 1),
                spread: (lanes > 1).then(|| super::plan::plan(&b.deps, lanes)),
            })
            .collect();
        Ok(Prebuilt {
            device: device.index,
            images,
            dispatches,
            plans,
        })
    }

    /// A copy with images of its own (for a change of parameters while a launch holds these).
    pub fn copied(&self, device: &Device) -> HipResult<Prebuilt> {
        let images = match &self.images {
            None => None,
            Some(old) => {
                let new = device.kernarg_pool.allocate(old.len(), &[device.agent])?;
                // SAFETY: both are host-accessible buffers of `old.len()` bytes; the old one is
                // only read (launches read it too), the new one is not yet in use.
                unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), new.as_ptr(), old.len()) };
                Some(new)
            }
        };
        let mut dispatches = self.dispatches.clone();
        if let Some(images) = &images {
            for d in dispatches.iter_mut().flatten() {
                let address = images.as_ptr() as u64 + d.offset as u64;
                d.packet.bytes[40..48].copy_from_slice(&address.to_le_bytes());
            }
        }
        Ok(Prebuilt {
            device: self.device,
            images,
            dispatches,
            plans: self
                .plans
                .iter()
                .map(|p| BatchPlans {
                    single: p.single.clone(),
                    spread: p.spread.clone(),
                })
                .collect(),
        })
    }

    /// Rewrites kernel node `at`'s packet and image for `k`. The caller holds the only
    /// reference (no launch reads the image). Fails if `k` no longer passes a launch's checks,
    /// or needs a larger image (the caller then builds anew).
    pub fn repatch(&mut self, device: &Device, at: usize, k: &KernelNode) -> HipResult {
        let (Some(images), Some(Some(d))) = (&self.images, self.dispatches.get_mut(at)) else {
            return Err(HipError::INVALID_VALUE);
        };
        let (_, bytes, alignment) = check_node(device, k, None)?;
        if bytes > d.room || d.offset % alignment != 0 {
            return Err(HipError::INVALID_VALUE);
        }
        // SAFETY: the caller's contract: no launch holds this `Prebuilt`; inside the buffer.
        let image = unsafe { image_at(images, d.offset, d.room) };
        if let (Some(packet), bytes, _) = check_node(device, k, Some(image))? {
            d.packet = packet;
            d.kernarg_bytes = bytes as u32;
            d.function = k.function.clone();
        }
        Ok(())
    }

    /// The plan for batch `batch`, spread over `1 + branch_queues` queues if there are that
    /// many and each lane fits in a quarter of a ring (see the module comment).
    pub fn plan(&self, batch: usize, branch_queues: &[Arc<Queue>]) -> &Plan {
        let plans = &self.plans[batch];
        match &plans.spread {
            Some(spread)
                if spread.lanes.len() > 1
                    && spread.lanes.len() <= 1 + branch_queues.len()
                    && branch_queues
                        .iter()
                        .all(|q| spread.longest_lane() as u64 <= piece(q)) =>
            {
                spread
            }
            _ => &plans.single,
        }
    }

    /// Branch queues (besides the stream's) batch `batch` may spread over: 0 if it goes on
    /// the stream's queue alone.
    pub fn branch_lanes(&self, batch: usize) -> usize {
        self.plans[batch]
            .spread
            .as_ref()
            .map_or(0, |p| p.lanes.len() - 1)
    }

    /// Kernel nodes of the batches.
    pub fn kernel_count(&self) -> usize {
        self.dispatches.iter().flatten().count()
    }
}

/// Most packets published under one reservation: a quarter of the ring, so that a reservation
/// always fits (twice over while recording takes two slots per packet).
fn piece(queue: &Queue) -> u64 {
    (queue.capacity() / 4).max(1)
}

/// What [`publish`] is given: the batch's plan and nodes, the prebuilt packets, the signals
/// drawn for this launch (by [`super::plan::SignalId`]) and the queues (lane 0 the stream's).
pub struct Publication<'a> {
    pub plan: &'a Plan,
    pub nodes: &'a [usize],
    pub prebuilt: &'a Prebuilt,
    pub signals: &'a [PooledSignal],
    pub branch_queues: &'a [Arc<Queue>],
}

impl Publication<'_> {
    /// The packet `p` of lane `lane`, with the completion signal it needs (`last` for lane 0's
    /// last packet: the stream's counted completion).
    #[inline(always)]
    fn packet(&self, p: &Packet, last: Option<hsa_signal_t>) -> AqlPacket {
        let handle = |s: &usize| self.signals[*s].handle();
        match p {
            Packet::Entry { signal } => barrier_and(&[], handle(signal)),
            Packet::Wait { deps } => {
                let mut h = [hsa_signal_t::default(); crate::hsa::queue::BARRIER_DEPS];
                for (slot, d) in h.iter_mut().zip(deps) {
                    *slot = handle(d);
                }
                barrier_and(&h[..deps.len()], last.unwrap_or_default())
            }
            Packet::Node { node, signal } => {
                let Some(d) = &self.prebuilt.dispatches[self.nodes[*node]] else {
                    // Not built (a bug): an empty barrier keeps the ring and the stream whole.
                    tracing::error!(node, "internal error: a graph kernel node without a packet");
                    return barrier_and(&[], last.unwrap_or_default());
                };
                if crate::trace::recording() {
                    crate::trace::record::note_kernel(&d.function.name, d.kernarg_bytes);
                }
                let mut packet = d.packet;
                let completion = match (last, signal) {
                    (Some(last), _) => last,
                    (None, Some(s)) => handle(s),
                    (None, None) => hsa_signal_t::default(),
                };
                if completion.handle != 0 {
                    set_completion(&mut packet, completion);
                }
                packet
            }
        }
    }

    /// Writes lane `lane` on `queue`, its last packet completing `last` if given, one
    /// doorbell per piece; returns each packet's index.
    fn write_lane(
        &self,
        lane: usize,
        queue: &Queue,
        last: Option<hsa_signal_t>,
        indices: &mut Vec<u64>,
    ) {
        let packets = &self.plan.lanes[lane];
        let piece = piece(queue) as usize;
        let mut done = 0;
        while done < packets.len() {
            let count = piece.min(packets.len() - done);
            let mut slots = queue.reserve(count as u64);
            for (i, p) in packets[done..done + count].iter().enumerate() {
                let is_last = done + i + 1 == packets.len();
                let packet = self.packet(p, if is_last { last } else { None });
                indices.push(slots.write(&packet));
            }
            slots.ring();
            done += count;
        }
    }

    /// Publishes the batch: the side lanes first (their packets wait for signals only), then
    /// lane 0 on `queue`, the stream's, whose last packet completes `completion`; records
    /// every cross-queue wait for fault checks. Returns the index of lane 0's last packet.
    pub fn publish(&self, queue: &Arc<Queue>, completion: hsa_signal_t) -> u64 {
        let lanes = self.plan.lanes.len();
        if lanes == 1 {
            let packets = &self.plan.lanes[0];
            // The common case, without a list of indices.
            let piece = piece(queue) as usize;
            let mut done = 0;
            let mut last = 0;
            while done < packets.len() {
                let count = piece.min(packets.len() - done);
                let mut slots = queue.reserve(count as u64);
                for (i, p) in packets[done..done + count].iter().enumerate() {
                    let is_last = done + i + 1 == packets.len();
                    slots.write(&self.packet(p, is_last.then_some(completion)));
                }
                last = slots.ring();
                done += count;
            }
            return last;
        }
        let _spread = SPREAD.lock();
        let queues: Vec<&Arc<Queue>> = std::iter::once(queue)
            .chain(self.branch_queues.iter())
            .collect();
        let mut indices: Vec<Vec<u64>> = vec![Vec::new(); lanes];
        for (lane, out) in indices.iter_mut().enumerate().skip(1) {
            self.write_lane(lane, queues[lane], None, out);
        }
        self.write_lane(0, queue, Some(completion), &mut indices[0]);
        for (lane, packets) in self.plan.lanes.iter().enumerate() {
            for (at, p) in packets.iter().enumerate() {
                let Packet::Wait { deps } = p else { continue };
                for &s in deps {
                    let (from, position) = self.plan.producers[s];
                    if from == lane {
                        continue;
                    }
                    queues[lane].add_blocker(
                        indices[lane][at],
                        &Marker {
                            signal: self.signals[s].clone(),
                            queue: queues[from].clone(),
                            index: indices[from][position],
                        },
                    );
                }
            }
        }
        indices[0].last().copied().unwrap_or_default()
    }

    /// The ids of the queues the batch goes to, lane 0 (`queue`) first.
    pub fn queue_ids(&self, queue: &Queue) -> Vec<u64> {
        std::iter::once(queue.id)
            .chain(
                self.branch_queues
                    .iter()
                    .take(self.plan.lanes.len() - 1)
                    .map(|q| q.id),
            )
            .collect()
    }
}
