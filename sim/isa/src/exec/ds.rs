//! DS: the workgroup's LDS (local data share), cross-lane permutes, and the GDS-encoded
//! Global Wave Sync operations (`ds_gws_*`, cooperative dispatches only).
//!
//! All waves of a workgroup run on one host thread, so LDS needs no atomics: a
//! read-modify-write is a plain read and write. An access outside the workgroup's LDS
//! allocation is reported as a memory fault at the LDS offset (hardware would drop the
//! write / return 0, which hides bugs).

use super::simd::{gather64, gather64_many, scatter64};
use super::valu::numeric::{fmax32, fmin32};
use super::{Ctx, Step};
use crate::aperture::SHARED_BASE;
use crate::api::DispatchError;
use crate::gws::{GwsOp, GwsRequest};
use crate::inst::Inst;
use crate::wave::{Wave, LANES, M0};

type R = crate::exec::Outcome;

/// Byte range of one lane's LDS access, or a fault naming the LDS address.
///
/// `addr` is the address VGPR plus the instruction's offset(s); the hardware adds them in 32
/// bits, and compilers rely on it: LLVM folds a constant into the offset field of an access
/// whose base it computed as a negative number (`tile[63 - tid]` becomes `ds_read_b32 v1, v1
/// offset:252` with `v1 = -4 * tid`).
#[inline(always)]
fn lds_off(
    w: &Wave,
    i: &Inst,
    c: &Ctx,
    addr: u64,
    size: u64,
    write: bool,
) -> Result<usize, DispatchError> {
    let addr = addr & 0xffff_ffff;
    if addr + size > c.lds.len() as u64 {
        return Err(c.fault(w, i, SHARED_BASE + addr, write));
    }
    Ok(addr as usize)
}

#[inline(always)]
fn rd(lds: &[u8], off: usize, n: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&lds[off..off + n]);
    u64::from_le_bytes(b)
}

#[inline(always)]
fn wr(lds: &mut [u8], off: usize, n: usize, v: u64) {
    lds[off..off + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

#[inline(always)]
fn vreg(code: u16) -> usize {
    (code as usize).wrapping_sub(256)
}

/// The LDS offsets of every lane's access of `size` bytes at its address VGPR `areg` plus
/// `off` (added in 32 bits, as [`lds_off`] does), when all active lanes' accesses lie inside
/// the LDS: then the caller moves data with no further checks. `None` sends it to the
/// lane-by-lane path, which reports the first faulting lane.
#[inline(always)]
fn lds_offsets(
    w: &Wave,
    areg: usize,
    off: u64,
    size: u64,
    exec: u64,
    lds_len: usize,
) -> Option<[u32; LANES]> {
    let v = &w.v[areg & 511];
    let mut o = [0u32; LANES];
    for l in 0..LANES {
        o[l] = v[l].wrapping_add(off as u32);
    }
    // The highest active offset: u32 compares, which x86 vectors have.
    let mut top = 0u32;
    if exec == u64::MAX {
        for l in 0..LANES {
            top = top.max(o[l]);
        }
    } else {
        for l in 0..LANES {
            top = top.max(if exec >> l & 1 != 0 { o[l] } else { 0 });
        }
    }
    (exec == 0 || top as u64 + size <= lds_len as u64).then_some(o)
}

/// Under full EXEC: the address VGPR's lanes, when every lane's access of `size` bytes at
/// its address plus any offset up to `max_off` lies inside the LDS without wrapping in 32
/// bits (then the address plus an offset is the LDS offset, as [`lds_off`] computes it).
/// One pass serves both accesses of a `ds_read2`/`ds_write2`.
#[inline(always)]
fn lds_bases(
    w: &Wave,
    areg: usize,
    max_off: u64,
    size: u64,
    lds_len: usize,
) -> Option<[u32; LANES]> {
    let v = w.v[areg & 511];
    let mut top = 0u32;
    for l in 0..LANES {
        top = top.max(v[l]);
    }
    (top as u64 + max_off + size <= lds_len as u64).then_some(v)
}

/// Reads the dword at `o[l] + extra` of the LDS into lane `l` of `reg` for the lanes in
/// `exec`; [`lds_offsets`] checked every such access.
#[inline(always)]
fn gather_lds(lds: *const u8, o: &[u32; LANES], extra: usize, exec: u64, reg: &mut [u32; LANES]) {
    if exec == u64::MAX {
        // SAFETY: lds_offsets checked o[l] + size <= LDS length for every lane, and
        // `extra` + 4 <= size.
        unsafe { gather64(lds.add(extra), o, reg) };
        return;
    }
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            // SAFETY: as above, for this active lane.
            reg[l] =
                unsafe { std::ptr::read_unaligned(lds.add(o[l] as usize + extra) as *const u32) };
        }
    }
}

