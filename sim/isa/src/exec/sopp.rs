//! SOPP: program control. Memory effects are immediate in this in-order interpreter, so
//! `s_waitcnt` and friends have nothing to wait for.

use super::{Ctx, Step};
use crate::inst::Inst;
use crate::wave::Wave;

type R = crate::exec::Outcome;

pub fn s_nop(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::Continue)
}

pub fn s_endpgm(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::End)
}

/// `s_sleep`: a wave that sleeps is waiting for something; in a cooperative dispatch the
/// host worker runs other workgroups meanwhile (the others run anyway in an ordinary one).
pub fn s_sleep(_w: &mut Wave, _i: &Inst, c: &mut Ctx) -> R {
    Ok(if c.info.cooperative {
        Step::Yield
    } else {
        Step::Continue
    })
}

pub fn s_barrier(_w: &mut Wave, _i: &Inst, _c: &mut Ctx) -> R {
    Ok(Step::Barrier)
}

#[inline(always)]
fn branch(w: &mut Wave, i: &Inst, taken: bool) -> R {
    if taken {
        // Target = address of the next instruction + simm16 * 4.
        w.pc = w.pc.wrapping_add((i.imm as i64 * 4) as u64);
    }
    Ok(Step::Continue)
}

pub fn s_branch(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    branch(w, i, true)
}
pub fn s_cbranch_scc0(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = !w.scc;
    branch(w, i, t)
}
pub fn s_cbranch_scc1(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = w.scc;
    branch(w, i, t)
}
pub fn s_cbranch_vccz(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = w.vcc() == 0;
    branch(w, i, t)
}
pub fn s_cbranch_vccnz(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = w.vcc() != 0;
    branch(w, i, t)
}
pub fn s_cbranch_execz(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = w.exec() == 0;
    branch(w, i, t)
}
pub fn s_cbranch_execnz(w: &mut Wave, i: &Inst, _c: &mut Ctx) -> R {
    let t = w.exec() != 0;
    branch(w, i, t)
}

/// `s_sendmsg`: of the messages (SIMM16 bits 3:0) only MSG_INTERRUPT (1) means something
/// without a graphics pipeline or trap handler: it tells the host ([`GuestMemory::interrupt`],
/// with M0's low byte). The others (GS, GS_DONE, SAVEWAVE, STALL_WAVE_GEN, HALT_WAVES,
/// ORDERED_PS_DONE, EARLY_PRIM_DEALLOC, GS_ALLOC_REQ, GET_DOORBELL, SYSMSG) have nothing to
/// talk to and do nothing, as before.
///
/// [`GuestMemory::interrupt`]: crate::api::GuestMemory::interrupt
pub fn s_sendmsg(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    const MSG_INTERRUPT: i64 = 1;
    if i.imm as i64 & 0xf == MSG_INTERRUPT {
        c.mem.interrupt(w.s[crate::wave::M0] & 0xff);
    }
    Ok(Step::Continue)
}

/// `s_trap`: on hsasim there is no trap handler; the queue reports it as an error.
pub fn s_trap(_w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    Err(Box::new(c.illegal(format!(
        "s_trap {} executed (no trap handler)",
        i.imm & 0xff
    ))))
}

pub fn s_sethalt(_w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    Err(Box::new(c.illegal(format!("`{i}` halted the wave"))))
}
