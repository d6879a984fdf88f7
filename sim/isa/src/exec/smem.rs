//! Scalar memory (SMEM): loads and stores of dwords through the scalar cache.

use super::{host_read, host_write, Ctx, Step};
use crate::api::GfxModel;
use crate::inst::Inst;
use crate::wave::Wave;
use std::sync::OnceLock;
use std::time::Instant;

type R = crate::exec::Outcome;

/// Byte offset of an SMEM instruction: the immediate and/or the SGPR soffset.
#[inline(always)]
fn offset(w: &Wave, i: &Inst) -> u64 {
    let imm = (i.words[0] >> 17) & 1 != 0;
    let soe = (i.words[0] >> 14) & 1 != 0;
    let mut off = 0i64;
    if imm {
        off += i.imm as i64;
    }
    if (!imm || soe) && i.seg != 0xffff {
        off += w.sread32(i.seg, 0, i.info.fk) as i64;
    }
    off as u64
}

pub fn s_load(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let base = w.sreg64(i.saddr);
    // The scalar unit ignores the two low address bits.
    let addr = base.wrapping_add(offset(w, i)) & !3;
    let n = i.info.w[0] as u64;
    let host = c.check(w, i, addr, n * 4, false)?;
    // Every wave loads its kernel arguments: copy the usual sizes whole when the
    // destination lies within the SGPRs.
    let dst = i.dst as usize;
    let copied = match n {
        1 => copy_dwords::<1>(w, dst, host),
        2 => copy_dwords::<2>(w, dst, host),
        4 => copy_dwords::<4>(w, dst, host),
        8 => copy_dwords::<8>(w, dst, host),
        16 => copy_dwords::<16>(w, dst, host),
        _ => false,
    };
    if !copied {
        for k in 0..n {
            // SAFETY: the whole range addr..addr+4n was checked just above.
            let v: u32 = unsafe { host_read(host + 4 * k) };
            w.write_s32(i.dst + k as u16, v);
        }
    }
    Ok(Step::Continue)
}

/// Copies `N` dwords from checked host memory at `host` into SGPRs `dst..dst + N` if they
/// all exist (else copies nothing and answers false, for the caller's dword-by-dword path,
/// which drops writes past the SGPRs as the hardware does).
#[inline(always)]
fn copy_dwords<const N: usize>(w: &mut Wave, dst: usize, host: u64) -> bool {
    let Some(to) = w.s.get_mut(dst..dst + N) else {
        return false;
    };
    // SAFETY: the caller checked host..host + 4N with the guest memory map.
    let v: [u32; N] = unsafe { host_read(host) };
    to.copy_from_slice(&v);
    true
}

/// `s_buffer_load_*`: sbase is a 128-bit buffer resource (base in the low 48 bits,
/// num_records in dword 2). Dwords past num_records read as zero, as on hardware.
pub fn s_buffer_load(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let d0 = w.sreg64(i.saddr);
    let base = d0 & 0xffff_ffff_ffff;
    let num_records = w.s[(i.saddr as usize + 2) & 127] as u64;
    let off = offset(w, i) & 0xffff_ffff & !3;
    let n = i.info.w[0] as u64;
    for k in 0..n {
        let o = off + 4 * k;
        let v = if o + 4 <= num_records {
            let addr = base.wrapping_add(o);
            let host = c.check(w, i, addr, 4, false)?;
            // SAFETY: checked just above.
            unsafe { host_read::<u32>(host) }
        } else {
            0
        };
        w.write_s32(i.dst + k as u16, v);
    }
    Ok(Step::Continue)
}

pub fn s_store(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let base = w.sreg64(i.saddr);
    let addr = base.wrapping_add(offset(w, i)) & !3;
    let n = i.info.w[0] as u64;
    let host = c.check(w, i, addr, n * 4, true)?;
    for k in 0..n {
        let v = w.s[(i.dst as usize + k as usize) & 127];
        // SAFETY: the whole range was checked just above.
        unsafe { host_write(host + 4 * k, v) };
    }
    Ok(Step::Continue)
}

pub fn s_cache_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::Continue)
}

fn now_ns() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Shader clock cycles since the interpreter's first `s_memtime`: monotonic and common to
/// all worker threads, so a wave that moves between threads never sees its clock go back.
fn shader_cycles(model: GfxModel) -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let ns = EPOCH.get_or_init(Instant::now).elapsed().as_nanos();
    (ns * u128::from(model.shader_clock_mhz()) / 1000) as u64
}

/// `s_memtime`: the free-running shader clock counter HIP's `clock64()` reads. It counts at
/// the peak clock the agent reports (`clockRate`), as programs assume when they turn cycle
/// deltas into milliseconds with it.
///
/// Under virtual time it is the wave's own clock: the dispatch's start in cycles plus the
/// cycles of what the wave ran so far (this instruction included), so it is the same in
/// every run and on every worker.
pub fn s_memtime(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let now = match &c.info.timing {
        Some(t) => t.shader_clock(t.costs.cost(&w.mix).cycles),
        None => shader_cycles(c.info.model),
    };
    w.write_s64(i.dst, now);
    Ok(Step::Continue)
}

/// `s_memrealtime`: the 100 MHz "real time" clock the HSA agent reports; under virtual
/// time the dispatch's start plus the wave's cycles so far, in 10 ns ticks.
pub fn s_memrealtime(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let now = match &c.info.timing {
        Some(t) => t.real_time(t.costs.cost(&w.mix).cycles),
        None => now_ns() / 10,
    };
    w.write_s64(i.dst, now);
    Ok(Step::Continue)
}