pub fn ds_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::Continue)
}

simd_handler! {
    pub fn ds_read(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let (a, d) = (vreg(i.src[0]), vreg(i.dst));
        let exec = w.exec();
        let size: u64 = match i.op {
            57 | 58 => 1,
            59 | 60 => 2,
            _ => i.info.w[0] as u64 * 4,
        };
        if !matches!(i.op, 57..=60) {
            if let Some(o) = lds_offsets(w, a, i.imm as u64, size, exec, c.lds.len()) {
                let lds = c.lds.as_ptr();
                for k in 0..(size / 4) as usize {
                    gather_lds(lds, &o, 4 * k, exec, &mut w.v[(d + k) & 511]);
                }
                return Ok(Step::Continue);
            }
        }
        for l in 0..LANES {
            if exec >> l & 1 == 0 {
                continue;
            }
            let addr = w.vlane(a, l) as u64 + i.imm as u64;
            let off = lds_off(w, i, c, addr, size, false)?;
            match i.op {
                57 => w.set_vlane(d, l, rd(c.lds, off, 1) as u8 as i8 as i32 as u32),
                58 => w.set_vlane(d, l, rd(c.lds, off, 1) as u32),
                59 => w.set_vlane(d, l, rd(c.lds, off, 2) as u16 as i16 as i32 as u32),
                60 => w.set_vlane(d, l, rd(c.lds, off, 2) as u32),
                _ => {
                    for k in 0..(size / 4) as usize {
                        let v = rd(c.lds, off + 4 * k, 4) as u32;
                        w.set_vlane(d + k, l, v);
                    }
                }
            }
        }
        Ok(Step::Continue)
    }
}

simd_handler! {
    pub fn ds_write(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let (a, s) = (vreg(i.src[0]), vreg(i.src[1]));
        let exec = w.exec();
        let size: u64 = match i.op {
            30 | 0x54 => 1,
            31 | 0x55 => 2,
            _ => i.info.w[2] as u64 * 4,
        };
        if !matches!(i.op, 30 | 31 | 0x54 | 0x55) {
            if let Some(o) = lds_offsets(w, a, i.imm as u64, size, exec, c.lds.len()) {
                let lds = c.lds.as_mut_ptr();
                if exec == u64::MAX && size == 4 {
                    // SAFETY: lds_offsets checked o[l] + 4 <= LDS length for every lane; the
                    // LDS is not the register file or `o`.
                    unsafe { scatter64(lds, &o, &w.v[s & 511]) };
                    return Ok(Step::Continue);
                }
                // Lane by lane, in order: overlapping lanes leave the last lane's value.
                for l in 0..LANES {
                    if exec == u64::MAX || exec >> l & 1 != 0 {
                        for k in 0..(size / 4) as usize {
                            // SAFETY: lds_offsets checked o[l] + size <= LDS length.
                            unsafe {
                                std::ptr::write_unaligned(lds.add(o[l] as usize + 4 * k) as *mut u32, w.v[(s + k) & 511][l])
                            };
                        }
                    }
                }
                return Ok(Step::Continue);
            }
        }
        for l in 0..LANES {
            if exec >> l & 1 == 0 {
                continue;
            }
            let addr = w.vlane(a, l) as u64 + i.imm as u64;
            let off = lds_off(w, i, c, addr, size, true)?;
            let v = w.vlane(s, l);
            match i.op {
                0x54 | 0x55 => wr(c.lds, off, size as usize, (v >> 16) as u64),
                30 | 31 => wr(c.lds, off, size as usize, v as u64),
                _ => {
                    for k in 0..(size / 4) as usize {
                        let v = w.vlane(s + k, l);
                        wr(c.lds, off + 4 * k, 4, v as u64);
                    }
                }
            }
        }
        Ok(Step::Continue)
    }
}

