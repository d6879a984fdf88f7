//! Random programs: their form, generation from a seed, C (HIP) source, and evaluation on
//! the host lane by lane (cross-lane operations wave by wave).

use super::ops::{self, Only, OpDef, Ty, ALL_TYPES};
use hsasim_isa::GfxModel;

/// Work-items per program (two waves of 64 in two workgroups of 64).
pub const LANES: usize = 128;
pub const WAVE: usize = 64;

/// SplitMix64: small, deterministic, good enough for choosing program shapes.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c909)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Operand {
    Var(usize),
    Const(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Eq,
    Ne,
    /// Signed less-than for integers.
    SLt,
    /// `!(a < b)`: true for unordered float operands.
    Nlt,
    /// `(a & b) != 0` for integers.
    Test,
}

#[derive(Clone, Copy, Debug)]
pub struct Cond {
    pub a: usize,
    pub b: Operand,
    pub cmp: Cmp,
}

/// Cross-lane operations (only at the top level, where every lane is active).
#[derive(Clone, Copy, Debug)]
pub enum Cross {
    /// `__builtin_amdgcn_update_dpp(old, src, ctrl, row_mask, bank_mask, bound_ctrl)`.
    UpdateDpp {
        ctrl: u32,
        row_mask: u32,
        bank_mask: u32,
        bound: bool,
    },
    /// `v_add_u32_dpp dst(=old), src0(dpp), src1` as inline assembly.
    AddDpp {
        ctrl: u32,
        bound: bool,
    },
    ReadLane(u32),
    ReadFirstLane,
    /// ds_bpermute from lane `(lane ^ k) & 63`.
    BpermXor(u32),
    /// ds_bpermute from lane `idx & 63` (idx a u32 variable).
    BpermVar,
    /// `ballot((x & 1) != 0)`, a u64.
    Ballot,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Input {
        dst: usize,
        nontemporal: bool,
    },
    Op {
        dst: usize,
        op: usize,
        args: Vec<Operand>,
    },
    /// `defs` are declared before the `if` and assigned on both paths.
    If {
        cond: Cond,
        defs: Vec<usize>,
        then_: Vec<Stmt>,
        else_: Vec<Stmt>,
    },
    /// `dst = init; for (i < count & 3) dst = op(dst, rest..)`.
    Loop {
        dst: usize,
        init: Operand,
        count: usize,
        op: usize,
        rest: Vec<Operand>,
    },
    Cross {
        dst: usize,
        kind: Cross,
        args: Vec<usize>,
    },
    ScratchInit {
        base: usize,
    },
    ScratchStore {
        idx: usize,
        val: usize,
    },
    ScratchLoad {
        dst: usize,
        idx: usize,
    },
}

/// How a top-level result is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Plain,
    Nontemporal,
    Volatile,
}

#[derive(Clone)]
pub struct Program {
    pub name: String,
    pub model: GfxModel,
    pub vars: Vec<Ty>,
    /// Output slot of each top-level variable.
    pub slots: Vec<Option<(usize, StoreKind)>>,
    pub body: Vec<Stmt>,
    /// Elements of the private array (0: none).
    pub scratch_len: u32,
    /// `inputs[k][lane]`: bits of input `k`.
    pub inputs: Vec<Vec<u64>>,
}

fn const_pool(ty: Ty) -> &'static [u64] {
    match ty {
        Ty::U32 => &[
            0,
            1,
            2,
            3,
            7,
            16,
            31,
            32,
            63,
            64,
            0xffff_ffff,
            0xffff_fff0,
            0x8000_0000,
            0x7fff_ffff,
            0xffff,
            0x1_0000,
            0x1234_5678,
            0x3f80_0000,
            0xff,
        ],
        Ty::U64 => &[
            0,
            1,
            63,
            64,
            u64::MAX,
            1 << 63,
            0xffff_ffff,
            1 << 32,
            0x3ff0_0000_0000_0000,
            0x0123_4567_89ab_cdef,
            (-7i64) as u64,
        ],
        Ty::F32 => &[
            0,
            0x8000_0000,
            0x3f00_0000,
            0xbf00_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x4000_0000,
            0xc000_0000,
            0x4080_0000,
            0xc080_0000,
            0x3e22_f983,
            0x4040_0000,
            0x3dcc_cccd,
            0x0001_16c2,
            0x0000_0001,
            0x807f_ffff,
            0x7f7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7fa0_0000,
            0x4b80_0000,
            0x5015_02f9,
            0x0080_0000,
        ],
        Ty::F64 => &[
            0,
            1 << 63,
            0x3fe0_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x4000_0000_0000_0000,
            0xc010_0000_0000_0000,
            0x3fc4_5f30_6dc9_c882,
            0x3fb9_9999_9999_999a,
            0x0000_0000_0000_0001,
            0x000f_ffff_ffff_ffff,
            0x7fef_ffff_ffff_ffff,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff4_0000_0000_0000,
            0x4340_0000_0000_0000,
            0x41e0_0000_0000_0000,
        ],
        Ty::F16 => &[
            0, 0x8000, 0x3800, 0x3c00, 0xbc00, 0x4000, 0x4400, 0xc400, 0x3118, 0x0001, 0x03ff,
            0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0x5640,
        ],
        Ty::BF16 => &[
            0, 0x8000, 0x3f80, 0xbf80, 0x4000, 0x0001, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x3e9a,
        ],
        Ty::H2 => &[
            0,
            0x3c00_3c00,
            0x3800_bc00,
            0x7c00_0001,
            0x7e00_4000,
            0x8000_0000,
        ],
        Ty::F2 => &[
            0,
            0x3f80_0000_3f80_0000,
            0xbf80_0000_4000_0000,
            0x7fc0_0000_0000_0001,
            0x7f80_0000_8000_0000,
        ],
    }
}

