//! The kernarg segment layout: the one place that writes a kernel's arguments into kernarg
//! memory.
//!
//! Layout comes from the code object metadata ([`KernelInfo::args`]): explicit arguments at
//! their `.offset`, then hidden arguments, whose meaning is fixed by LLVM `AMDGPUUsage`
//! ("Code Object V3/V4 Metadata" and "Code Object V5 Metadata", hidden argument tables):
//!
//! | value kind                       | written here                                        |
//! |----------------------------------|-----------------------------------------------------|
//! | `hidden_block_count_{x,y,z}`     | work-groups per dimension (u32)                     |
//! | `hidden_group_size_{x,y,z}`      | work-group size per dimension (u16)                 |
//! | `hidden_remainder_{x,y,z}`       | grid size mod group size: the partial last group (u16), 0 if none |
//! | `hidden_grid_dims`               | [`LaunchGeometry::dimensions`] (u16)                |
//! | `hidden_dynamic_lds_size`        | dynamic LDS bytes of the launch (u32)               |
//! | `hidden_global_offset_{x,y,z}`   | 0: HIP has no global offsets (v4 and v5)            |
//! | `hidden_hostcall_buffer`         | the device's hostcall buffer (`devices/hostcall.rs`), a per-kernel constant set at load ([`KernargLayout::set_hostcall_buffer`]) |
//! | everything else                  | 0 (see below)                                       |
//!
//! Left 0, and so "not provided" as far as the kernel can tell: `hidden_printf_buffer`
//! (the printf buffer of OpenCL-style printf; HIP's goes through hostcall),
//! `hidden_heap_v1` (device malloc needs a runtime service the shim does not have yet),
//! `hidden_multigrid_sync_arg` (but in cooperative launches:
//! [`KernargLayout::write_multigrid_sync`]), `hidden_default_queue` /
//! `hidden_completion_action` (device-side
//! enqueue), `hidden_private_base` / `hidden_shared_base` (listed only for targets without
//! aperture registers, i.e. before gfx9), `hidden_queue_ptr` (the `hsa_queue_t` address,
//! listed when a kernel asks for the queue pointer; the geometry does not carry it yet),
//! `hidden_none` and unknown hidden kinds. A kernel that needs one of these services will
//! misbehave rather than fault; the launcher may want to refuse such kernels until they
//! are supported.
//!
//! [`write_kernargs`] is on the launch hot path: it does not allocate or log on success.

use std::ffi::c_void;
use std::fmt;

use crate::runtime::code_object::{ArgKind, HiddenArg, KernelInfo};

/// A launch's grid and work-group shape, validated once so the writer cannot fail on it.
///
/// The grid is kept in work-items, as in the AQL dispatch packet's `grid_size_*`, so both
/// HIP's grid-of-blocks launches and work-item launches with a partial last block (e.g.
/// `hipExtLaunchKernel`) are representable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchGeometry {
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    /// Work-groups per dimension, a partial last one included.
    counts: [u32; 3],
}

/// Why a launch's kernarg segment could not be written. No heap data, so returning one
/// from the hot path costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernargError {
    /// A zero dimension, a block dimension over 65535 (the AQL packet's u16), or a grid
    /// of more than u32::MAX work-items in a dimension.
    InvalidGeometry(&'static str),
    /// The output buffer is smaller than `.kernarg_segment_size`.
    BufferTooSmall { needed: u32, got: usize },
    /// `args` does not have one pointer per explicit argument.
    ArgCountMismatch { expected: usize, got: usize },
    /// The pointer for explicit argument `index` is null.
    NullArg { index: usize },
    /// Argument `index` of the metadata lies outside `.kernarg_segment_size`.
    ArgOutOfRange {
        index: usize,
        offset: u32,
        size: u32,
    },
    /// A packed argument buffer shorter than the explicit arguments' extent.
    PackedTooSmall { needed: usize, got: usize },
}

impl fmt::Display for KernargError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidGeometry(why) => write!(f, "invalid launch configuration: {why}"),
            Self::BufferTooSmall { needed, got } => {
                write!(f, "kernarg buffer of {got} bytes, kernel needs {needed}")
            }
            Self::ArgCountMismatch { expected, got } => write!(
                f,
                "kernel takes {expected} explicit arguments, {got} were passed"
            ),
            Self::NullArg { index } => write!(f, "kernel argument {index} is a null pointer"),
            Self::ArgOutOfRange {
                index,
                offset,
                size,
            } => write!(
                f,
                "kernel metadata argument {index} ({size} bytes at {offset}) lies outside \
                 the kernarg segment"
            ),
            Self::PackedTooSmall { needed, got } => write!(
                f,
                "argument buffer of {got} bytes, the explicit arguments need {needed}"
            ),
        }
    }
}

impl std::error::Error for KernargError {}