/// `ds_write2*` / `ds_read2*`: two accesses at offset0 and offset1 scaled by the element
/// size (times 64 for the st64 forms).
#[inline(always)]
fn two_offsets(i: &Inst) -> (u64, u64, usize) {
    match i.op {
        14 | 55 => scaled_offsets(i, 4, false),
        15 | 56 => scaled_offsets(i, 4, true),
        78 | 119 => scaled_offsets(i, 8, false),
        _ => scaled_offsets(i, 8, true),
    }
}

/// [`two_offsets`] for an element of `elem` bytes, `st64` the form.
#[inline(always)]
fn scaled_offsets(i: &Inst, elem: u64, st64: bool) -> (u64, u64, usize) {
    let scale = if st64 { elem * 64 } else { elem };
    (
        (i.imm as u64 & 0xff) * scale,
        i.imm2 as u64 * scale,
        elem as usize,
    )
}

simd_handler! {
    pub fn ds_write2(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let (a, s0, s1) = (vreg(i.src[0]), vreg(i.src[1]), vreg(i.src[2]));
        let (o0, o1, elem) = two_offsets(i);
        let exec = w.exec();
        let len = c.lds.len();
        if let (Some(q0), Some(q1)) = (
            lds_offsets(w, a, o0, elem as u64, exec, len),
            lds_offsets(w, a, o1, elem as u64, exec, len),
        ) {
            let lds = c.lds.as_mut_ptr();
            for l in 0..LANES {
                if exec == u64::MAX || exec >> l & 1 != 0 {
                    for k in 0..elem / 4 {
                        // SAFETY: lds_offsets checked both offsets + elem <= LDS length.
                        unsafe {
                            std::ptr::write_unaligned(lds.add(q0[l] as usize + 4 * k) as *mut u32, w.v[(s0 + k) & 511][l]);
                            std::ptr::write_unaligned(lds.add(q1[l] as usize + 4 * k) as *mut u32, w.v[(s1 + k) & 511][l]);
                        }
                    }
                }
            }
            return Ok(Step::Continue);
        }
        for l in 0..LANES {
            if exec >> l & 1 == 0 {
                continue;
            }
            let base = w.vlane(a, l) as u64;
            let p0 = lds_off(w, i, c, base + o0, elem as u64, true)?;
            let p1 = lds_off(w, i, c, base + o1, elem as u64, true)?;
            for k in 0..elem / 4 {
                let v0 = w.vlane(s0 + k, l);
                let v1 = w.vlane(s1 + k, l);
                wr(c.lds, p0 + 4 * k, 4, v0 as u64);
                wr(c.lds, p1 + 4 * k, 4, v1 as u64);
            }
        }
        Ok(Step::Continue)
    }
}

simd_handler! {
    pub fn ds_read2(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        read2(w, i, c, two_offsets(i))
    }
}

simd_handler! {
    /// `ds_read2_b32` and `ds_read2st64_b32` (LDS tiles, tree reductions): `ds_read2` with
    /// the element size a constant, so that the one-dword gather is chosen at compile time.
    pub fn ds_read2_dword(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        read2(w, i, c, scaled_offsets(i, 4, i.op == 56))
    }
}