/// A random value of `ty`: interesting constants, moderate numbers, or random bits.
fn random_value(rng: &mut Rng, ty: Ty) -> u64 {
    let r = rng.below(10);
    if r < 4 {
        return rng.pick(const_pool(ty));
    }
    if r == 9 {
        return rng.next() & ty.mask();
    }
    let f32_moderate = |rng: &mut Rng| {
        let e = 127 + rng.below(41) as u64 - 20;
        ((rng.next() & 1) << 31) | e << 23 | (rng.next() & 0x7f_ffff)
    };
    let f16_moderate = |rng: &mut Rng| {
        let e = 15 + rng.below(17) as u64 - 8;
        ((rng.next() & 1) << 15) | e << 10 | (rng.next() & 0x3ff)
    };
    match ty {
        Ty::U32 => {
            if rng.chance(0.5) {
                rng.below(200) as u64
            } else {
                (rng.below(2000) as i64 - 1000) as u32 as u64
            }
        }
        Ty::U64 => {
            if rng.chance(0.5) {
                rng.below(1 << 20) as u64
            } else {
                (rng.next() as i64 >> rng.below(64)) as u64
            }
        }
        Ty::F32 => f32_moderate(rng),
        Ty::F64 => {
            let e = 1023 + rng.below(81) as u64 - 40;
            ((rng.next() & 1) << 63) | e << 52 | (rng.next() & 0xf_ffff_ffff_ffff)
        }
        Ty::F16 => f16_moderate(rng),
        Ty::BF16 => f32_moderate(rng) >> 16,
        Ty::H2 => f16_moderate(rng) | f16_moderate(rng) << 16,
        Ty::F2 => f32_moderate(rng) | f32_moderate(rng) << 32,
    }
}

const DPP_CTRLS: &[u32] = &[
    0x00, 0x1b, 0x4e, 0xb1, 0xe4, 0x39, 0x101, 0x103, 0x10f, 0x111, 0x112, 0x118, 0x121, 0x124,
    0x12f, 0x130, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x150, 0x155, 0x15f,
];

/// Generator state.
struct Gen<'a> {
    rng: Rng,
    ops: &'a [OpDef],
    model: GfxModel,
    vars: Vec<Ty>,
    /// Chance of a constant operand.
    const_p: f64,
}

