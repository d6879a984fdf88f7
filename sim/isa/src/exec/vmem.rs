//! Vector memory: FLAT / GLOBAL / SCRATCH and MUBUF.
//!
//! Every lane's address resolves to a host pointer before any data moves: global addresses
//! through [`GuestMemory::translate`](crate::GuestMemory), LDS and private addresses
//! (flat apertures, scratch instructions, the private-segment buffer) against the
//! workgroup's LDS and the wave's scratch. A faulting lane stops the instruction before it
//! has any effect.

use super::valu::numeric::{fmax64, fmin64};
use super::{Ctx, Step};
use crate::aperture::{
    APERTURE_SIZE, PRIVATE_APERTURE, PRIVATE_BASE, SHARED_APERTURE, SHARED_BASE,
};
use crate::api::DispatchError;
use crate::inst::Inst;
use crate::wave::{Wave, LANES};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

type R = crate::exec::Outcome;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    Global,
    Lds,
    Private,
}

/// Bytes moved per lane by a FLAT/MUBUF opcode (loads and stores share the numbering).
fn access_bytes(op: u16, dwords: u8) -> u64 {
    match op {
        16 | 17 | 24 | 25 | 32..=35 => 1,
        18 | 19 | 26 | 27 | 36 | 37 => 2,
        _ => dwords as u64 * 4,
    }
}

/// The lowest and highest address of the active lanes (`exec` nonzero).
#[inline(always)]
fn span(exec: u64, addrs: &[u64; LANES]) -> (u64, u64) {
    let (mut lo, mut top) = (u64::MAX, 0u64);
    if exec == u64::MAX {
        let mut any = 0u64;
        for l in 0..LANES {
            any |= addrs[l];
        }
        if any >> 63 == 0 {
            // Below 2^63 signed and unsigned order agree, and signed compares are the
            // cheaper ones on x86.
            let (mut slo, mut stop) = (i64::MAX, 0i64);
            for l in 0..LANES {
                slo = slo.min(addrs[l] as i64);
                stop = stop.max(addrs[l] as i64);
            }
            return (slo as u64, stop as u64);
        }
        for l in 0..LANES {
            lo = lo.min(addrs[l]);
            top = top.max(addrs[l]);
        }
    } else {
        // Branch-free over the lanes (it vectorises).
        for l in 0..LANES {
            let active = exec >> l & 1 != 0;
            lo = lo.min(if active { addrs[l] } else { u64::MAX });
            top = top.max(if active { addrs[l] } else { 0 });
        }
    }
    (lo, top)
}

/// True when all 64 lanes are active and lane `l` accesses `addrs[0] + l * size` (the
/// accesses are back to back, ascending, without wrapping).
#[inline(always)]
fn back_to_back(exec: u64, addrs: &[u64; LANES], size: u64) -> bool {
    if exec != u64::MAX || addrs[0].checked_add(LANES as u64 * size).is_none() {
        return false;
    }
    // Most other patterns (broadcasts, strided rows) already differ at the second or the
    // last lane: no need to compare all 64.
    let last = addrs[0].wrapping_add((LANES as u64 - 1) * size);
    if addrs[1] != addrs[0].wrapping_add(size) || addrs[LANES - 1] != last {
        return false;
    }
    let mut same = true;
    for l in 0..LANES {
        same &= addrs[l] == addrs[0].wrapping_add(l as u64 * size);
    }
    same
}

/// For a global access of `size` bytes per lane: the offset from guest to host address
/// shared by every active lane, when one translation covers all their bytes. `None` sends
/// the access to [`resolve`]'s lane-by-lane path (other apertures, several regions, a
/// fault), which gives the same result.
#[inline(always)]
fn global_offset(c: &Ctx, exec: u64, addrs: &[u64; LANES], size: u64, dense: bool) -> Option<u64> {
    if exec == 0 {
        return None;
    }
    let (lo, top) = if dense {
        (addrs[0], addrs[LANES - 1])
    } else {
        span(exec, addrs)
    };
    if top >= SHARED_BASE {
        return None;
    }
    let hi = top.checked_add(size)?;
    if hi - lo > 1 << 32 {
        return None;
    }
    let host = c.translate(lo, hi - lo)?;
    Some(host.wrapping_sub(lo))
}