/// `ds_read2*` with the offsets and element size [`two_offsets`] gives.
#[inline(always)]
fn read2(w: &mut Wave, i: &Inst, c: &mut Ctx, (o0, o1, elem): (u64, u64, usize)) -> R {
    let (a, d) = (vreg(i.src[0]), vreg(i.dst));
    let exec = w.exec();
    let words = elem / 4;
    let len = c.lds.len();
    if exec == u64::MAX {
        if let Some(v) = lds_bases(w, a, o0.max(o1), elem as u64, len) {
            let lds = c.lds.as_ptr();
            // The dwords of both reads in register order (d.. from o0, d + words.. from
            // o1): the row and the LDS address of each.
            let at = |n: usize| {
                let off = if n < words { o0 } else { o1 } as usize;
                ((d + n) & 511, lds.wrapping_add(off + 4 * (n % words)))
            };
            // The rows are consecutive (mod 512), so distinct, whatever `d`.
            match words {
                1 => {
                    let [(r0, p0), (r1, p1)] = [at(0), at(1)];
                    if let Ok(outs) = w.v.get_disjoint_mut([r0, r1]) {
                        // SAFETY: lds_bases checked v[l] + off + elem <= LDS length for
                        // every lane, and 4 * k + 4 <= elem.
                        unsafe { gather64_many([p0, p1], &v, outs) };
                        return Ok(Step::Continue);
                    }
                }
                2 => {
                    let dwords: [(usize, *const u8); 4] = std::array::from_fn(at);
                    if let Ok(outs) = w.v.get_disjoint_mut(dwords.map(|x| x.0)) {
                        // SAFETY: as above.
                        unsafe { gather64_many(dwords.map(|x| x.1), &v, outs) };
                        return Ok(Step::Continue);
                    }
                }
                _ => {}
            }
        }
    }
    if let (Some(q0), Some(q1)) = (
        lds_offsets(w, a, o0, elem as u64, exec, len),
        lds_offsets(w, a, o1, elem as u64, exec, len),
    ) {
        let lds = c.lds.as_ptr();
        for (q, first) in [(&q0, d), (&q1, d + words)] {
            for k in 0..words {
                gather_lds(lds, q, 4 * k, exec, &mut w.v[(first + k) & 511]);
            }
        }
        return Ok(Step::Continue);
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let base = w.vlane(a, l) as u64;
        let p0 = lds_off(w, i, c, base + o0, elem as u64, false)?;
        let p1 = lds_off(w, i, c, base + o1, elem as u64, false)?;
        for k in 0..words {
            let v0 = rd(c.lds, p0 + 4 * k, 4) as u32;
            let v1 = rd(c.lds, p1 + 4 * k, 4) as u32;
            w.set_vlane(d + k, l, v0);
            w.set_vlane(d + words + k, l, v1);
        }
    }
    Ok(Step::Continue)
}

/// LDS atomics (with and without return).
pub fn ds_atomic(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let (a, s0, s1, d) = (vreg(i.src[0]), vreg(i.src[1]), vreg(i.src[2]), vreg(i.dst));
    let wide = i.info.w[2] == 2;
    let size = if wide { 8 } else { 4 };
    let ret = i.info.w[0] != 0;
    // Map the returning opcode onto its non-returning twin for the operation.
    let op = match i.op {
        124 => 92,
        96..=127 => i.op - 32,
        32..=63 => i.op - 32,
        x => x,
    };
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let addr = w.vlane(a, l) as u64 + i.imm as u64;
        let off = lds_off(w, i, c, addr, size, true)?;
        let old = rd(c.lds, off, size as usize);
        let (x, y) = if wide {
            (
                w.vlane(s0, l) as u64 | (w.vlane(s0 + 1, l) as u64) << 32,
                w.vlane(s1, l) as u64 | (w.vlane(s1 + 1, l) as u64) << 32,
            )
        } else {
            (w.vlane(s0, l) as u64, w.vlane(s1, l) as u64)
        };
        let new = if wide {
            lds_op64(op, old, x, y)
        } else {
            lds_op32(op, old as u32, x as u32, y as u32) as u64
        };
        wr(c.lds, off, size as usize, new);
        if ret {
            w.set_vlane(d, l, old as u32);
            if wide {
                w.set_vlane(d + 1, l, (old >> 32) as u32);
            }
        }
    }
    Ok(Step::Continue)
}