impl Gen<'_> {
    fn new_var(&mut self, ty: Ty) -> usize {
        self.vars.push(ty);
        self.vars.len() - 1
    }

    fn allowed(&self, op: &OpDef) -> bool {
        op.only == Only::Any || self.model == GfxModel::Gfx942
    }

    /// An operand of type `ty` from `avail`, recent ones more likely.
    fn operand(&mut self, ty: Ty, avail: &[usize]) -> Operand {
        let cands: Vec<usize> = avail
            .iter()
            .copied()
            .filter(|&v| self.vars[v] == ty)
            .collect();
        if cands.is_empty() || self.rng.chance(self.const_p) {
            return Operand::Const(random_value(&mut self.rng, ty));
        }
        let n = cands.len();
        let k = if self.rng.chance(0.6) {
            n - 1 - self.rng.below(n.min(6))
        } else {
            self.rng.below(n)
        };
        Operand::Var(cands[k])
    }

    fn var_of(&mut self, ty: Ty, avail: &[usize]) -> Option<usize> {
        let cands: Vec<usize> = avail
            .iter()
            .copied()
            .filter(|&v| self.vars[v] == ty)
            .collect();
        if cands.is_empty() {
            None
        } else {
            let n = cands.len();
            Some(cands[n - 1 - self.rng.below(n.min(8))])
        }
    }

    fn pick_op(&mut self, ret: Option<Ty>) -> usize {
        loop {
            let k = self.rng.below(self.ops.len());
            let op = &self.ops[k];
            if self.allowed(op) && ret.is_none_or(|t| t == op.ret) {
                return k;
            }
        }
    }

    fn op_stmt(&mut self, dst: usize, avail: &[usize]) -> Stmt {
        let op = self.pick_op(Some(self.vars[dst]));
        let args = self.ops[op]
            .args
            .iter()
            .map(|&t| self.operand(t, avail))
            .collect();
        Stmt::Op { dst, op, args }
    }

    fn cond(&mut self, avail: &[usize]) -> Cond {
        let ty = self
            .rng
            .pick(&[Ty::U32, Ty::U32, Ty::U64, Ty::F32, Ty::F64, Ty::F16]);
        let a = match self.var_of(ty, avail) {
            Some(v) => v,
            None => self.var_of(Ty::U32, avail).expect("inputs include u32"),
        };
        let ty = self.vars[a];
        let cmp = if matches!(ty, Ty::U32 | Ty::U64) {
            self.rng
                .pick(&[Cmp::Lt, Cmp::Eq, Cmp::Ne, Cmp::SLt, Cmp::Test, Cmp::Test])
        } else {
            self.rng
                .pick(&[Cmp::Lt, Cmp::Le, Cmp::Eq, Cmp::Ne, Cmp::Nlt])
        };
        let b = self.operand(ty, avail);
        Cond { a, b, cmp }
    }

    /// A branch body assigning each of `defs`, with temporaries and nested branches.
    fn body(&mut self, defs: &[usize], avail: &[usize], depth: u32) -> Vec<Stmt> {
        let mut local = avail.to_vec();
        let mut out = Vec::new();
        for &d in defs {
            for _ in 0..self.rng.below(3) {
                if depth < 2 && self.rng.chance(0.2) {
                    let s = self.if_stmt(&local, depth + 1);
                    if let Stmt::If { defs, .. } = &s {
                        local.extend(defs.iter().copied());
                    }
                    out.push(s);
                } else {
                    let ty = self.rng.pick(&ALL_TYPES);
                    let t = self.new_var(ty);
                    out.push(self.op_stmt(t, &local));
                    local.push(t);
                }
            }
            out.push(self.op_stmt(d, &local));
        }
        out
    }

    fn if_stmt(&mut self, avail: &[usize], depth: u32) -> Stmt {
        let cond = self.cond(avail);
        let n = 1 + self.rng.below(3);
        let defs: Vec<usize> = (0..n)
            .map(|_| {
                let ty = self.rng.pick(&ALL_TYPES);
                self.new_var(ty)
            })
            .collect();
        let then_ = self.body(&defs, avail, depth);
        let else_ = self.body(&defs, avail, depth);
        Stmt::If {
            cond,
            defs,
            then_,
            else_,
        }
    }
}