/// Resolves each active lane's address to a host pointer.
#[inline(always)]
fn resolve(
    w: &mut Wave,
    i: &Inst,
    c: &mut Ctx,
    addrs: &[u64; LANES],
    private: bool,
    size: u64,
    write: bool,
) -> Result<[*mut u8; LANES], DispatchError> {
    let exec = w.exec();
    let mut ptrs = [std::ptr::null_mut::<u8>(); LANES];
    // Fast path: all lanes global; one accessibility check over the span of addresses.
    if !private {
        if exec == 0 {
            return Ok(ptrs);
        }
        // Branch-free over the lanes (it vectorises): the lowest and highest active address.
        let (mut lo, mut top) = (u64::MAX, 0u64);
        for l in 0..LANES {
            let active = exec >> l & 1 != 0;
            lo = lo.min(if active { addrs[l] } else { u64::MAX });
            top = top.max(if active { addrs[l] } else { 0 });
        }
        if top < SHARED_BASE {
            let hi = top.saturating_add(size);
            let span = (hi > lo && hi - lo <= 1 << 32)
                .then(|| c.translate(lo, hi - lo))
                .flatten();
            if let Some(host) = span {
                // One region holds every lane's bytes: one offset moves them all.
                let delta = host.wrapping_sub(lo);
                for l in 0..LANES {
                    ptrs[l] = addrs[l].wrapping_add(delta) as usize as *mut u8;
                }
            } else {
                for l in 0..LANES {
                    if exec >> l & 1 != 0 {
                        ptrs[l] = c.check(w, i, addrs[l], size, write)? as usize as *mut u8;
                    }
                }
            }
            return Ok(ptrs);
        }
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = addrs[l];
        let (space, off) = if private {
            (Space::Private, a)
        } else if (SHARED_BASE..SHARED_BASE + APERTURE_SIZE).contains(&a) {
            (Space::Lds, a - SHARED_BASE)
        } else if (PRIVATE_BASE..PRIVATE_BASE + APERTURE_SIZE).contains(&a) {
            (Space::Private, a - PRIVATE_BASE)
        } else if (SHARED_APERTURE..SHARED_APERTURE + APERTURE_SIZE).contains(&a) {
            (Space::Lds, a - SHARED_APERTURE)
        } else if (PRIVATE_APERTURE..PRIVATE_APERTURE + APERTURE_SIZE).contains(&a) {
            (Space::Private, a - PRIVATE_APERTURE)
        } else {
            (Space::Global, a)
        };
        ptrs[l] = match space {
            Space::Global => c.check(w, i, a, size, write)? as usize as *mut u8,
            Space::Lds => {
                if off + size > c.lds.len() as u64 {
                    return Err(c.fault(w, i, a, write));
                }
                // SAFETY: off + size is within the LDS slice (checked above).
                unsafe { c.lds.as_mut_ptr().add(off as usize) }
            }
            Space::Private => {
                let per = w.scratch_per_lane;
                if off + size > per {
                    return Err(c.illegal(format!(
                        "private (scratch) access at offset {off:#x} size {size} by lane {l} \
                         is beyond the {per}-byte private segment (stack overflow?) in `{i}`"
                    )));
                }
                let idx = l as u64 * per + off;
                // SAFETY: idx + size <= 64 * per == scratch.len(), checked above.
                unsafe { w.scratch.as_mut_ptr().add(idx as usize) }
            }
        };
    }
    Ok(ptrs)
}

/// Per-lane addresses of a FLAT-family instruction; `private` for SCRATCH.
#[inline(always)]
fn flat_addrs(w: &Wave, i: &Inst, a: &mut [u64; LANES]) -> bool {
    let off = i.imm as i64 as u64;
    match i.seg {
        1 => {
            let base = if i.saddr != 0x7f {
                w.sread32(i.saddr, 0, i.info.fk) as u64
            } else {
                0
            };
            let v = &w.v[(i.src[0] as usize).wrapping_sub(256) & 511];
            let use_v = i.src[0] != 0xffff;
            for l in 0..LANES {
                let vo = if use_v { v[l] as u64 } else { 0 };
                a[l] = (base.wrapping_add(vo).wrapping_add(off)) & 0xffff_ffff;
            }
            true
        }
        2 if i.saddr != 0x7f => {
            let base = w.sreg64(i.saddr);
            let v = &w.v[(i.src[0] as usize - 256) & 511];
            for l in 0..LANES {
                a[l] = base.wrapping_add(v[l] as u64).wrapping_add(off);
            }
            false
        }
        _ => {
            let r = (i.src[0] as usize - 256) & 511;
            let (lo, hi) = (&w.v[r], &w.v[(r + 1) & 511]);
            for l in 0..LANES {
                a[l] = (lo[l] as u64 | (hi[l] as u64) << 32).wrapping_add(off);
            }
            false
        }
    }
}

/// A FLAT/GLOBAL access whose active lanes' addresses are one 64-bit base plus a 32-bit
/// offset each (how compiled code addresses an array: an SGPR base and a VGPR offset, or a
/// VGPR pair whose high halves agree) and lie in one translation.
struct Halves {
    /// The host address of lane offset 0: a lane's bytes start at `origin + offset`.
    origin: u64,
    /// The register holding the lanes' 32-bit offsets.
    row: usize,
    /// All 64 lanes active and back to back, ascending.
    dense: bool,
}