fn lds_op32(op: u16, m: u32, x: u32, y: u32) -> u32 {
    let f = f32::from_bits;
    match op {
        0 => m.wrapping_add(x),
        1 => m.wrapping_sub(x),
        2 => x.wrapping_sub(m),
        3 => {
            if m >= x {
                0
            } else {
                m + 1
            }
        }
        4 => {
            if m == 0 || m > x {
                x
            } else {
                m - 1
            }
        }
        5 => (m as i32).min(x as i32) as u32,
        6 => (m as i32).max(x as i32) as u32,
        7 => m.min(x),
        8 => m.max(x),
        9 => m & x,
        10 => m | x,
        11 => m ^ x,
        12 => (m & !x) | y,
        13 => x,
        // cmpst: DATA0 is the compare value, DATA1 the value stored on a match.
        16 => {
            if m == x {
                y
            } else {
                m
            }
        }
        17 => {
            if f(m) == f(x) {
                y
            } else {
                m
            }
        }
        // The manual gives a compare-and-select and leaves equal zeros open; these order
        // -0 below +0 and skip a NaN operand as v_min/v_max do, so the result does not
        // hang on the operand order or the host's f32::min.
        18 => fmin32(f(m), f(x)).to_bits(),
        19 => fmax32(f(m), f(x)).to_bits(),
        21 => (f(m) + f(x)).to_bits(),
        _ => m,
    }
}

fn lds_op64(op: u16, m: u64, x: u64, y: u64) -> u64 {
    match op {
        64 => m.wrapping_add(x),
        65 => m.wrapping_sub(x),
        69 => (m as i64).min(x as i64) as u64,
        70 => (m as i64).max(x as i64) as u64,
        71 => m.min(x),
        72 => m.max(x),
        73 => m & x,
        74 => m | x,
        75 => m ^ x,
        77 => x,
        80 => {
            if m == x {
                y
            } else {
                m
            }
        }
        92 => (f64::from_bits(m) + f64::from_bits(x)).to_bits(),
        _ => m,
    }
}

/// `ds_swizzle_b32`: lane shuffle within groups of 32 (bit-mask mode) or quads.
pub fn ds_swizzle(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let (a, d) = (vreg(i.src[0]), vreg(i.dst));
    let off = i.imm as u32 & 0xffff;
    let exec = w.exec();
    let src = w.v[a & 511];
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let s = if off & 0x8000 != 0 {
            (l & !3) | ((off >> (2 * (l & 3))) & 3) as usize
        } else {
            let (and, or, xor) = (off & 0x1f, (off >> 5) & 0x1f, (off >> 10) & 0x1f);
            let g = (((l as u32 & 0x1f) & and) | or) ^ xor;
            (l & 0x20) | g as usize
        };
        // Reading an inactive lane yields 0.
        let v = if exec >> s & 1 != 0 { src[s] } else { 0 };
        w.set_vlane(d, l, v);
    }
    Ok(Step::Continue)
}

simd_handler! {
    /// `ds_permute_b32` (push to lane addr/4) and `ds_bpermute_b32` (pull from lane addr/4).
    pub fn ds_permute(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
        let (a, s, d) = (vreg(i.src[0]), vreg(i.src[1]), vreg(i.dst));
        if i.op == 63 && w.exec() == u64::MAX {
            // Every lane pulls (a wave reduction's shuffle): no lane tests, and nothing
            // copied but the result (the destination may be a source).
            let (addr, data) = (&w.v[a & 511], &w.v[s & 511]);
            w.v[d & 511] = super::simd::pull64(data, addr, i.imm as u32);
            return Ok(Step::Continue);
        }
        permute_lanes(w, i, c)
    }
}