impl LaunchGeometry {
    /// HIP's `<<<grid, block, shmem>>>`: `grid_blocks` work-groups of `block` work-items.
    #[inline(always)]
    pub fn from_blocks(
        grid_blocks: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> Result<Self, KernargError> {
        let grid = Self::work_items(grid_blocks, block)?;
        Self::check(grid, block)?;
        // Whole blocks: the counts are known without dividing (this is every HIP launch).
        Ok(Self {
            grid,
            block,
            dynamic_lds,
            counts: grid_blocks,
        })
    }

    /// [`LaunchGeometry::from_blocks`] of a configuration `LaunchLimits::admit`
    /// accepted (no zero dimension, blocks of at most 1024 work-items per dimension): only
    /// the grid's size in work-items is left to check.
    #[inline(always)]
    pub fn from_admitted_blocks(
        grid_blocks: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> Result<Self, KernargError> {
        debug_assert!(Self::check(grid_blocks, block).is_ok());
        Ok(Self {
            grid: Self::work_items(grid_blocks, block)?,
            block,
            dynamic_lds,
            counts: grid_blocks,
        })
    }

    /// The grid's size in work-items per dimension, refused past what a packet holds.
    #[inline(always)]
    fn work_items(grid_blocks: [u32; 3], block: [u32; 3]) -> Result<[u32; 3], KernargError> {
        let items: [u64; 3] =
            std::array::from_fn(|d| u64::from(grid_blocks[d]) * u64::from(block[d]));
        if (items[0] | items[1] | items[2]) > u64::from(u32::MAX) {
            return Err(KernargError::InvalidGeometry(
                "grid has more than 2^32-1 work-items in a dimension",
            ));
        }
        Ok(items.map(|n| n as u32))
    }

    /// A grid of `grid` work-items per dimension (as in the AQL packet) in work-groups of
    /// `block`; a grid that is not a multiple of the block has a partial last work-group.
    pub fn from_work_items(
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> Result<Self, KernargError> {
        Self::check(grid, block)?;
        Ok(Self {
            grid,
            block,
            dynamic_lds,
            counts: [0, 1, 2].map(|d| grid[d].div_ceil(block[d])),
        })
    }

    #[inline(always)]
    fn check(grid: [u32; 3], block: [u32; 3]) -> Result<(), KernargError> {
        if grid[0].min(grid[1]).min(grid[2]) == 0 {
            return Err(KernargError::InvalidGeometry("grid dimension is 0"));
        }
        if block[0].min(block[1]).min(block[2]) == 0 {
            return Err(KernargError::InvalidGeometry("block dimension is 0"));
        }
        if block[0].max(block[1]).max(block[2]) > u32::from(u16::MAX) {
            return Err(KernargError::InvalidGeometry(
                "block dimension exceeds 65535",
            ));
        }
        Ok(())
    }

    /// Work-items per dimension (the AQL packet's `grid_size_x/y/z`).
    pub fn grid_size(&self) -> [u32; 3] {
        self.grid
    }

    /// Work-group size per dimension (the AQL packet's `workgroup_size_x/y/z`); each fits
    /// in a u16.
    pub fn block(&self) -> [u32; 3] {
        self.block
    }

    /// Dynamic LDS bytes requested by the launch (add to the kernel's static group
    /// segment size for the packet's `group_segment_size`).
    pub fn dynamic_lds(&self) -> u32 {
        self.dynamic_lds
    }

    /// Work-groups per dimension, a partial last group included.
    pub fn block_counts(&self) -> [u32; 3] {
        self.counts
    }

    /// Work-items in the partial last work-group per dimension, 0 if the grid divides
    /// evenly.
    pub fn remainders(&self) -> [u32; 3] {
        // From the counts, without a division: the launch path writes these every time.
        let remainder = |d: usize| {
            let whole = (self.counts[d] - 1) * self.block[d];
            match self.grid[d] - whole {
                last if last == self.block[d] => 0,
                last => last,
            }
        };
        [remainder(0), remainder(1), remainder(2)]
    }

    /// The number of grid dimensions in use: 3 if the grid has more than one work-item in
    /// z, else 2 if it has more than one in y, else 1. The launcher should put the same
    /// value in the AQL packet's `setup` field so the kernel sees one consistent answer.
    pub fn dimensions(&self) -> u16 {
        if self.grid[2] > 1 {
            3
        } else if self.grid[1] > 1 {
            2
        } else {
            1
        }
    }
}

/// Which value a launch gives a hidden argument (block counts, group sizes and remainders x, y,
/// z, grid dimensions, dynamic LDS: [`LaunchGeometry::hidden_value`]), or `None` for the
/// hidden arguments that read 0 (see the module documentation): the segment is zeroed before
/// anything is written, so they need no slot of their own.
fn hidden_value_index(arg: &HiddenArg) -> Option<u8> {
    Some(match arg {
        HiddenArg::BlockCountX => 0,
        HiddenArg::BlockCountY => 1,
        HiddenArg::BlockCountZ => 2,
        HiddenArg::GroupSizeX => 3,
        HiddenArg::GroupSizeY => 4,
        HiddenArg::GroupSizeZ => 5,
        HiddenArg::RemainderX => 6,
        HiddenArg::RemainderY => 7,
        HiddenArg::RemainderZ => 8,
        HiddenArg::GridDims => 9,
        HiddenArg::DynamicLdsSize => 10,
        // HIP launches have no global offset.
        HiddenArg::GlobalOffsetX | HiddenArg::GlobalOffsetY | HiddenArg::GlobalOffsetZ => {
            return None
        }
        // Not provided yet; see the module documentation.
        HiddenArg::HeapV1
        | HiddenArg::HostcallBuffer
        | HiddenArg::PrintfBuffer
        | HiddenArg::MultigridSyncArg
        | HiddenArg::DefaultQueue
        | HiddenArg::CompletionAction
        | HiddenArg::PrivateBase
        | HiddenArg::SharedBase
        | HiddenArg::QueuePtr
        | HiddenArg::None
        | HiddenArg::Unknown(_) => return None,
    })
}

impl LaunchGeometry {
    /// The value a launch gives the hidden argument numbered `index` by [`hidden_value_index`].
    #[inline]
    fn hidden_value(&self, index: u8) -> u32 {
        match index {
            0..=2 => self.counts[index as usize],
            3..=5 => self.block[index as usize - 3],
            6..=8 => self.remainders()[index as usize - 6],
            9 => u32::from(self.dimensions()),
            _ => self.dynamic_lds,
        }
    }
}

/// Where the nine hidden arguments every code object v5 kernel has (block counts as u32, then
/// group sizes and remainders as u16, x/y/z each) start, if they sit together in that order
/// as LLVM lays them out: a launch writes them as one block instead of one by one.
fn geometry_block_at(hidden: &[(Slot, u8)]) -> Option<u32> {
    let start = hidden.iter().find(|(_, index)| *index == 0)?.0.offset;
    let expected = (0u8..9).map(|index| {
        let (offset, size) = match index {
            0..=2 => (4 * u32::from(index), 4),
            _ => (12 + 2 * (u32::from(index) - 3), 2),
        };
        (start + offset, size, index)
    });
    expected
        .into_iter()
        .all(|(offset, size, index)| {
            hidden
                .iter()
                .any(|(slot, i)| *i == index && slot.offset == offset && slot.size == size)
        })
        .then_some(start)
}

/// Bytes of the block [`geometry_block_at`] finds.
const GEOMETRY_BLOCK_BYTES: u32 = 24;

/// Where one argument goes in the segment. Offsets and sizes are within the segment (checked
/// when the layout is made), so the writer indexes without checks that can fail.
#[derive(Debug, Clone, Copy)]
struct Slot {
    offset: u32,
    size: u32,
}

/// A kernel's kernarg segment, checked once when the kernel is loaded: every argument lies
/// inside `.kernarg_segment_size`, explicit arguments in order and the hidden ones the
/// runtime fills. A launch then only checks what the application passed ([`Self::check`])
/// and writes ([`Self::write`]).
#[derive(Debug, Clone)]
pub struct KernargLayout {
    size: u32,
    explicit: Box<[Slot]>,
    /// Hidden arguments with a value, outside the geometry block: their place and which of
    /// the launch's values.
    hidden: Box<[(Slot, u8)]>,
    /// Where the code object v5 geometry block starts, if the kernel has one.
    geometry_block: Option<u32>,
    /// Bytes a packed argument buffer must have: the end of the last explicit argument.
    explicit_extent: usize,
    /// Where `hidden_multigrid_sync_arg` is, if the kernel has it: written by cooperative
    /// launches only ([`Self::write_multigrid_sync`]), 0 otherwise.
    multigrid_sync: Option<Slot>,
    /// Hidden arguments whose value is the same for every launch of the kernel on its device,
    /// set once it is loaded (the hostcall buffer); empty for most kernels.
    constants: Vec<(Slot, u64)>,
    /// Where `hidden_hostcall_buffer` goes, if the kernel has it.
    hostcall_slot: Option<Slot>,
    /// Whether a launch leaves bytes of the segment unwritten (padding, hidden arguments that
    /// read 0), so that [`Self::write`] zeroes the segment first; most kernels with only a
    /// few explicit arguments write every byte and skip that.
    zero_first: bool,
}

impl KernargLayout {
    pub fn new(kernel: &KernelInfo) -> Result<KernargLayout, KernargError> {
        let mut explicit = Vec::new();
        let mut hidden = Vec::new();
        let mut multigrid_sync = None;
        let mut hostcall_slot = None;
        for (index, arg) in kernel.args.iter().enumerate() {
            if u64::from(arg.offset) + u64::from(arg.size) > u64::from(kernel.kernarg_size) {
                return Err(KernargError::ArgOutOfRange {
                    index,
                    offset: arg.offset,
                    size: arg.size,
                });
            }
            let slot = Slot {
                offset: arg.offset,
                size: arg.size,
            };
            match &arg.kind {
                ArgKind::Hidden(HiddenArg::MultigridSyncArg) => multigrid_sync = Some(slot),
                ArgKind::Hidden(h) => {
                    if let Some(value) = hidden_value_index(h) {
                        hidden.push((slot, value));
                    }
                    if *h == HiddenArg::HostcallBuffer {
                        hostcall_slot = Some(slot);
                    }
                }
                _ => explicit.push(slot),
            }
        }
        let explicit_extent = explicit
            .iter()
            .map(|s| s.offset as usize + s.size as usize)
            .max()
            .unwrap_or(0);
        let geometry_block = geometry_block_at(&hidden);
        if let Some(start) = geometry_block {
            hidden.retain(|(slot, index)| {
                !(*index < 9 && (start..start + GEOMETRY_BLOCK_BYTES).contains(&slot.offset))
            });
        }
        let mut written = vec![false; kernel.kernarg_size as usize];
        let mut cover = |offset: u32, len: u32| {
            for byte in written.iter_mut().skip(offset as usize).take(len as usize) {
                *byte = true;
            }
        };
        for slot in &explicit {
            cover(slot.offset, slot.size);
        }
        if let Some(start) = geometry_block {
            cover(start, GEOMETRY_BLOCK_BYTES);
        }
        for (slot, _) in &hidden {
            // `write` fills at most 8 bytes of a hidden argument (see there).
            cover(slot.offset, slot.size.min(8));
        }
        let zero_first = written.iter().any(|&byte| !byte);
        Ok(KernargLayout {
            size: kernel.kernarg_size,
            explicit: explicit.into(),
            hidden: hidden.into(),
            geometry_block,
            explicit_extent,
            multigrid_sync,
            constants: Vec::new(),
            hostcall_slot,
            zero_first,
        })
    }

    /// Writes `value` to `hidden_multigrid_sync_arg` in a segment [`Self::write`] wrote, if
    /// the kernel has that argument: what a cooperative launch passes the device library's
    /// grid and multi-grid functions (see `runtime/kernel/cooperative.rs`).
    ///
    /// # Panics
    /// If `out` is shorter than the segment (callers hand in a whole kernarg slot).
    pub fn write_multigrid_sync(&self, out: &mut [u8], value: u64) {
        let Some(slot) = self.multigrid_sync else {
            return;
        };
        let at = slot.offset as usize;
        let len = (slot.size as usize).min(8);
        out[..self.size as usize][at..at + len].copy_from_slice(&value.to_le_bytes()[..len]);
    }

    /// Whether the kernel takes `hidden_hostcall_buffer` (it may call the host: printf,
    /// assert).
    pub fn wants_hostcall_buffer(&self) -> bool {
        self.hostcall_slot.is_some()
    }

    /// Every launch passes `address` as the kernel's `hidden_hostcall_buffer` (if it has one).
    pub fn set_hostcall_buffer(&mut self, address: u64) {
        if let Some(slot) = self.hostcall_slot {
            self.constants.retain(|(s, _)| s.offset != slot.offset);
            self.constants.push((slot, address));
        }
    }

    /// `.kernarg_segment_size`.
    pub fn size(&self) -> usize {
        self.size as usize
    }

    /// Number of arguments the application passes (HIP's `void **args` has one pointer per
    /// explicit argument, in order).
    pub fn explicit_count(&self) -> usize {
        self.explicit.len()
    }

    /// Copies the explicit arguments `args` points to into a buffer laid out as the segment's
    /// explicit part (each argument at its own offset, padding 0): the packed form
    /// ([`ArgSource::Packed`]) a graph's kernel node keeps, so that later launches need no
    /// pointer from the program.
    ///
    /// # Safety
    /// As for [`Self::write`] with [`ArgSource::Pointers`]: each non-null pointer is readable
    /// for its argument's size.
    pub unsafe fn pack(&self, args: &[*const c_void]) -> Result<Vec<u8>, KernargError> {
        self.check(ArgSource::Pointers(args))?;
        let mut packed = vec![0u8; self.explicit_extent];
        for (p, slot) in args.iter().zip(self.explicit.iter()) {
            let (at, len) = (slot.offset as usize, slot.size as usize);
            if len == 0 {
                continue;
            }
            // SAFETY: `check` found `p` non-null, the caller's contract makes it readable for
            // `len` bytes, and the slot lies inside `explicit_extent`.
            let value = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
            packed[at..at + len].copy_from_slice(value);
        }
        Ok(packed)
    }

    /// Each explicit argument's offset in the segment, in order.
    pub fn explicit_offsets(&self) -> impl Iterator<Item = usize> + '_ {
        self.explicit.iter().map(|slot| slot.offset as usize)
    }

    /// Bytes a packed argument buffer must have (see [`Self::pack`]).
    pub fn explicit_extent(&self) -> usize {
        self.explicit_extent
    }

    /// Whether `source` can be written: one non-null pointer per explicit argument that has
    /// bytes, or a packed buffer covering every explicit argument.
    #[inline(always)]
    pub fn check(&self, source: ArgSource<'_>) -> Result<(), KernargError> {
        match source {
            ArgSource::Pointers(args) => {
                if args.len() != self.explicit.len() {
                    return Err(KernargError::ArgCountMismatch {
                        expected: self.explicit.len(),
                        got: args.len(),
                    });
                }
                for (index, (p, slot)) in args.iter().zip(self.explicit.iter()).enumerate() {
                    if p.is_null() && slot.size > 0 {
                        return Err(KernargError::NullArg { index });
                    }
                }
                Ok(())
            }
            ArgSource::Packed(buffer) if buffer.len() < self.explicit_extent => {
                Err(KernargError::PackedTooSmall {
                    needed: self.explicit_extent,
                    got: buffer.len(),
                })
            }
            ArgSource::Packed(_) => Ok(()),
        }
    }

    /// Writes one launch's segment into `out[..size]`: zeroes it where the launch leaves bytes
    /// unwritten (hidden arguments the runtime does not provide, and padding, read 0), copies
    /// each explicit argument to its offset and fills the hidden arguments from `geometry` in
    /// their own widths. Bytes of `out` past the segment are not touched.
    ///
    /// # Safety
    /// `source` passed [`Self::check`], and for [`ArgSource::Pointers`] each pointer is
    /// readable for its argument's size (HIP's `kernelParams` contract).
    ///
    /// # Panics
    /// If `out` is shorter than the segment (callers hand in a whole kernarg slot).
    #[inline(always)]
    pub unsafe fn write(&self, source: ArgSource<'_>, geometry: &LaunchGeometry, out: &mut [u8]) {
        let segment = &mut out[..self.size as usize];
        if self.zero_first {
            segment.fill(0);
        }
        let base = segment.as_mut_ptr();
        for (i, slot) in self.explicit.iter().enumerate() {
            let len = slot.size as usize;
            // SAFETY: every slot lies inside the segment (checked when the layout was made)
            // and `segment` is borrowed mutably, so nothing else writes there. `src` is
            // readable for `len` bytes: the caller's contract for pointers (`check` counted
            // one per slot); for a packed buffer, `check` found it covers every slot.
            unsafe {
                let dst = base.add(slot.offset as usize);
                let src: *const u8 = match source {
                    ArgSource::Pointers(args) => (*args.get_unchecked(i)).cast(),
                    ArgSource::Packed(buffer) => buffer.as_ptr().add(slot.offset as usize),
                };
                match len {
                    4 => dst
                        .cast::<u32>()
                        .write_unaligned(src.cast::<u32>().read_unaligned()),
                    8 => dst
                        .cast::<u64>()
                        .write_unaligned(src.cast::<u64>().read_unaligned()),
                    _ => std::ptr::copy_nonoverlapping(src, dst, len),
                }
            }
        }
        if let Some(start) = self.geometry_block {
            let [cx, cy, cz] = geometry.counts;
            let [bx, by, bz] = geometry.block;
            let [rx, ry, rz] = geometry.remainders();
            let mut bytes = [0u8; GEOMETRY_BLOCK_BYTES as usize];
            for (at, count) in [cx, cy, cz].into_iter().enumerate() {
                bytes[4 * at..4 * at + 4].copy_from_slice(&count.to_le_bytes());
            }
            for (at, value) in [bx, by, bz, rx, ry, rz].into_iter().enumerate() {
                bytes[12 + 2 * at..14 + 2 * at].copy_from_slice(&(value as u16).to_le_bytes());
            }
            // SAFETY: the block's slots were found inside the segment (checked when the layout
            // was made), so its 24 bytes are too.
            unsafe {
                base.add(start as usize)
                    .cast::<[u8; GEOMETRY_BLOCK_BYTES as usize]>()
                    .write_unaligned(bytes)
            };
        }
        for &(slot, index) in self.hidden.iter() {
            let value = geometry.hidden_value(index);
            // SAFETY: as above, the slot lies inside the segment. Each value fits its
            // argument's width (the geometry is validated); a wider slot keeps zeros above
            // the value.
            unsafe {
                let dst = base.add(slot.offset as usize);
                match slot.size {
                    2 => dst.cast::<u16>().write_unaligned((value as u16).to_le()),
                    4 => dst.cast::<u32>().write_unaligned(value.to_le()),
                    len => {
                        let wide = u64::from(value).to_le_bytes();
                        std::ptr::copy_nonoverlapping(wide.as_ptr(), dst, (len as usize).min(8));
                    }
                }
            }
        }
        for &(slot, value) in self.constants.iter() {
            let wide = value.to_le_bytes();
            // SAFETY: as above, the slot lies inside the segment.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    wide.as_ptr(),
                    base.add(slot.offset as usize),
                    (slot.size as usize).min(8),
                )
            };
        }
    }
}