/// The [`Halves`] form of a non-scratch FLAT access of `size` bytes per lane, when it has
/// one; `None` sends the access to the 64-bit address path, which gives the same result.
/// Works on the 32-bit halves the registers hold: no 64-bit address per lane is built.
#[inline(always)]
fn global_halves(w: &Wave, i: &Inst, c: &Ctx, exec: u64, size: u64) -> Option<Halves> {
    if exec == 0 {
        return None;
    }
    let row = (i.src[0] as usize).wrapping_sub(256) & 511;
    let base = match i.seg {
        2 if i.saddr != 0x7f => w.sreg64(i.saddr),
        0 | 2 => {
            let hi = &w.v[(row + 1) & 511];
            let h0 = hi[exec.trailing_zeros() as usize];
            let mut differ = 0u32;
            if exec == u64::MAX {
                for l in 0..LANES {
                    differ |= hi[l] ^ h0;
                }
            } else {
                let act = super::simd::lane_masks(exec);
                for l in 0..LANES {
                    differ |= (hi[l] ^ h0) & act[l];
                }
            }
            if differ != 0 {
                return None;
            }
            (h0 as u64) << 32
        }
        _ => return None,
    };
    let lo = &w.v[row];
    // Back to back first: then the first and last lanes bound the span, and the scan for
    // the least and greatest offsets (as long as this test) is not needed.
    let dense = exec == u64::MAX && back_to_back_halves(lo, size);
    let (mut least, mut most) = (u32::MAX, 0u32);
    if dense {
        (least, most) = (lo[0], lo[LANES - 1]);
    } else if exec == u64::MAX {
        for l in 0..LANES {
            least = least.min(lo[l]);
            most = most.max(lo[l]);
        }
    } else {
        let act = super::simd::lane_masks(exec);
        for l in 0..LANES {
            least = least.min(lo[l] | !act[l]);
            most = most.max(lo[l] & act[l]);
        }
    }
    // The 64-bit path wraps; an access that would wrap takes that path.
    let imm = i.imm as i64;
    let start = base.checked_add(least as u64)?.checked_add_signed(imm)?;
    let top = base.checked_add(most as u64)?.checked_add_signed(imm)?;
    if top >= SHARED_BASE {
        return None;
    }
    let end = top.checked_add(size)?;
    let host = c.translate(start, end - start)?;
    let origin = host
        .wrapping_sub(start)
        .wrapping_add(base)
        .wrapping_add(imm as u64);
    Some(Halves { origin, row, dense })
}

/// Whether the 64 offsets `lo` step up by `size` from lane 0 without passing 2^32 (so lane
/// 0's offset is the least and lane 63's the greatest). The common sizes are constants, so
/// that each lane's expected step is folded rather than multiplied.
#[inline(always)]
fn back_to_back_halves(lo: &[u32; LANES], size: u64) -> bool {
    #[inline(always)]
    fn steps<const SIZE: u32>(lo: &[u32; LANES]) -> bool {
        let mut off = 0u32;
        for l in 0..LANES {
            off |= lo[l] ^ lo[0].wrapping_add(l as u32 * SIZE);
        }
        off == 0 && lo[0].checked_add((LANES as u32 - 1) * SIZE).is_some()
    }
    match size {
        4 => steps::<4>(lo),
        8 => steps::<8>(lo),
        12 => steps::<12>(lo),
        16 => steps::<16>(lo),
        _ => false,
    }
}

/// Loads of whole dwords through [`global_halves`]; false when the access has no such form.
/// Eight bytes per lane are read as one access, as [`load`] reads them.
#[inline(always)]
fn load_halves(w: &mut Wave, i: &Inst, c: &mut Ctx, size: u64) -> bool {
    let exec = w.exec();
    let Some(Halves { origin, row, dense }) = global_halves(w, i, c, exec, size) else {
        return false;
    };
    let d = (i.dst as usize).wrapping_sub(256);
    let words = (size / 4) as usize;
    if size == 8 {
        // The offsets are copied first: the destination may be their register.
        let offs: [u32; LANES] = w.v[row];
        if dense {
            let src = origin.wrapping_add(offs[0] as u64);
            c.strides.note(c.pc, w.id, src, LANES as u64 * size);
        }
        let (mut lo, mut hi) = (w.v[d & 511], w.v[(d + 1) & 511]);
        let read = |l: usize| {
            let p = origin.wrapping_add(offs[l] as u64) as usize as *mut u8;
            // SAFETY: global_halves translated the span holding every active lane's 8 bytes.
            let v = unsafe { read_u64(p) };
            (lo[l], hi[l]) = (v as u32, (v >> 32) as u32);
        };
        each_active_lane(exec, read);
        w.v[d & 511] = lo;
        w.v[(d + 1) & 511] = hi;
        return true;
    }
    if dense {
        let first = w.v[row][0] as u64;
        let src = origin.wrapping_add(first) as usize as *const u32;
        c.strides.note(c.pc, w.id, src as u64, LANES as u64 * size);
        // One dword per lane first, on its own: inside the loop below, the compiler sets up
        // the lane strides of the multi-dword case before it tests for it.
        if words == 1 {
            // SAFETY: global_halves translated src .. src + 64 * 4.
            w.v[d & 511] = unsafe { std::ptr::read_unaligned(src as *const [u32; LANES]) };
            return true;
        }
        for k in 0..words {
            let reg = &mut w.v[(d + k) & 511];
            for l in 0..LANES {
                // SAFETY: global_halves translated src .. src + 64 * size.
                reg[l] = unsafe { std::ptr::read_unaligned(src.add(l * words + k)) };
            }
        }
        return true;
    }
    if words == 1 {
        // The common gather (a row broadcast to a lane group, a column, an index): one
        // straight loop. The offsets are copied first: the destination may be their register.
        let offs: [u32; LANES] = w.v[row];
        let reg = &mut w.v[d & 511];
        if exec == u64::MAX {
            // SAFETY: global_halves translated the span holding every lane's bytes.
            unsafe { super::simd::gather64(origin as usize as *const u8, &offs, reg) };
        } else {
            // Lane by lane: grouping eight lanes (as the full-EXEC gather does) measured
            // slower here, on CSR SpMV's partly active row loops.
            let mut active = exec;
            while active != 0 {
                let l = active.trailing_zeros() as usize;
                active &= active - 1;
                let p = origin.wrapping_add(offs[l] as u64) as usize as *const u32;
                // SAFETY: global_halves translated the span holding every active lane's
                // bytes.
                reg[l] = unsafe { std::ptr::read_unaligned(p) };
            }
        }
        return true;
    }
    // Eight lanes at a time: each group's offsets are read before its lanes are written,
    // so a destination that is also the offset register reads the old offsets.
    for chunk in 0..LANES / 8 {
        let m = (exec >> (8 * chunk)) as u8;
        if m == 0 {
            continue;
        }
        let mut offs = [0u32; 8];
        offs.copy_from_slice(&w.v[row][8 * chunk..8 * chunk + 8]);
        for k in 0..words {
            let mut v = [0u32; 8];
            for j in 0..8 {
                let p = origin.wrapping_add(offs[j] as u64) as usize as *const u32;
                if m == u8::MAX || m >> j & 1 != 0 {
                    // SAFETY: global_halves translated the span holding every active
                    // lane's bytes.
                    v[j] = unsafe { std::ptr::read_unaligned(p.add(k)) };
                }
            }
            let reg = &mut w.v[(d + k) & 511][8 * chunk..8 * chunk + 8];
            if m == u8::MAX {
                reg.copy_from_slice(&v);
            } else {
                for j in 0..8 {
                    if m >> j & 1 != 0 {
                        reg[j] = v[j];
                    }
                }
            }
        }
    }
    true
}