/// Generates program `seed` for `model` with about `len` top-level statements.
pub fn generate(seed: u64, model: GfxModel, len: usize, table: &[OpDef]) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        ops: table,
        model,
        vars: Vec::new(),
        const_p: 0.2,
    };
    g.const_p = g.rng.pick(&[0.05, 0.2, 0.4]);
    let mut body = Vec::new();
    let mut avail = Vec::new();
    let input_types = [
        Ty::U32,
        Ty::U32,
        Ty::U32,
        Ty::U64,
        Ty::U64,
        Ty::F32,
        Ty::F32,
        Ty::F32,
        Ty::F64,
        Ty::F64,
        Ty::F16,
        Ty::F16,
        Ty::BF16,
        Ty::H2,
        Ty::F2,
    ];
    let mut inputs = Vec::new();
    for ty in input_types {
        let dst = g.new_var(ty);
        let nontemporal = g.rng.chance(0.2);
        body.push(Stmt::Input { dst, nontemporal });
        avail.push(dst);
        inputs.push(
            (0..LANES)
                .map(|_| random_value(&mut g.rng, ty))
                .collect::<Vec<_>>(),
        );
    }
    let scratch_len = g.rng.pick(&[0, 0, 8, 256]);
    if scratch_len > 0 {
        body.push(Stmt::ScratchInit { base: avail[0] });
    }
    for _ in 0..len {
        let r = g.rng.below(100);
        let s = if r < 60 {
            let op = g.pick_op(None);
            let dst = g.new_var(table[op].ret);
            let args = table[op]
                .args
                .iter()
                .map(|&t| g.operand(t, &avail))
                .collect();
            Stmt::Op { dst, op, args }
        } else if r < 72 {
            g.if_stmt(&avail, 0)
        } else if r < 80 {
            let op = loop {
                let k = g.pick_op(None);
                if table[k].args.first() == Some(&table[k].ret) {
                    break k;
                }
            };
            let ty = table[op].ret;
            let dst = g.new_var(ty);
            let init = g.operand(ty, &avail);
            let count = g.var_of(Ty::U32, &avail).unwrap();
            let rest = table[op].args[1..]
                .iter()
                .map(|&t| g.operand(t, &avail))
                .collect();
            Stmt::Loop {
                dst,
                init,
                count,
                op,
                rest,
            }
        } else if r < 90 || scratch_len == 0 {
            let kind = match g.rng.below(7) {
                0 => Cross::UpdateDpp {
                    ctrl: g.rng.pick(DPP_CTRLS),
                    row_mask: g.rng.pick(&[0xf, 0xf, 0x5, 0xe]),
                    bank_mask: g.rng.pick(&[0xf, 0xf, 0x3, 0xc]),
                    bound: g.rng.chance(0.5),
                },
                1 => Cross::AddDpp {
                    ctrl: g.rng.pick(DPP_CTRLS),
                    bound: g.rng.chance(0.5),
                },
                2 => Cross::ReadLane(g.rng.below(64) as u32),
                3 => Cross::ReadFirstLane,
                4 => Cross::BpermXor(1 + g.rng.below(63) as u32),
                5 => Cross::BpermVar,
                _ => Cross::Ballot,
            };
            let nargs = match kind {
                Cross::UpdateDpp { .. } | Cross::BpermVar => 2,
                Cross::AddDpp { .. } => 3,
                _ => 1,
            };
            let args = (0..nargs)
                .map(|_| g.var_of(Ty::U32, &avail).unwrap())
                .collect();
            let ty = if matches!(kind, Cross::Ballot) {
                Ty::U64
            } else {
                Ty::U32
            };
            let dst = g.new_var(ty);
            Stmt::Cross { dst, kind, args }
        } else if g.rng.chance(0.5) {
            let idx = g.var_of(Ty::U32, &avail).unwrap();
            let val = g.var_of(Ty::U32, &avail).unwrap();
            Stmt::ScratchStore { idx, val }
        } else {
            let idx = g.var_of(Ty::U32, &avail).unwrap();
            let dst = g.new_var(Ty::U32);
            Stmt::ScratchLoad { dst, idx }
        };
        top_defs(&s, |v| avail.push(v));
        body.push(s);
    }
    let mut slots = vec![None; g.vars.len()];
    let mut n = 0;
    for s in &body {
        top_defs(s, |v| {
            let kind = match g.rng.below(10) {
                0 => StoreKind::Nontemporal,
                1 => StoreKind::Volatile,
                _ => StoreKind::Plain,
            };
            slots[v] = Some((n, kind));
            n += 1;
        });
    }
    Program {
        name: format!("difftest_{}_{seed}", model.processor()),
        model,
        vars: g.vars,
        slots,
        body,
        scratch_len,
        inputs,
    }
}

/// The variables a top-level statement makes visible after it.
pub fn top_defs(s: &Stmt, mut f: impl FnMut(usize)) {
    match s {
        Stmt::Input { dst, .. }
        | Stmt::Op { dst, .. }
        | Stmt::Loop { dst, .. }
        | Stmt::Cross { dst, .. }
        | Stmt::ScratchLoad { dst, .. } => f(*dst),
        Stmt::If { defs, .. } => defs.iter().for_each(|&d| f(d)),
        Stmt::ScratchInit { .. } | Stmt::ScratchStore { .. } => {}
    }
}

/// Variables a statement reads.
pub fn uses(s: &Stmt, f: &mut impl FnMut(usize)) {
    fn operand(o: &Operand, f: &mut impl FnMut(usize)) {
        if let Operand::Var(v) = o {
            f(*v)
        }
    }
    match s {
        Stmt::Input { .. } => {}
        Stmt::Op { args, .. } => args.iter().for_each(|a| operand(a, f)),
        Stmt::If {
            cond, then_, else_, ..
        } => {
            f(cond.a);
            operand(&cond.b, f);
            then_.iter().chain(else_).for_each(|s| uses(s, f));
        }
        Stmt::Loop {
            init, count, rest, ..
        } => {
            operand(init, f);
            f(*count);
            rest.iter().for_each(|a| operand(a, f));
        }
        Stmt::Cross { args, .. } => args.iter().for_each(|&a| f(a)),
        Stmt::ScratchInit { base } => f(*base),
        Stmt::ScratchStore { idx, val } => {
            f(*idx);
            f(*val)
        }
        Stmt::ScratchLoad { idx, .. } => f(*idx),
    }
}

// ---------------------------------------------------------------------------------------
// C source

pub const PRELUDE: &str = r#"#define __global__ __attribute__((global))
typedef unsigned long long u64;
typedef unsigned u32;
typedef _Float16 f16;
typedef __bf16 bf16;
typedef float f2 __attribute__((ext_vector_type(2)));
typedef _Float16 h2 __attribute__((ext_vector_type(2)));
"#;

fn var(v: usize) -> String {
    format!("v{v}")
}

impl Program {
    fn operand(&self, o: &Operand, ty: Ty) -> String {
        match *o {
            Operand::Var(v) => var(v),
            Operand::Const(bits) => ty.constant(bits),
        }
    }

