//! Vector ALU: VOP1, VOP2, VOPC, VOP3 (incl. VOP3b), VOP3P, with DPP/SDWA source forms.
//!
//! Handlers read whole source registers (64 lanes) into stack arrays, compute every lane
//! (arithmetic has no side effects, so inactive lanes cost nothing but time) and write the
//! result under EXEC. That keeps the inner loops branch-free for the compiler.
//!
//! One file per kind of operation (`vop1`, `vop2`, `vop3`, `div`, `vopc`, `packed`, `dot`,
//! `trig`); they share the operand plumbing (`operands`), the handler generators
//! (`generators`) and the numeric helpers (`numeric`, and `exec::half` for f16). Every file
//! takes this module's imports with `use super::*`, so the generated handlers find the same
//! names wherever they expand.

use super::half::*;
use super::round::{self, Rm, F16 as H16, F32 as S32, F64 as D64};
use super::{Ctx, Step};
use crate::inst::{Enc, Ext, Inst};
use crate::wave::{Lanes, Wave, LANES};

type R = crate::exec::Outcome;
const OK: R = Ok(Step::Continue);
type L64 = [u64; LANES];

#[macro_use]
mod generators;
pub(crate) mod numeric;
mod operands;

mod div;
mod dot;
mod packed;
mod trig;
mod vop1;
mod vop2;
mod vop3;
mod vopc;

use generators::*;
use numeric::*;
use operands::*;

pub use div::*;
pub use dot::*;
pub use packed::*;
pub use trig::*;
pub use vop1::*;
pub use vop2::*;
pub use vop3::*;
pub use vopc::*;