/// Stores of whole dwords through [`global_halves`], register by register and lane by
/// lane as the other paths (lanes that overlap leave the same bytes; eight bytes per lane
/// are one access, as in [`store`]); false when the access has no such form.
#[inline(always)]
fn store_halves(w: &Wave, i: &Inst, c: &Ctx, size: u64) -> bool {
    let exec = w.exec();
    let Some(Halves { origin, row, dense }) = global_halves(w, i, c, exec, size) else {
        return false;
    };
    let s = (i.src[1] as usize).wrapping_sub(256);
    let words = (size / 4) as usize;
    let offs = &w.v[row];
    if size == 8 {
        // One 8-byte write per lane, as `store` writes them.
        let (lo, hi) = (&w.v[s & 511], &w.v[(s + 1) & 511]);
        let write = |l: usize| {
            let p = origin.wrapping_add(offs[l] as u64) as usize as *mut u8;
            // SAFETY: global_halves translated the span holding every active lane's 8 bytes.
            unsafe { write_u64(p, lo[l] as u64 | (hi[l] as u64) << 32) };
        };
        each_active_lane(exec, write);
        return true;
    }
    if dense && words == 1 {
        // As in load_halves: one dword per lane on its own, ahead of the multi-dword loop.
        let dst = origin.wrapping_add(offs[0] as u64) as usize as *mut [u32; LANES];
        // SAFETY: global_halves translated dst .. dst + 64 * 4.
        unsafe { std::ptr::write_unaligned(dst, w.v[s & 511]) };
        return true;
    }
    for k in 0..words {
        let reg = &w.v[(s + k) & 511];
        if dense {
            let dst = origin.wrapping_add(offs[0] as u64) as usize as *mut u32;
            for l in 0..LANES {
                // SAFETY: global_halves translated dst .. dst + 64 * size.
                unsafe { std::ptr::write_unaligned(dst.add(l * words + k), reg[l]) };
            }
            continue;
        }
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                let p = origin.wrapping_add(offs[l] as u64) as usize as *mut u32;
                // SAFETY: global_halves translated the span holding every active lane's
                // bytes.
                unsafe { std::ptr::write_unaligned(p.add(k), reg[l]) };
            }
        }
    }
    true
}

simd_handler! {
    pub fn flat_load(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let size = access_bytes(i.op, i.info.w[0]);
        load_sized(w, i, c, size, !matches!(i.op, 16..=19 | 32..=37))
    }
}

simd_handler! {
    /// `flat_load` for `*_load_dword`, the commonest load: with the access size a constant,
    /// what depends on it (the dense test's step, the one-dword copy) is settled at compile
    /// time rather than on every run.
    pub fn flat_load_dword(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        load_sized(w, i, c, 4, true)
    }
}

simd_handler! {
    /// `flat_store` for `*_store_dword`, as [`flat_load_dword`].
    pub fn flat_store_dword(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        store_sized(w, i, c, 4, true)
    }
}