    fn expr(&self, table: &[OpDef], op: usize, args: &[String]) -> String {
        let mut c = table[op].c.to_string();
        for (k, a) in args.iter().enumerate().rev() {
            c = c.replace(&format!("${k}"), &format!("({a})"));
        }
        format!("({c})")
    }

    fn op_args(&self, table: &[OpDef], op: usize, args: &[Operand]) -> Vec<String> {
        args.iter()
            .zip(table[op].args)
            .map(|(a, &t)| self.operand(a, t))
            .collect()
    }

    fn cond_c(&self, c: &Cond) -> String {
        let ty = self.vars[c.a];
        let (a, b) = (var(c.a), self.operand(&c.b, ty));
        let signed = if ty == Ty::U64 { "long long" } else { "int" };
        match c.cmp {
            Cmp::Lt => format!("{a} < {b}"),
            Cmp::Le => format!("{a} <= {b}"),
            Cmp::Eq => format!("{a} == {b}"),
            Cmp::Ne => format!("{a} != {b}"),
            Cmp::SLt => format!("({signed}){a} < ({signed})({b})"),
            Cmp::Nlt => format!("!({a} < {b})"),
            Cmp::Test => format!("({a} & ({b})) != 0"),
        }
    }

    fn emit(&self, table: &[OpDef], s: &Stmt, declared: bool, ind: &str, out: &mut String) {
        use std::fmt::Write;
        let decl = |v: usize| {
            if declared {
                String::new()
            } else {
                format!("{} ", self.vars[v].c())
            }
        };
        match s {
            Stmt::Input { dst, nontemporal } => {
                let k = *dst;
                let src = if *nontemporal {
                    format!("__builtin_nontemporal_load(&in[{k} * {LANES} + gid])")
                } else {
                    format!("in[{k} * {LANES} + gid]")
                };
                let ty = self.vars[*dst];
                let _ = writeln!(out, "{ind}{} {} = {};", ty.c(), var(k), ty.of_bits(&src));
            }
            Stmt::Op { dst, op, args } => {
                let a = self.op_args(table, *op, args);
                let _ = writeln!(
                    out,
                    "{ind}{}{} = {};",
                    decl(*dst),
                    var(*dst),
                    self.expr(table, *op, &a)
                );
            }
            Stmt::If {
                cond,
                defs,
                then_,
                else_,
            } => {
                for &d in defs {
                    let _ = writeln!(out, "{ind}{} {};", self.vars[d].c(), var(d));
                }
                let _ = writeln!(out, "{ind}if ({}) {{", self.cond_c(cond));
                let inner = format!("{ind}  ");
                for (body, _) in [(then_, 0), (else_, 1)] {
                    for s in body {
                        let is_def = matches!(s, Stmt::Op { dst, .. } if defs.contains(dst));
                        self.emit(table, s, is_def, &inner, out);
                    }
                    if std::ptr::eq(body, then_) {
                        let _ = writeln!(out, "{ind}}} else {{");
                    }
                }
                let _ = writeln!(out, "{ind}}}");
            }
            Stmt::Loop {
                dst,
                init,
                count,
                op,
                rest,
            } => {
                let ty = self.vars[*dst];
                let mut a = vec![var(*dst)];
                a.extend(
                    rest.iter()
                        .zip(&table[*op].args[1..])
                        .map(|(o, &t)| self.operand(o, t)),
                );
                let _ = writeln!(
                    out,
                    "{ind}{} {} = {};",
                    ty.c(),
                    var(*dst),
                    self.operand(init, ty)
                );
                // The running value goes through an empty asm (a divergent value to clang):
                // clang-19 keeps the running value of a uniform start in SGPRs and reads
                // them after the divergent loop's exit, where they hold the value of the
                // lanes that looped longest (gfx942 seeds 10174, 40054, 40647).
                let _ = writeln!(out, "{ind}__asm__(\"\" : \"+v\"({}));", var(*dst));
                let _ = writeln!(
                    out,
                    "{ind}for (u32 i_ = 0; i_ < ({} & 3u); ++i_) {} = {};",
                    var(*count),
                    var(*dst),
                    self.expr(table, *op, &a)
                );
            }
            Stmt::Cross { dst, kind, args } => {
                let a: Vec<String> = args.iter().map(|&v| var(v)).collect();
                let e = match *kind {
                    Cross::UpdateDpp {
                        ctrl,
                        row_mask,
                        bank_mask,
                        bound,
                    } => update_dpp_expr(&a[0], &a[1], ctrl, row_mask, bank_mask, bound),
                    Cross::AddDpp { ctrl, bound } => format!(
                        "({{ u32 r_; __asm__ volatile(\"v_add_u32_dpp %0, %1, %2 {} row_mask:0xf bank_mask:0xf{}\" : \"=v\"(r_) : \"v\"({}), \"v\"({}), \"0\"({})); r_; }})",
                        dpp_asm(ctrl),
                        if bound { " bound_ctrl:1" } else { "" },
                        a[1], a[2], a[0]
                    ),
                    Cross::ReadLane(k) => format!("__builtin_amdgcn_readlane({}, {k})", a[0]),
                    Cross::ReadFirstLane => format!("__builtin_amdgcn_readfirstlane({})", a[0]),
                    Cross::BpermXor(k) => format!(
                        "(u32)__builtin_amdgcn_ds_bpermute((int)(((gid & 63u) ^ {k}u) << 2), (int){})",
                        a[0]
                    ),
                    Cross::BpermVar => format!(
                        "(u32)__builtin_amdgcn_ds_bpermute((int)(({} & 63u) << 2), (int){})",
                        a[1], a[0]
                    ),
                    Cross::Ballot => {
                        format!("__builtin_amdgcn_ballot_w64(({} & 1u) != 0)", a[0])
                    }
                };
                let _ = writeln!(out, "{ind}{} {} = {e};", self.vars[*dst].c(), var(*dst));
            }
            Stmt::ScratchInit { base } => {
                let n = self.scratch_len;
                let _ = writeln!(
                    out,
                    "{ind}for (u32 i_ = 0; i_ < {n}u; ++i_) pa[i_] = {} + i_ * 0x9e3779b9u;",
                    var(*base)
                );
            }
            Stmt::ScratchStore { idx, val } => {
                let _ = writeln!(
                    out,
                    "{ind}pa[{} & {}u] = {};",
                    var(*idx),
                    self.scratch_len - 1,
                    var(*val)
                );
            }
            Stmt::ScratchLoad { dst, idx } => {
                let _ = writeln!(
                    out,
                    "{ind}u32 {} = pa[{} & {}u];",
                    var(*dst),
                    var(*idx),
                    self.scratch_len - 1
                );
            }
        }
    }