/// Writes `kernel`'s kernarg segment for one launch into `out[..kernel.kernarg_size]`
/// ([`KernargLayout::write`]) after checking the layout, the arguments and the buffer: on
/// error `out` is unchanged. Launches use the kernel's layout made at load instead.
///
/// # Safety
/// `args` is HIP's `void **kernelParams`: for every explicit argument `i` (in metadata
/// order), `args[i]` must be null or point to at least that argument's metadata `.size`
/// readable bytes (the value of the i-th kernel parameter). Null pointers are reported as
/// errors; any other invalid pointer is undefined behaviour.
pub unsafe fn write_kernargs(
    kernel: &KernelInfo,
    args: &[*const c_void],
    geometry: &LaunchGeometry,
    out: &mut [u8],
) -> Result<(), KernargError> {
    let layout = KernargLayout::new(kernel)?;
    if out.len() < layout.size() {
        return Err(KernargError::BufferTooSmall {
            needed: kernel.kernarg_size,
            got: out.len(),
        });
    }
    let source = ArgSource::Pointers(args);
    layout.check(source)?;
    // SAFETY: checked above; the pointers are readable per the caller's contract.
    unsafe { layout.write(source, geometry, out) };
    Ok(())
}

/// Where a launch's explicit argument values come from.
#[derive(Debug, Clone, Copy)]
pub enum ArgSource<'a> {
    /// HIP's `void **kernelParams`: one pointer per explicit argument, in order.
    Pointers(&'a [*const c_void]),
    /// `hipModuleLaunchKernel`'s `HIP_LAUNCH_PARAM_BUFFER_POINTER`: the explicit arguments
    /// already laid out at their kernarg offsets (the segment's explicit part).
    Packed(&'a [u8]),
}

/// Why a launch configuration is refused (`launch::check_configuration` tells which). The
/// error a program sees for each depends on its ROCm ABI (`compat::Abi::launch_error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A grid or block dimension is 0.
    ZeroDimension,
    /// A block dimension over 1024, or over 1024 threads: more than the device allows.
    BlockOverDeviceLimit,
    /// More threads than the kernel's `max_flat_workgroup_size` (`__launch_bounds__`).
    BlockOverLaunchBounds,
    /// More blocks in a dimension than the device reports as `maxGridSize`.
    GridOverDeviceLimit,
    /// Static plus dynamic shared memory over the device's LDS.
    SharedMemoryOverDeviceLimit,
}