simd_handler! {
    pub fn flat_store(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let size = access_bytes(i.op, i.info.w[0]);
        store_sized(w, i, c, size, !matches!(i.op, 24..=27))
    }
}

/// Calls `f` with each lane active in `exec`, in ascending order (the order overlapping
/// stores leave their bytes in): an unmasked loop under a full EXEC.
#[inline(always)]
fn each_active_lane(exec: u64, mut f: impl FnMut(usize)) {
    if exec == u64::MAX {
        (0..LANES).for_each(f);
        return;
    }
    let mut active = exec;
    while active != 0 {
        f(active.trailing_zeros() as usize);
        active &= active - 1;
    }
}

/// A FLAT/GLOBAL/SCRATCH load of `size` bytes per lane: through [`load_halves`] where
/// `whole_dwords` (not a byte or short op) and the addresses have that form,
/// else lane addresses and [`load`]. The handlers that know their op pass constants.
#[inline(always)]
fn load_sized(w: &mut Wave, i: &Inst, c: &mut Ctx, size: u64, whole_dwords: bool) -> R {
    if whole_dwords && load_halves(w, i, c, size) {
        return Ok(Step::Continue);
    }
    let mut addrs = [0u64; LANES];
    let private = flat_addrs(w, i, &mut addrs);
    load(w, i, c, &addrs, private, i.op)
}

/// The store counterpart of [`load_sized`].
#[inline(always)]
fn store_sized(w: &mut Wave, i: &Inst, c: &mut Ctx, size: u64, whole_dwords: bool) -> R {
    if whole_dwords && store_halves(w, i, c, size) {
        return Ok(Step::Continue);
    }
    let mut addrs = [0u64; LANES];
    let private = flat_addrs(w, i, &mut addrs);
    store(w, i, c, &addrs, private, i.op)
}

#[inline(always)]
fn load(w: &mut Wave, i: &Inst, c: &mut Ctx, addrs: &[u64; LANES], private: bool, op: u16) -> R {
    let size = access_bytes(op, i.info.w[0]);
    let exec = w.exec();
    let d = (i.dst as usize).wrapping_sub(256);
    let whole = !matches!(op, 16..=19 | 32..=37);
    // 8-byte accesses take the general path below, one host access per lane (as
    // load_halves reads them): a dwordx2 is single-copy atomic on the GPU.
    if whole && !private && size != 8 {
        let dense = back_to_back(exec, addrs, size);
        if let Some(delta) = global_offset(c, exec, addrs, size, dense) {
            let words = (size / 4) as usize;
            for k in 0..words {
                let reg = &mut w.v[(d + k) & 511];
                if dense && words == 1 {
                    let src = addrs[0].wrapping_add(delta) as usize as *const [u32; LANES];
                    // SAFETY: global_offset translated src .. src + 64 * 4.
                    *reg = unsafe { std::ptr::read_unaligned(src) };
                } else if dense {
                    let src = addrs[0].wrapping_add(delta) as usize as *const u32;
                    for l in 0..LANES {
                        // SAFETY: global_offset translated the span of every lane's bytes,
                        // src .. src + 64 * size here.
                        reg[l] = unsafe { std::ptr::read_unaligned(src.add(l * words + k)) };
                    }
                } else if exec == u64::MAX {
                    // Eight lanes at a time, the eight reads unrolled: a gather from
                    // scattered or repeated addresses (a matrix row broadcast to a lane
                    // group) paid more for the loop than for the reads.
                    for (lanes, out) in addrs.chunks_exact(8).zip(reg.chunks_exact_mut(8)) {
                        let mut v = [0u32; 8];
                        for j in 0..8 {
                            let p = lanes[j].wrapping_add(delta) as usize as *const u32;
                            // SAFETY: global_offset translated the span holding every
                            // lane's bytes.
                            v[j] = unsafe { std::ptr::read_unaligned(p.add(k)) };
                        }
                        out.copy_from_slice(&v);
                    }
                } else {
                    for l in 0..LANES {
                        if exec >> l & 1 != 0 {
                            let p = addrs[l].wrapping_add(delta) as usize as *const u32;
                            // SAFETY: global_offset translated the span holding every
                            // active lane's bytes.
                            reg[l] = unsafe { std::ptr::read_unaligned(p.add(k)) };
                        }
                    }
                }
            }
            return Ok(Step::Continue);
        }
    }
    let ptrs = resolve(w, i, c, addrs, private, size, false)?;
    if size == 8 {
        // One access per lane: 64-bit atomic loads compile to plain dwordx2 loads, which
        // the GPU performs single-copy atomically; two dword reads could pair halves of
        // two different stores of another workgroup.
        let (mut lo, mut hi) = ([0u32; LANES], [0u32; LANES]);
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                // SAFETY: resolve() approved [p, p+8) for this active lane.
                let v = unsafe { read_u64(ptrs[l]) };
                (lo[l], hi[l]) = (v as u32, (v >> 32) as u32);
            }
        }
        for (k, half) in [lo, hi].iter().enumerate() {
            let reg = &mut w.v[(d + k) & 511];
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    reg[l] = half[l];
                }
            }
        }
        return Ok(Step::Continue);
    }
    if whole {
        // Whole dwords: one register at a time.
        for k in 0..(size / 4) as usize {
            let reg = &mut w.v[(d + k) & 511];
            if exec == u64::MAX {
                for l in 0..LANES {
                    // SAFETY: resolve() approved [p, p+size) for every lane (all active).
                    reg[l] = unsafe { std::ptr::read_unaligned((ptrs[l] as *const u32).add(k)) };
                }
                continue;
            }
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    // SAFETY: resolve() approved [p, p+size) for this active lane.
                    reg[l] = unsafe { std::ptr::read_unaligned((ptrs[l] as *const u32).add(k)) };
                }
            }
        }
        return Ok(Step::Continue);
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let p = ptrs[l];
        // SAFETY: resolve() approved [p, p+size) for this lane.
        unsafe {
            let rd8 = || std::ptr::read_unaligned(p);
            let rd16 = || std::ptr::read_unaligned(p as *const u16);
            match op {
                16 => w.set_vlane(d, l, rd8() as u32),
                17 => w.set_vlane(d, l, rd8() as i8 as i32 as u32),
                18 => w.set_vlane(d, l, rd16() as u32),
                19 => w.set_vlane(d, l, rd16() as i16 as i32 as u32),
                32..=37 => {
                    let v: u32 = match op {
                        32 | 33 => rd8() as u32,
                        34 | 35 => rd8() as i8 as i16 as u16 as u32,
                        _ => rd16() as u32,
                    };
                    let old = w.vlane(d, l);
                    // d16 loads replace one half of the register and keep the other.
                    let new = if op & 1 == 1 {
                        (old & 0xffff) | (v << 16)
                    } else {
                        (old & 0xffff_0000) | v
                    };
                    w.set_vlane(d, l, new);
                }
                _ => {
                    for k in 0..(size / 4) as usize {
                        let v = std::ptr::read_unaligned((p as *const u32).add(k));
                        w.set_vlane(d + k, l, v);
                    }
                }
            }
        }
    }
    Ok(Step::Continue)
}