    /// The kernel's source (without [`PRELUDE`]).
    pub fn source(&self, table: &[OpDef]) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "extern \"C\" __global__ void {}(const u64* __restrict__ in, u64* __restrict__ out) {{",
            self.name
        );
        let _ = writeln!(
            out,
            "  const u32 gid = __builtin_amdgcn_workgroup_id_x() * {WAVE}u + __builtin_amdgcn_workitem_id_x();"
        );
        if self.scratch_len > 0 {
            let _ = writeln!(out, "  u32 pa[{}];", self.scratch_len);
        }
        for s in &self.body {
            self.emit(table, s, false, "  ", &mut out);
            top_defs(s, |v| {
                let Some((slot, kind)) = self.slots[v] else {
                    return;
                };
                let bits = self.vars[v].to_bits(&var(v));
                let at = format!("out[{slot} * {LANES} + gid]");
                let _ = match kind {
                    StoreKind::Plain => writeln!(out, "  {at} = {bits};"),
                    StoreKind::Nontemporal => {
                        writeln!(out, "  __builtin_nontemporal_store({bits}, &{at});")
                    }
                    StoreKind::Volatile => writeln!(out, "  *(volatile u64*)&{at} = {bits};"),
                };
            });
        }
        out.push_str("}\n");
        out
    }

    pub fn outputs(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// The same program keeping only what top-level variable `target` depends on.
    pub fn slice(&self, target: usize) -> Program {
        let mut need = vec![false; self.vars.len()];
        need[target] = true;
        let mut keep = vec![false; self.body.len()];
        let mut scratch_needed = false;
        for (k, s) in self.body.iter().enumerate().rev() {
            let mut defines_needed = false;
            top_defs(s, |v| defines_needed |= need[v]);
            let is_scratch = matches!(s, Stmt::ScratchInit { .. } | Stmt::ScratchStore { .. });
            if defines_needed || (is_scratch && scratch_needed) || matches!(s, Stmt::Input { .. }) {
                keep[k] = true;
                if matches!(s, Stmt::ScratchLoad { .. }) {
                    scratch_needed = true;
                }
                uses(s, &mut |v| need[v] = true);
            }
        }
        let body: Vec<Stmt> = self
            .body
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(s, _)| s.clone())
            .collect();
        let mut slots = vec![None; self.vars.len()];
        let mut n = 0;
        for s in &body {
            top_defs(s, |v| {
                slots[v] = Some((n, self.slots[v].map_or(StoreKind::Plain, |s| s.1)));
                n += 1;
            });
        }
        Program {
            name: format!("{}_min", self.name),
            slots,
            body,
            scratch_len: if scratch_needed { self.scratch_len } else { 0 },
            ..self.clone()
        }
    }
}

