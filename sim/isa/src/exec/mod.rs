//! Instruction semantics, one file per family. Every handler has the [`Handler`] shape so
//! the decoder can store it in the instruction's table entry: executing an instruction is
//! one indirect call, and the handler loops over the 64 lanes under EXEC.

pub mod ds;
pub mod mai;
pub mod round;
pub mod salu;
pub mod smem;
pub mod sopp;
pub mod valu;
pub mod vmem;

use crate::decode::Inst;
use crate::wave::Wave;
use crate::{DispatchError, GfxModel, GuestMemory};

/// What the wave does after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    /// `s_barrier`: yield to the other waves of the workgroup.
    Barrier,
    /// `s_endpgm`.
    End,
}

pub type Handler = fn(&mut Wave, &Inst, &mut Ctx) -> Result<Step, DispatchError>;

/// Flat addresses in these 4 GiB windows are LDS / private (scratch) addresses. They lie
/// above the 47-bit host user address space, so they never alias a device allocation, and
/// below 2^48 so a buffer resource (48-bit base) can point into the private window.
pub const SHARED_BASE: u64 = 0x0000_a000_0000_0000;
pub const PRIVATE_BASE: u64 = 0x0000_c000_0000_0000;
pub const APERTURE_SIZE: u64 = 1 << 32;
/// The flat *apertures* for LDS and private memory, as SH_MEM_BASES (and so `src_shared_base`
/// / `src_private_base`) expresses them: on GFX9 only address bits 63:48 are programmable, so
/// an aperture starts at a multiple of 2^48. As on hardware, a flat access in an aperture is
/// translated to the same LDS / per-lane scratch the windows above reach; the windows stay
/// for buffer and flat-scratch addressing, whose 48-bit bases cannot reach the apertures.
pub const SHARED_APERTURE: u64 = 1 << 48;
pub const PRIVATE_APERTURE: u64 = 2 << 48;

/// Per-dispatch facts a handler may need.
pub struct DispatchInfo {
    pub model: GfxModel,
    pub compute_units: u32,
    /// Base of the wave's scratch as the 64-bit FLAT_SCRATCH / private segment values.
    pub private_segment_size: u32,
}

/// The environment an instruction runs in: memory, the workgroup's LDS, identity for
/// error messages.
pub struct Ctx<'a> {
    pub mem: &'a dyn GuestMemory,
    pub lds: &'a mut [u8],
    pub workgroup: [u32; 3],
    /// Address of the instruction being executed (wave.pc already points past it).
    pub pc: u64,
    pub info: &'a DispatchInfo,
    /// Flat index of the workgroup (for HW_ID-style registers).
    pub wg_index: u64,
}

impl Ctx<'_> {
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

    /// Checks `[addr, addr+len)` with the guest memory map.
    #[inline(always)]
    pub fn check(
        &self,
        w: &Wave,
        i: &Inst,
        addr: u64,
        len: u64,
        write: bool,
    ) -> Result<(), DispatchError> {
        if addr.checked_add(len).is_some() && self.mem.is_accessible(addr, len) {
            Ok(())
        } else {
            Err(self.fault(w, i, addr, write))
        }
    }
}

/// Reads `N` bytes of guest memory already approved by [`Ctx::check`].
///
/// # Safety
/// `addr..addr+size_of::<T>()` must be accessible host memory.
#[inline(always)]
pub unsafe fn host_read<T: Copy>(addr: u64) -> T {
    // SAFETY: the caller checked the range with GuestMemory::is_accessible, and device
    // addresses are host addresses in hsasim; unaligned reads are allowed by read_unaligned.
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
