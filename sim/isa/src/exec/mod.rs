//! Instruction semantics, one file per family. Every handler has the [`Handler`] shape so
//! the decoder's opcode table rows can name it: executing an instruction is one indirect
//! call, and the handler loops over the 64 lanes under EXEC. This module and its families
//! use the instruction type (`inst`) and the wave (`wave`), never the decoder.

#[macro_use]
pub mod simd;

pub mod ds;
pub mod half;
pub mod image;
pub mod mai;
pub mod round;
pub mod salu;
pub mod smem;
pub mod sopp;
pub mod stride;
pub mod tlb;
pub mod valu;
pub mod vmem;

use crate::api::{DispatchError, GfxModel, GuestMemory};
use crate::inst::Inst;
use crate::wave::Wave;
use std::sync::atomic::AtomicU64;
use tlb::Tlb;

/// What the wave does after an instruction. A plain 64-bit value (the GWS request rides in
/// the wave), so that a handler's [`Outcome`] is a pair of scalars and comes back in two
/// registers: an enum with a payload, or a narrower one, is returned through memory that
/// the dispatch loop reads back after every instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Step {
    Continue,
    /// `s_barrier`: yield to the other waves of the workgroup.
    Barrier,
    /// `s_endpgm`.
    End,
    /// Cooperative dispatches only: let the other waves of the host worker run (`s_sleep`,
    /// and every few thousand instructions, so a wave spinning on memory another workgroup
    /// writes cannot starve it).
    Yield,
    /// Cooperative dispatches only: a `ds_gws_*` operation on the queue's GWS unit
    /// (`Wave::gws`), which the scheduler carries out (it may block the wave).
    Gws,
}

/// What a handler returns: boxing the (rare, large) error keeps it two registers wide.
pub type Outcome = Result<Step, Box<DispatchError>>;

pub type Handler = fn(&mut Wave, &Inst, &mut Ctx) -> Outcome;

/// Per-dispatch facts a handler may need.
pub struct DispatchInfo {
    pub model: GfxModel,
    pub compute_units: u32,
    /// Base of the wave's scratch as the 64-bit FLAT_SCRATCH / private segment values.
    pub private_segment_size: u32,
    /// The dispatch came from a cooperative queue: all its workgroups are resident and the
    /// queue's GWS unit is there.
    pub cooperative: bool,
    /// Virtual time: the clocks follow the wave's own cycles
    /// ([`ExecConfig::timing`](crate::ExecConfig::timing)).
    pub timing: Option<crate::api::Timing>,
}

/// The environment an instruction runs in: memory, the workgroup's LDS, identity for
/// error messages.
pub struct Ctx<'a> {
    pub mem: &'a dyn GuestMemory,
    /// `mem.generation()`, read once.
    generation: Option<&'a AtomicU64>,
    /// The worker's kept translations of `mem` (cleared when its dispatch began).
    tlb: &'a Tlb,
    pub lds: &'a mut [u8],
    pub workgroup: [u32; 3],
    /// Address of the instruction being executed (wave.pc already points past it).
    pub pc: u64,
    pub info: &'a DispatchInfo,
    /// Flat index of the workgroup (for HW_ID-style registers).
    pub wg_index: u64,
    /// The strides of the workgroup's recent back-to-back loads, for prefetching.
    pub(crate) strides: stride::Strides,
}

impl<'a> Ctx<'a> {
    pub fn new(
        mem: &'a dyn GuestMemory,
        tlb: &'a Tlb,
        lds: &'a mut [u8],
        info: &'a DispatchInfo,
        workgroup: [u32; 3],
        wg_index: u64,
    ) -> Ctx<'a> {
        Ctx {
            mem,
            generation: mem.generation(),
            tlb,
            lds,
            workgroup,
            pc: 0,
            info,
            wg_index,
            strides: stride::Strides::default(),
        }
    }

    /// [`GuestMemory::translate`] through the worker's kept translations.
    #[inline(always)]
    pub fn translate(&self, addr: u64, len: u64) -> Option<u64> {
        self.tlb.translate(self.mem, self.generation, addr, len)
    }

    pub fn fault(&self, w: &Wave, i: &Inst, address: u64, write: bool) -> DispatchError {
        DispatchError::MemoryFault {
            address,
            write,
            pc: self.pc,
            instruction: i.to_string(),
            workgroup: self.workgroup,
            wave: w.id,
        }
    }

    pub fn illegal(&self, reason: String) -> DispatchError {
        DispatchError::Illegal {
            pc: self.pc,
            reason,
        }
    }

    /// Checks `[addr, addr+len)` with the guest memory map; the host address of `addr`.
    #[inline(always)]
    pub fn check(
        &self,
        w: &Wave,
        i: &Inst,
        addr: u64,
        len: u64,
        write: bool,
    ) -> Result<u64, DispatchError> {
        match addr.checked_add(len).and(self.translate(addr, len)) {
            Some(host) => Ok(host),
            None => Err(self.fault(w, i, addr, write)),
        }
    }
}

/// Reads guest memory at the host address [`Ctx::check`] (or [`GuestMemory::translate`])
/// gave for it.
///
/// # Safety
/// `addr..addr+size_of::<T>()` must be accessible host memory.
#[inline(always)]
pub unsafe fn host_read<T: Copy>(addr: u64) -> T {
    // SAFETY: the caller translated the range with GuestMemory, so it is host memory the
    // registry holds; unaligned reads are allowed by read_unaligned.
    unsafe { std::ptr::read_unaligned(addr as usize as *const T) }
}

/// # Safety
/// `addr..addr+size_of::<T>()` must be accessible, writable host memory.
#[inline(always)]
pub unsafe fn host_write<T: Copy>(addr: u64, v: T) {
    // SAFETY: as for host_read; the range was checked for accessibility by the caller.
    unsafe { std::ptr::write_unaligned(addr as usize as *mut T, v) }
}

/// A handler for opcodes that decode but have no semantics yet.
pub fn unimplemented(i: &Inst, pc: u64) -> DispatchError {
    DispatchError::UnknownInstruction {
        pc,
        words: [i.words[0], i.words[1]],
        detail: format!(
            "{} opcode {} ({:#x}) `{}` decodes but is not implemented",
            i.enc.name(),
            i.op,
            i.op,
            i
        ),
    }
}