/// `update_dpp` with its result opaque. clang-19's DPP combiner (GCNDPPCombine) folds the
/// DPP move into a VOP user (`v_bfrev_b32_dpp`) even when the move also feeds a
/// REG_SEQUENCE whose 64-bit value is used whole (the u64 store of every top-level
/// result): it follows only subregister uses of the REG_SEQUENCE, deletes the move and
/// marks its REG_SEQUENCE operand undef, so the store writes a stale register (seed 5166
/// of `difftest.sh 300 5000`). Behind the empty asm the move's only user is not VOP, so
/// it is never combined; the interpreter's DPP on VOP1/VOP2 is covered by `AddDpp` and
/// `dpp_on_vop1_reads_the_broadcast_lane`.
pub fn update_dpp_expr(
    old: &str,
    src: &str,
    ctrl: u32,
    row_mask: u32,
    bank_mask: u32,
    bound: bool,
) -> String {
    format!(
        "({{ u32 d_ = __builtin_amdgcn_update_dpp({old}, {src}, {ctrl:#x}, {row_mask:#x}, {bank_mask:#x}, {bound}); __asm__(\"\" : \"+v\"(d_)); d_; }})"
    )
}

/// The DPP control's assembler spelling.
pub fn dpp_asm(ctrl: u32) -> String {
    match ctrl {
        0..=0xff => format!(
            "quad_perm:[{},{},{},{}]",
            ctrl & 3,
            ctrl >> 2 & 3,
            ctrl >> 4 & 3,
            ctrl >> 6 & 3
        ),
        0x101..=0x10f => format!("row_shl:{}", ctrl & 15),
        0x111..=0x11f => format!("row_shr:{}", ctrl & 15),
        0x121..=0x12f => format!("row_ror:{}", ctrl & 15),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13c => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x150..=0x15f => format!("row_newbcast:{}", ctrl & 15),
        _ => panic!("dpp control {ctrl:#x}"),
    }
}

/// The lane (within the wave) a DPP control reads for lane `l`, if any.
pub fn dpp_source(ctrl: u32, l: usize) -> Option<usize> {
    let n = (ctrl & 15) as usize;
    let row = l & !15;
    let r = l & 15;
    match ctrl {
        0..=0xff => Some((l & !3) | ((ctrl as usize >> (2 * (l & 3))) & 3)),
        0x101..=0x10f => (r + n <= 15).then_some(l + n),
        0x111..=0x11f => (r >= n).then(|| l - n),
        0x121..=0x12f => Some(row | ((r + 16 - n) & 15)),
        0x130 => (l < 63).then_some(l + 1),
        0x134 => Some((l + 1) & 63),
        0x138 => (l > 0).then(|| l - 1),
        0x13c => Some((l + 63) & 63),
        0x140 => Some(row | (15 - r)),
        0x141 => Some((l & !7) | (7 - (l & 7))),
        0x150..=0x15f => Some(row | n),
        _ => panic!("dpp control {ctrl:#x}"),
    }
}

// ---------------------------------------------------------------------------------------
// Host evaluation

pub struct Eval<'a> {
    table: &'a [OpDef],
    prog: &'a Program,
    pub vals: Vec<Vec<u64>>,
    scratch: Vec<Vec<u32>>,
}