impl Refusal {
    /// The reason, for the log line of the refusal.
    pub fn why(self) -> &'static str {
        match self {
            Refusal::ZeroDimension => "a grid or block dimension is 0",
            Refusal::BlockOverDeviceLimit => "the block has more threads than the device allows",
            Refusal::BlockOverLaunchBounds => {
                "the block has more threads than the kernel's launch bounds"
            }
            Refusal::GridOverDeviceLimit => {
                "the grid has more blocks in a dimension than the device's maxGridSize"
            }
            Refusal::SharedMemoryOverDeviceLimit => {
                "static plus dynamic shared memory exceeds the device's LDS"
            }
        }
    }
}

/// Most work-items a workgroup may have on the devices hipshim targets (also the limit of
/// each block dimension).
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// What a launch of one kernel on one device is checked against, worked out when the kernel
/// is first resolved there (`module::Kernel`): `launch::check_configuration`'s
/// limits in the form of one branch-free test ([`LaunchLimits::admit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchLimits {
    /// Threads a block may have: the kernel's `max_flat_workgroup_size` (up to 1024), or 0
    /// when its static LDS alone exceeds the device's (no launch passes).
    max_threads: u32,
    /// Blocks per grid dimension: the device's `maxGridSize`.
    max_grid: [u32; 3],
    /// Dynamic LDS bytes a launch may ask for: the device's LDS less the kernel's static LDS.
    max_dynamic_lds: u64,
}