/// [`ds_permute`] lane by lane under any EXEC, either direction.
#[inline(always)]
fn permute_lanes(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let (a, s, d) = (vreg(i.src[0]), vreg(i.src[1]), vreg(i.dst));
    let exec = w.exec();
    let addr = w.v[a & 511];
    let data = w.v[s & 511];
    let mut out = w.v[d & 511];
    let backward = i.op == 63;
    if backward {
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                let src = ((addr[l].wrapping_add(i.imm as u32) >> 2) & 63) as usize;
                out[l] = if exec >> src & 1 != 0 { data[src] } else { 0 };
            }
        }
    } else {
        let mut res = [0u32; LANES];
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                let dst = ((addr[l].wrapping_add(i.imm as u32) >> 2) & 63) as usize;
                res[dst] = data[l];
            }
        }
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                out[l] = res[l];
            }
        }
    }
    w.v[d & 511] = out;
    Ok(Step::Continue)
}

// ---------------------------------------------------------------- Global Wave Sync

/// The GWS resource a `ds_gws_*` instruction names: offset[5:0] + M0[21:16], 6 bits.
fn gws_resource(w: &Wave, i: &Inst) -> u8 {
    ((i.imm as u32 & 0x3f) + ((w.s[M0] >> 16) & 0x3f)) as u8 & 0x3f
}

/// The data operand: the VGPR of the first active lane (lane 0 when EXEC is 0).
fn gws_value(w: &Wave, i: &Inst) -> u32 {
    let lane = w.exec().trailing_zeros() as usize & 63;
    w.vlane(vreg(i.src[0]), lane)
}

/// GWS exists only on cooperative queues; elsewhere the instruction is a device fault
/// (hardware would hang or fault the queue).
fn gws_available(i: &Inst, c: &Ctx) -> Result<(), DispatchError> {
    if c.info.cooperative {
        Ok(())
    } else {
        Err(c.illegal(format!(
            "`{i}` uses the Global Wave Sync unit, which only dispatches from a queue created \
             HSA_QUEUE_TYPE_COOPERATIVE have; this queue was not created cooperative \
             (HIP: launch with hipLaunchCooperativeKernel)"
        )))
    }
}

pub fn ds_gws_init(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    gws_available(i, c)?;
    w.gws = GwsRequest {
        op: GwsOp::Init,
        resource: gws_resource(w, i),
        value: gws_value(w, i),
    };
    Ok(Step::Gws)
}

pub fn ds_gws_barrier(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    gws_available(i, c)?;
    w.gws = GwsRequest {
        op: GwsOp::Barrier,
        resource: gws_resource(w, i),
        value: gws_value(w, i),
    };
    Ok(Step::Gws)
}

/// The semaphore operations (`ds_gws_sema_v/_br/_p/_release_all`): no HIP device library
/// uses them, and hsasim does not model them.
pub fn ds_gws_sema(_w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    gws_available(i, c)?;
    Err(Box::new(DispatchError::UnknownInstruction {
        pc: c.pc,
        words: [i.words[0], i.words[1]],
        detail: format!(
            "`{i}`: the GWS semaphore operations are not modelled by hsasim (only ds_gws_init \
             and ds_gws_barrier are)"
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::lds_op32;

    #[test]
    fn float_min_max_order_zeros_and_skip_nans() {
        let (pz, nz, one, nan) = (0u32, 0x8000_0000u32, 1f32.to_bits(), 0x7fc0_0000u32);
        for (m, x) in [(pz, nz), (nz, pz)] {
            assert_eq!(lds_op32(18, m, x, 0), nz, "ds_min_f32 {m:#x} {x:#x}");
            assert_eq!(lds_op32(19, m, x, 0), pz, "ds_max_f32 {m:#x} {x:#x}");
        }
        assert_eq!(lds_op32(18, nan, one, 0), one);
        assert_eq!(lds_op32(19, one, nan, 0), one);
    }
}