impl<'a> Eval<'a> {
    pub fn run(table: &'a [OpDef], prog: &'a Program) -> Eval<'a> {
        let mut e = Eval {
            table,
            prog,
            vals: vec![vec![0; LANES]; prog.vars.len()],
            scratch: vec![vec![0; prog.scratch_len as usize]; LANES],
        };
        let all = vec![true; LANES];
        for s in &prog.body {
            e.stmt(s, &all);
        }
        e
    }

    fn get(&self, o: &Operand, ty: Ty, l: usize) -> u64 {
        match *o {
            Operand::Var(v) => self.vals[v][l],
            Operand::Const(c) => c & ty.mask(),
        }
    }

    fn apply(&self, op: usize, args: &[u64]) -> u64 {
        let d = &self.table[op];
        (d.eval)(args) & d.ret.mask()
    }

    fn cond(&self, c: &Cond, l: usize) -> bool {
        let ty = self.prog.vars[c.a];
        let (a, b) = (self.vals[c.a][l], self.get(&c.b, ty, l));
        use super::num::{f16_to_f64, f32b, f64b};
        let fl = |x: u64| match ty {
            Ty::F32 => f32b(x) as f64,
            Ty::F64 => f64b(x),
            Ty::F16 => f16_to_f64(x as u16),
            _ => unreachable!(),
        };
        match (ty, c.cmp) {
            (Ty::U32 | Ty::U64, Cmp::Lt) => a < b,
            (Ty::U32 | Ty::U64, Cmp::Eq) => a == b,
            (Ty::U32 | Ty::U64, Cmp::Ne) => a != b,
            (Ty::U32, Cmp::SLt) => (a as u32 as i32) < (b as u32 as i32),
            (Ty::U64, Cmp::SLt) => (a as i64) < (b as i64),
            (Ty::U32 | Ty::U64, Cmp::Test) => a & b != 0,
            (_, Cmp::Lt) => fl(a) < fl(b),
            (_, Cmp::Le) => fl(a) <= fl(b),
            (_, Cmp::Eq) => fl(a) == fl(b),
            (_, Cmp::Ne) => fl(a) != fl(b),
            (_, Cmp::Nlt) => fl(a).partial_cmp(&fl(b)) != Some(std::cmp::Ordering::Less),
            _ => unreachable!("{ty:?} {:?}", c.cmp),
        }
    }

    fn stmt(&mut self, s: &Stmt, mask: &[bool]) {
        match s {
            Stmt::Input { dst, .. } => {
                self.vals[*dst] = self.prog.inputs[*dst].clone();
            }
            Stmt::Op { dst, op, args } => {
                for l in 0..LANES {
                    if mask[l] {
                        let a: Vec<u64> = args
                            .iter()
                            .zip(self.table[*op].args)
                            .map(|(o, &t)| self.get(o, t, l))
                            .collect();
                        self.vals[*dst][l] = self.apply(*op, &a);
                    }
                }
            }
            Stmt::If {
                cond, then_, else_, ..
            } => {
                let c: Vec<bool> = (0..LANES).map(|l| mask[l] && self.cond(cond, l)).collect();
                let nc: Vec<bool> = (0..LANES).map(|l| mask[l] && !c[l]).collect();
                for s in then_ {
                    self.stmt(s, &c);
                }
                for s in else_ {
                    self.stmt(s, &nc);
                }
            }
            Stmt::Loop {
                dst,
                init,
                count,
                op,
                rest,
            } => {
                let ty = self.prog.vars[*dst];
                for l in 0..LANES {
                    if !mask[l] {
                        continue;
                    }
                    let mut acc = self.get(init, ty, l);
                    for _ in 0..(self.vals[*count][l] & 3) {
                        let mut a = vec![acc];
                        a.extend(
                            rest.iter()
                                .zip(&self.table[*op].args[1..])
                                .map(|(o, &t)| self.get(o, t, l)),
                        );
                        acc = self.apply(*op, &a);
                    }
                    self.vals[*dst][l] = acc;
                }
            }
            Stmt::Cross { dst, kind, args } => {
                assert!(
                    mask.iter().all(|&m| m),
                    "cross-lane operations run convergent"
                );
                let v = |k: usize, l: usize| self.vals[args[k]][l];
                let mut out = vec![0u64; LANES];
                for l in 0..LANES {
                    let base = l & !(WAVE - 1);
                    let wl = l - base;
                    out[l] = match *kind {
                        Cross::UpdateDpp {
                            ctrl,
                            row_mask,
                            bank_mask,
                            bound,
                        } => {
                            let enabled = row_mask >> (wl / 16) & 1 != 0
                                && bank_mask >> (wl / 4 % 4) & 1 != 0;
                            match (enabled, dpp_source(ctrl, wl)) {
                                (false, _) => v(0, l),
                                (true, Some(s)) => v(1, base + s),
                                (true, None) if bound => 0,
                                (true, None) => v(0, l),
                            }
                        }
                        Cross::AddDpp { ctrl, bound } => match dpp_source(ctrl, wl) {
                            Some(s) => (v(1, base + s) as u32).wrapping_add(v(2, l) as u32) as u64,
                            None if bound => v(2, l),
                            None => v(0, l),
                        },
                        Cross::ReadLane(k) => v(0, base + k as usize),
                        Cross::ReadFirstLane => v(0, base),
                        Cross::BpermXor(k) => v(0, base + ((wl ^ k as usize) & 63)),
                        Cross::BpermVar => v(0, base + (v(1, l) as usize & 63)),
                        Cross::Ballot => (0..WAVE)
                            .filter(|&j| v(0, base + j) & 1 != 0)
                            .fold(0u64, |m, j| m | 1 << j),
                    };
                }
                self.vals[*dst] = out;
            }
            Stmt::ScratchInit { base } => {
                for l in 0..LANES {
                    for i in 0..self.prog.scratch_len {
                        self.scratch[l][i as usize] =
                            (self.vals[*base][l] as u32).wrapping_add(i.wrapping_mul(0x9e37_79b9));
                    }
                }
            }
            Stmt::ScratchStore { idx, val } => {
                for l in 0..LANES {
                    let i = self.vals[*idx][l] as usize & (self.prog.scratch_len as usize - 1);
                    self.scratch[l][i] = self.vals[*val][l] as u32;
                }
            }
            Stmt::ScratchLoad { dst, idx } => {
                for l in 0..LANES {
                    let i = self.vals[*idx][l] as usize & (self.prog.scratch_len as usize - 1);
                    self.vals[*dst][l] = self.scratch[l][i] as u64;
                }
            }
        }
    }
}

/// Every operation a generated program may use, for reports.
pub fn table() -> Vec<OpDef> {
    ops::all()
}