#[inline(always)]
fn store(w: &mut Wave, i: &Inst, c: &mut Ctx, addrs: &[u64; LANES], private: bool, op: u16) -> R {
    let size = access_bytes(op, i.info.w[0]);
    let exec = w.exec();
    let s = (i.src[1] as usize).wrapping_sub(256);
    let whole = !matches!(op, 24..=27);
    // 8-byte accesses take the general path below, as in load().
    if whole && !private && size != 8 {
        let dense = back_to_back(exec, addrs, size);
        if let Some(delta) = global_offset(c, exec, addrs, size, dense) {
            let words = (size / 4) as usize;
            // Register by register, lane by lane, as the general path below: lanes that
            // overlap leave the same bytes.
            for k in 0..words {
                let reg = &w.v[(s + k) & 511];
                if dense && words == 1 {
                    let dst = addrs[0].wrapping_add(delta) as usize as *mut [u32; LANES];
                    // SAFETY: global_offset translated dst .. dst + 64 * 4.
                    unsafe { std::ptr::write_unaligned(dst, *reg) };
                } else if dense {
                    let dst = addrs[0].wrapping_add(delta) as usize as *mut u32;
                    for l in 0..LANES {
                        // SAFETY: global_offset translated dst .. dst + 64 * size.
                        unsafe { std::ptr::write_unaligned(dst.add(l * words + k), reg[l]) };
                    }
                } else if exec == u64::MAX {
                    for l in 0..LANES {
                        let p = addrs[l].wrapping_add(delta) as usize as *mut u32;
                        // SAFETY: global_offset translated the span holding every lane's
                        // bytes.
                        unsafe { std::ptr::write_unaligned(p.add(k), reg[l]) };
                    }
                } else {
                    for l in 0..LANES {
                        if exec >> l & 1 != 0 {
                            let p = addrs[l].wrapping_add(delta) as usize as *mut u32;
                            // SAFETY: global_offset translated the span holding every
                            // active lane's bytes.
                            unsafe { std::ptr::write_unaligned(p.add(k), reg[l]) };
                        }
                    }
                }
            }
            return Ok(Step::Continue);
        }
    }
    let ptrs = resolve(w, i, c, addrs, private, size, true)?;
    if size == 8 {
        // One access per lane, as in load().
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                let v = w.v[s & 511][l] as u64 | (w.v[(s + 1) & 511][l] as u64) << 32;
                // SAFETY: resolve() approved [p, p+8) for this active lane.
                unsafe { write_u64(ptrs[l], v) };
            }
        }
        return Ok(Step::Continue);
    }
    if whole {
        // Whole dwords: one register at a time.
        for k in 0..(size / 4) as usize {
            let reg = &w.v[(s + k) & 511];
            if exec == u64::MAX {
                for l in 0..LANES {
                    // SAFETY: resolve() approved [p, p+size) for every lane (all active).
                    unsafe { std::ptr::write_unaligned((ptrs[l] as *mut u32).add(k), reg[l]) };
                }
                continue;
            }
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    // SAFETY: resolve() approved [p, p+size) for this active lane.
                    unsafe { std::ptr::write_unaligned((ptrs[l] as *mut u32).add(k), reg[l]) };
                }
            }
        }
        return Ok(Step::Continue);
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let p = ptrs[l];
        let v = w.vlane(s, l);
        // SAFETY: resolve() approved [p, p+size) for this lane.
        unsafe {
            match op {
                24 => std::ptr::write_unaligned(p, v as u8),
                25 => std::ptr::write_unaligned(p, (v >> 16) as u8),
                26 => std::ptr::write_unaligned(p as *mut u16, v as u16),
                27 => std::ptr::write_unaligned(p as *mut u16, (v >> 16) as u16),
                _ => {
                    for k in 0..(size / 4) as usize {
                        let v = w.vlane(s + k, l);
                        std::ptr::write_unaligned((p as *mut u32).add(k), v);
                    }
                }
            }
        }
    }
    Ok(Step::Continue)
}