impl LaunchLimits {
    pub fn new(info: &KernelInfo, device_lds: u32, max_grid: [i32; 3]) -> LaunchLimits {
        let max_threads = match info.max_flat_workgroup_size {
            0 => MAX_BLOCK_THREADS,
            n => (n as u64).min(MAX_BLOCK_THREADS),
        } as u32;
        let static_lds = u64::from(info.group_segment_fixed_size);
        let device_lds = u64::from(device_lds);
        LaunchLimits {
            max_threads: if static_lds > device_lds {
                0
            } else {
                max_threads
            },
            max_grid: max_grid.map(|n| n.max(0) as u32),
            max_dynamic_lds: device_lds.saturating_sub(static_lds),
        }
    }

    /// Whether `launch::check_configuration` accepts the launch (it names the reason otherwise):
    /// the same limits, tested with wrapping arithmetic so that a zero dimension fails with
    /// the too-large ones, and without a branch per condition.
    #[inline(always)]
    pub fn admit(&self, grid: [u32; 3], block: [u32; 3], shared_mem: usize) -> bool {
        let ([gx_, gy_, gz_], [bx, by, bz]) = (grid, block);
        let largest_block = (bx.wrapping_sub(1))
            .max(by.wrapping_sub(1))
            .max(bz.wrapping_sub(1));
        // Each factor is at most 1024 when `largest_block` passes: no overflow then.
        let threads = bx.wrapping_mul(by).wrapping_mul(bz);
        let [gx, gy, gz] = self.max_grid;
        (largest_block < MAX_BLOCK_THREADS as u32)
            & (threads <= self.max_threads)
            & (gx_.wrapping_sub(1) < gx)
            & (gy_.wrapping_sub(1) < gy)
            & (gz_.wrapping_sub(1) < gz)
            & (shared_mem as u64 <= self.max_dynamic_lds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::code_object::test_support::built;
    use crate::runtime::code_object::{read_code_object, KernelArg};

    fn kernel(elf: &[u8], name: &str) -> KernelInfo {
        read_code_object(elf)
            .unwrap()
            .kernel(name)
            .unwrap_or_else(|| panic!("no kernel {name}"))
            .clone()
    }

    /// Little-endian value of the hidden argument `h`, read at its metadata offset/size.
    fn hidden(k: &KernelInfo, seg: &[u8], h: HiddenArg) -> u64 {
        let a = k
            .args
            .iter()
            .find(|a| a.kind == ArgKind::Hidden(h.clone()))
            .unwrap_or_else(|| panic!("{} has no {h:?}", k.name));
        let mut v = [0u8; 8];
        let n = (a.size as usize).min(8);
        v[..n].copy_from_slice(&seg[a.offset as usize..a.offset as usize + n]);
        u64::from_le_bytes(v)
    }

    #[repr(C)]
    struct S {
        c: i8,
        d: f64,
    }

    #[test]
    fn explicit_args_land_at_their_metadata_offsets() {
        let k = kernel(&built().co_v5, "scale");
        let out_ptr: u64 = 0x7f00_dead_beef_0000;
        let n: i32 = 12345;
        let s = S { c: -7, d: 2.5 };
        let f: f32 = 1.5;
        let args = [
            (&out_ptr as *const u64).cast::<c_void>(),
            (&n as *const i32).cast(),
            (&s as *const S).cast(),
            (&f as *const f32).cast(),
        ];
        let geometry = LaunchGeometry::from_blocks([4, 1, 1], [256, 1, 1], 0).unwrap();
        let mut buf = vec![0xaa_u8; k.kernarg_size as usize + 16];
        // SAFETY: one pointer per explicit argument, each to a value of the parameter type.
        unsafe { write_kernargs(&k, &args, &geometry, &mut buf) }.unwrap();

        assert_eq!(buf[0..8], out_ptr.to_le_bytes());
        assert_eq!(buf[8..12], n.to_le_bytes());
        assert_eq!(buf[12..16], [0; 4], "padding reads 0");
        assert_eq!(buf[16] as i8, -7);
        assert_eq!(buf[24..32], 2.5f64.to_le_bytes());
        assert_eq!(buf[32..36], 1.5f32.to_le_bytes());
        let seg = &buf[..k.kernarg_size as usize];
        assert_eq!(hidden(&k, seg, HiddenArg::BlockCountX), 4);
        assert_eq!(hidden(&k, seg, HiddenArg::BlockCountY), 1);
        assert_eq!(hidden(&k, seg, HiddenArg::GroupSizeX), 256);
        assert_eq!(hidden(&k, seg, HiddenArg::GroupSizeZ), 1);
        assert_eq!(hidden(&k, seg, HiddenArg::RemainderX), 0);
        assert_eq!(hidden(&k, seg, HiddenArg::GlobalOffsetX), 0);
        assert_eq!(hidden(&k, seg, HiddenArg::GridDims), 1);
        assert!(
            buf[k.kernarg_size as usize..].iter().all(|&b| b == 0xaa),
            "bytes past the segment are untouched"
        );
    }

    #[test]
    fn ragged_3d_launch_fills_block_counts_group_sizes_and_remainders() {
        let k = kernel(&built().co_v5, "fill3d");
        let out_ptr: u64 = 0x1000;
        let (py, pz): (i32, i32) = (100, 700);
        let args = [
            (&out_ptr as *const u64).cast::<c_void>(),
            (&py as *const i32).cast(),
            (&pz as *const i32).cast(),
        ];
        // 100 x 7 x 3 work-items in 16 x 4 x 2 groups: 7 x 2 x 2 groups, the last ones
        // partial with 4 x 3 x 1 work-items.
        let g = LaunchGeometry::from_work_items([100, 7, 3], [16, 4, 2], 0).unwrap();
        assert_eq!(g.block_counts(), [7, 2, 2]);
        assert_eq!(g.remainders(), [4, 3, 1]);
        let mut buf = vec![0xcc_u8; k.kernarg_size as usize];
        // SAFETY: one pointer per explicit argument, each to a value of the parameter type.
        unsafe { write_kernargs(&k, &args, &g, &mut buf) }.unwrap();
        let expect = [
            (HiddenArg::BlockCountX, 7),
            (HiddenArg::BlockCountY, 2),
            (HiddenArg::BlockCountZ, 2),
            (HiddenArg::GroupSizeX, 16),
            (HiddenArg::GroupSizeY, 4),
            (HiddenArg::GroupSizeZ, 2),
            (HiddenArg::RemainderX, 4),
            (HiddenArg::RemainderY, 3),
            (HiddenArg::RemainderZ, 1),
            (HiddenArg::GlobalOffsetX, 0),
            (HiddenArg::GlobalOffsetY, 0),
            (HiddenArg::GlobalOffsetZ, 0),
            (HiddenArg::GridDims, 3),
        ];
        for (h, v) in expect {
            assert_eq!(hidden(&k, &buf, h.clone()), v, "{h:?}");
        }
        assert_eq!(buf[8..12], 100i32.to_le_bytes());
        assert_eq!(buf[12..16], 700i32.to_le_bytes());
    }

    #[test]
    fn the_v5_geometry_block_writes_what_the_slots_would() {
        let k = kernel(&built().co_v5, "fill3d");
        let fast = KernargLayout::new(&k).unwrap();
        assert!(
            fast.geometry_block.is_some(),
            "LLVM's v5 layout is recognised"
        );
        let mut slow = fast.clone();
        slow.geometry_block = None;
        slow.hidden = k
            .args
            .iter()
            .filter_map(|a| match &a.kind {
                ArgKind::Hidden(h) => hidden_value_index(h).map(|i| {
                    let slot = Slot {
                        offset: a.offset,
                        size: a.size,
                    };
                    (slot, i)
                }),
                _ => None,
            })
            .collect();
        let out_ptr: u64 = 0x1000;
        let (py, pz): (i32, i32) = (3, 4);
        let args = [
            (&out_ptr as *const u64).cast::<c_void>(),
            (&py as *const i32).cast(),
            (&pz as *const i32).cast(),
        ];
        for g in [
            LaunchGeometry::from_work_items([100, 7, 3], [16, 4, 2], 0).unwrap(),
            LaunchGeometry::from_blocks([5, 6, 7], [8, 4, 2], 64).unwrap(),
        ] {
            let mut a = vec![0x11_u8; k.kernarg_size as usize];
            let mut b = vec![0x22_u8; k.kernarg_size as usize];
            let source = ArgSource::Pointers(&args);
            // SAFETY: one pointer per explicit argument, each to a value of its type.
            unsafe {
                fast.write(source, &g, &mut a);
                slow.write(source, &g, &mut b);
            }
            assert_eq!(a, b, "{g:?}");
        }
    }

    #[test]
    fn services_not_provided_read_zero() {
        for (elf, v) in [(&built().co_v5, 5), (&built().co_v4, 4)] {
            let k = kernel(elf, "implicit");
            let p: u64 = 0x2000;
            let args = [(&p as *const u64).cast::<c_void>()];
            let g = LaunchGeometry::from_blocks([3, 2, 1], [64, 1, 1], 512).unwrap();
            let mut buf = vec![0xee_u8; k.kernarg_size as usize];
            // SAFETY: one pointer per explicit argument, to a value of the parameter type.
            unsafe { write_kernargs(&k, &args, &g, &mut buf) }.unwrap();
            for a in &k.args[1..] {
                let ArgKind::Hidden(h) = &a.kind else {
                    panic!("explicit after hidden")
                };
                let value = hidden(&k, &buf, h.clone());
                let want = match h {
                    HiddenArg::BlockCountX => 3,
                    HiddenArg::BlockCountY => 2,
                    HiddenArg::BlockCountZ => 1,
                    HiddenArg::GroupSizeX => 64,
                    HiddenArg::GroupSizeY | HiddenArg::GroupSizeZ => 1,
                    HiddenArg::GridDims => 2,
                    _ => 0,
                };
                assert_eq!(value, want, "v{v} {h:?}");
            }
            // Reserved space between listed arguments is zero too.
            assert!(buf[8..].iter().filter(|&&b| b == 0xee).count() == 0, "v{v}");
        }
    }

    /// A synthetic kernel with a dynamic-LDS hidden argument (clang-19 does not list it
    /// for plain `extern __shared__` use) and deliberately odd widths.
    fn synthetic() -> KernelInfo {
        let arg = |offset, size, kind| KernelArg { offset, size, kind };
        KernelInfo {
            name: "synthetic".into(),
            symbol: "synthetic.kd".into(),
            kernarg_size: 64,
            kernarg_align: 8,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: 1024,
            wavefront_size: 64,
            uses_dynamic_stack: false,
            uniform_work_group_size: false,
            sgpr_count: 0,
            vgpr_count: 0,
            agpr_count: 0,
            args: vec![
                arg(0, 2, ArgKind::ByValue),
                arg(8, 0, ArgKind::ByValue), // empty struct
                arg(16, 4, ArgKind::Hidden(HiddenArg::DynamicLdsSize)),
                arg(20, 2, ArgKind::Hidden(HiddenArg::GroupSizeX)),
                arg(24, 16, ArgKind::Hidden(HiddenArg::BlockCountX)), // wider than the value
                arg(
                    40,
                    8,
                    ArgKind::Hidden(HiddenArg::Unknown("hidden_future".into())),
                ),
                arg(48, 8, ArgKind::Hidden(HiddenArg::PrintfBuffer)),
            ],
        }
    }

    #[test]
    fn dynamic_lds_and_widths_follow_the_metadata() {
        let k = synthetic();
        assert_eq!(k.explicit_arg_count(), 2);
        let x: u16 = 0xbeef;
        let args = [(&x as *const u16).cast::<c_void>(), std::ptr::null()];
        let g = LaunchGeometry::from_blocks([70000, 1, 1], [1024, 1, 1], 4096).unwrap();
        let mut buf = [0xff_u8; 64];
        // SAFETY: the first pointer is to a u16; the second argument has size 0 and is
        // never read.
        unsafe { write_kernargs(&k, &args, &g, &mut buf) }.unwrap();
        assert_eq!(buf[0..2], 0xbeef_u16.to_le_bytes());
        assert_eq!(buf[2..16], [0; 14]);
        assert_eq!(buf[16..20], 4096u32.to_le_bytes());
        assert_eq!(buf[20..22], 1024u16.to_le_bytes());
        assert_eq!(buf[24..28], 70000u32.to_le_bytes());
        assert_eq!(buf[28..64], [0; 36]);
    }

    #[test]
    fn the_hostcall_buffer_is_a_constant_set_at_load() {
        let mut k = synthetic();
        k.args.push(KernelArg {
            offset: 56,
            size: 8,
            kind: ArgKind::Hidden(HiddenArg::HostcallBuffer),
        });
        let x: u16 = 1;
        let args = [(&x as *const u16).cast::<c_void>(), std::ptr::null()];
        let g = LaunchGeometry::from_blocks([1, 1, 1], [64, 1, 1], 0).unwrap();
        let mut layout = KernargLayout::new(&k).unwrap();
        assert!(layout.wants_hostcall_buffer());
        let mut buf = [0xff_u8; 64];
        // SAFETY: as in `dynamic_lds_and_widths_follow_the_metadata`.
        unsafe { layout.write(ArgSource::Pointers(&args), &g, &mut buf) };
        assert_eq!(buf[56..64], [0; 8], "0 until the runtime sets it");
        layout.set_hostcall_buffer(0x7f00_1234_5000);
        layout.set_hostcall_buffer(0x7f00_1234_6000);
        // SAFETY: as above.
        unsafe { layout.write(ArgSource::Pointers(&args), &g, &mut buf) };
        assert_eq!(buf[56..64], 0x7f00_1234_6000u64.to_le_bytes());
        assert!(!KernargLayout::new(&synthetic())
            .unwrap()
            .wants_hostcall_buffer());
    }

    #[test]
    fn bad_calls_are_errors_and_leave_the_buffer_alone() {
        let k = synthetic();
        let x: u16 = 1;
        let good = [(&x as *const u16).cast::<c_void>(), std::ptr::null()];
        let g = LaunchGeometry::from_blocks([1, 1, 1], [64, 1, 1], 0).unwrap();
        let mut buf = [0x5a_u8; 64];
        let call = |args: &[*const c_void], k: &KernelInfo, buf: &mut [u8]| {
            // SAFETY: every non-null pointer is to a u16 and only argument 0 has a size.
            unsafe { write_kernargs(k, args, &g, buf) }
        };
        assert_eq!(
            call(&good[..1], &k, &mut buf),
            Err(KernargError::ArgCountMismatch {
                expected: 2,
                got: 1
            })
        );
        assert_eq!(
            call(&[std::ptr::null(), std::ptr::null()], &k, &mut buf),
            Err(KernargError::NullArg { index: 0 })
        );
        assert_eq!(
            call(&good, &k, &mut buf[..63]),
            Err(KernargError::BufferTooSmall {
                needed: 64,
                got: 63
            })
        );
        let mut bad = k.clone();
        bad.args[6].offset = 60;
        assert_eq!(
            call(&good, &bad, &mut buf),
            Err(KernargError::ArgOutOfRange {
                index: 6,
                offset: 60,
                size: 8
            })
        );
        assert!(buf.iter().all(|&b| b == 0x5a), "buffer written on error");
        assert!(call(&good, &k, &mut buf).is_ok());
    }

    #[test]
    fn geometry_is_validated() {
        use KernargError::InvalidGeometry;
        assert!(matches!(
            LaunchGeometry::from_blocks([0, 1, 1], [1, 1, 1], 0),
            Err(InvalidGeometry(_))
        ));
        assert!(matches!(
            LaunchGeometry::from_blocks([1, 1, 1], [1, 0, 1], 0),
            Err(InvalidGeometry(_))
        ));
        assert!(matches!(
            LaunchGeometry::from_work_items([1, 1, 1], [65536, 1, 1], 0),
            Err(InvalidGeometry(_))
        ));
        assert!(matches!(
            LaunchGeometry::from_blocks([1 << 22, 1, 1], [1024, 1, 1], 0),
            Err(InvalidGeometry(_))
        ));
        let g = LaunchGeometry::from_blocks([2, 3, 1], [32, 4, 1], 128).unwrap();
        assert_eq!(g.grid_size(), [64, 12, 1]);
        assert_eq!(g.block(), [32, 4, 1]);
        assert_eq!(g.dynamic_lds(), 128);
        assert_eq!(g.block_counts(), [2, 3, 1]);
        assert_eq!(g.remainders(), [0, 0, 0]);
        assert_eq!(g.dimensions(), 2);
        assert_eq!(
            LaunchGeometry::from_work_items([1, 1, 5], [1, 1, 1], 0)
                .unwrap()
                .dimensions(),
            3
        );
    }

    #[test]
    fn errors_read_well() {
        let e = KernargError::ArgCountMismatch {
            expected: 4,
            got: 3,
        };
        assert_eq!(
            e.to_string(),
            "kernel takes 4 explicit arguments, 3 were passed"
        );
    }
}