/// Reads 8 bytes at `p` in one access when they are naturally aligned (an atomic access,
/// since another host thread may store there), else byte-wise.
///
/// # Safety
/// `p` must be valid for reading 8 bytes.
#[inline(always)]
unsafe fn read_u64(p: *mut u8) -> u64 {
    if (p as usize).is_multiple_of(8) {
        // SAFETY: valid (the caller) and aligned (just checked); every access of other
        // threads to guest memory goes through raw pointers or atomics of its own.
        unsafe { AtomicU64::from_ptr(p as *mut u64).load(Ordering::Relaxed) }
    } else {
        // SAFETY: valid for 8 bytes (the caller).
        unsafe { std::ptr::read_unaligned(p as *const u64) }
    }
}

/// Writes 8 bytes at `p`, in one access when they are naturally aligned.
///
/// # Safety
/// `p` must be valid for writing 8 bytes.
#[inline(always)]
unsafe fn write_u64(p: *mut u8, v: u64) {
    if (p as usize).is_multiple_of(8) {
        // SAFETY: as in read_u64.
        unsafe { AtomicU64::from_ptr(p as *mut u64).store(v, Ordering::Relaxed) }
    } else {
        // SAFETY: valid for 8 bytes (the caller).
        unsafe { std::ptr::write_unaligned(p as *mut u64, v) }
    }
}

/// FLAT/GLOBAL atomics. Global memory is shared with other host threads running other
/// workgroups, so read-modify-writes are real host atomics (naturally aligned, as the
/// hardware requires).
pub fn flat_atomic(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let mut addrs = [0u64; LANES];
    let private = flat_addrs(w, i, &mut addrs);
    let wide = i.op >= 96 || matches!(i.op, 79..=81);
    let size = if wide { 8 } else { 4 };
    let ptrs = resolve(w, i, c, &addrs, private, size, true)?;
    let exec = w.exec();
    let data = (i.src[1] as usize).wrapping_sub(256);
    let dst = (i.dst as usize).wrapping_sub(256);
    let ret = i.mflags & 1 != 0;
    let base_op = if i.op >= 96 { i.op - 32 } else { i.op };
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let p = ptrs[l];
        if !(p as usize).is_multiple_of(size as usize) {
            return Err(Box::new(c.fault(w, i, addrs[l], true)));
        }
        if wide {
            let d0 = w.vlane(data, l) as u64 | (w.vlane(data + 1, l) as u64) << 32;
            let d1 = w.vlane(data + 2, l) as u64 | (w.vlane(data + 3, l) as u64) << 32;
            // SAFETY: p is approved for 8 bytes and 8-byte aligned (checked above).
            let a = unsafe { AtomicU64::from_ptr(p as *mut u64) };
            let old = rmw64(a, i.op, base_op, d0, d1);
            if ret {
                w.set_vlane(dst, l, old as u32);
                w.set_vlane(dst + 1, l, (old >> 32) as u32);
            }
        } else {
            let d0 = w.vlane(data, l);
            let d1 = w.vlane(data + 1, l);
            // SAFETY: p is approved for 4 bytes and 4-byte aligned (checked above).
            let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
            let old = rmw32(a, base_op, d0, d1);
            if ret {
                w.set_vlane(dst, l, old);
            }
        }
    }
    Ok(Step::Continue)
}

/// 32-bit atomic by FLAT opcode; `d1` is the compare value of cmpswap.
pub fn rmw32(a: &AtomicU32, op: u16, d0: u32, d1: u32) -> u32 {
    let o = Ordering::SeqCst;
    let upd = |f: &dyn Fn(u32) -> u32| a.fetch_update(o, o, |x| Some(f(x))).unwrap_or_else(|x| x);
    match op {
        64 => a.swap(d0, o),
        65 => match a.compare_exchange(d1, d0, o, o) {
            Ok(x) | Err(x) => x,
        },
        66 => a.fetch_add(d0, o),
        67 => a.fetch_sub(d0, o),
        68 => upd(&|x| (x as i32).min(d0 as i32) as u32),
        69 => a.fetch_min(d0, o),
        70 => upd(&|x| (x as i32).max(d0 as i32) as u32),
        71 => a.fetch_max(d0, o),
        72 => a.fetch_and(d0, o),
        73 => a.fetch_or(d0, o),
        74 => a.fetch_xor(d0, o),
        75 => upd(&|x| if x >= d0 { 0 } else { x + 1 }),
        76 => upd(&|x| if x == 0 || x > d0 { d0 } else { x - 1 }),
        77 => upd(&|x| (f32::from_bits(x) + f32::from_bits(d0)).to_bits()),
        _ => a.load(o),
    }
}

pub fn rmw64(a: &AtomicU64, op: u16, base_op: u16, d0: u64, d1: u64) -> u64 {
    let o = Ordering::SeqCst;
    let upd = |f: &dyn Fn(u64) -> u64| a.fetch_update(o, o, |x| Some(f(x))).unwrap_or_else(|x| x);
    match op {
        79 => return upd(&|x| (f64::from_bits(x) + f64::from_bits(d0)).to_bits()),
        // Zeros and NaNs as v_min_f64/v_max_f64 (see ds.rs's ds_min_f32).
        80 => return upd(&|x| fmin64(f64::from_bits(x), f64::from_bits(d0)).to_bits()),
        81 => return upd(&|x| fmax64(f64::from_bits(x), f64::from_bits(d0)).to_bits()),
        _ => {}
    }
    match base_op {
        64 => a.swap(d0, o),
        65 => match a.compare_exchange(d1, d0, o, o) {
            Ok(x) | Err(x) => x,
        },
        66 => a.fetch_add(d0, o),
        67 => a.fetch_sub(d0, o),
        68 => upd(&|x| (x as i64).min(d0 as i64) as u64),
        69 => a.fetch_min(d0, o),
        70 => upd(&|x| (x as i64).max(d0 as i64) as u64),
        71 => a.fetch_max(d0, o),
        72 => a.fetch_and(d0, o),
        73 => a.fetch_or(d0, o),
        74 => a.fetch_xor(d0, o),
        75 => upd(&|x| if x >= d0 { 0 } else { x + 1 }),
        76 => upd(&|x| if x == 0 || x > d0 { d0 } else { x - 1 }),
        _ => a.load(o),
    }
}

/// MUBUF loads/stores. The private-segment buffer resource hsasim hands to kernels has
/// its base in the private aperture, so stack accesses through it land in the wave's
/// per-lane scratch; any other resource addresses global memory (base + offsets, without
/// swizzling).
///
/// Scratch through the private-segment buffer is swizzled on GFX9 (element size 4, index
/// stride 64): the wave's bytes are laid out dword-interleaved by lane, the soffset SGPR
/// is a *wave* byte offset added before swizzling, and the instruction and VGPR offsets
/// are per-lane. Code built for it keeps the stack and frame pointers (s32/s33) in wave
/// units, i.e. 64 times the per-lane offset, so in hsasim's per-lane model soffset
/// contributes soffset / 64.
pub fn buffer_access(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let rsrc = i.saddr;
    let d0 = w.sreg64(rsrc);
    let base = d0 & 0xffff_ffff_ffff;
    let stride = (d0 >> 48) & 0x3fff;
    let soff = w.sread32(i.imm2, 0, i.info.fk) as u64;
    let offen = i.mflags & (1 << 6) != 0;
    let idxen = i.mflags & (1 << 7) != 0;
    let vr = (i.src[0] as usize).wrapping_sub(256);
    let mut addrs = [0u64; LANES];
    let in_private = (PRIVATE_BASE..PRIVATE_BASE + APERTURE_SIZE).contains(&base);
    for (l, a) in addrs.iter_mut().enumerate() {
        let (idx, voff) = match (idxen, offen) {
            (true, true) => (w.vlane(vr, l) as u64, w.vlane(vr + 1, l) as u64),
            (true, false) => (w.vlane(vr, l) as u64, 0),
            (false, true) => (0, w.vlane(vr, l) as u64),
            _ => (0, 0),
        };
        *a = if in_private {
            let off = soff / LANES as u64 + i.imm as u64 + voff + idx * stride;
            (base - PRIVATE_BASE) + off
        } else {
            base.wrapping_add(soff + i.imm as u64 + voff + idx * stride)
        };
    }
    let is_store = matches!(i.op, 0x18..=0x1f);
    if is_store {
        store(w, i, c, &addrs, in_private, i.op)
    } else {
        load(w, i, c, &addrs, in_private, i.op)
    }
}

pub fn buffer_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::Continue)
}

#[cfg(test)]
mod tests {
    use super::rmw64;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn f64_min_max_atomics_order_zeros() {
        let (pz, nz) = (0u64, (-0.0f64).to_bits());
        for (m, x) in [(pz, nz), (nz, pz)] {
            let a = AtomicU64::new(m);
            assert_eq!(rmw64(&a, 80, 80, x, 0), m);
            assert_eq!(a.into_inner(), nz, "min_f64 {m:#x} {x:#x}");
            let a = AtomicU64::new(m);
            rmw64(&a, 81, 81, x, 0);
            assert_eq!(a.into_inner(), pz, "max_f64 {m:#x} {x:#x}");
        }
    }
}
