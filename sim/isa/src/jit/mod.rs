//! The translator: hot straight-line runs of decoded instructions ("regions") become host
//! functions, built with Cranelift, that update the wave exactly as the interpreter's
//! handlers would.
//!
//! A region starts at an instruction the run loop reached often enough ([`HOT_AFTER`]) and
//! takes the instructions after it in code order, ending after the first one that may leave
//! straight-line code or change what the translation assumed ([`ends_region`]), or at
//! [`MAX_REGION`]. Each instruction either has native code ([`emit`]) or is a **call-out**:
//! the generated code calls [`call_out`], which sets the program counters as the run loop
//! does and runs the instruction's interpreter handler; so no kernel is refused and
//! coverage grows one opcode at a time. An error, or a step other than `Continue`, from a
//! call-out leaves the region at once with the instructions run so far; a panic in a
//! handler is caught in the call-out (it must not unwind through Cranelift frames, which
//! have no unwind information) and resumed by [`Region::run`] once the generated code has
//! returned, so it reaches the dispatch's own panic guard exactly as from the interpreter.
//!
//! A region owns copies of its instructions and handlers: the decode cache's vector may
//! reallocate, so generated code never points into it. Native float code assumes MODE
//! rounds to nearest even and keeps f32 denormals (HIP's default, the interpreter's fast
//! path): a region with native float instructions checks that on entry and, when it does
//! not hold, runs nothing, and the run loop interprets instead.
//!
//! This layer sits between `decode` and `dispatch`: it uses the wave, the instruction type
//! and the handlers' shapes; `dispatch` decides when to translate and runs regions.

mod emit;
#[cfg(test)]
mod tests;

use crate::api::DispatchError;
use crate::exec::{Ctx, Handler, Step};
use crate::inst::Inst;
use crate::wave::Wave;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, BlockArg, InstBuilder, MemFlagsData};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::Module;
use hsasim_vtime::Class;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// An instruction's entry is translated once the run loop has interpreted it this many
/// times. Code run once (a single wave's prologue) is not worth compiling; code that ran
/// once will very likely run many more times (the next wave of the workgroup, the next
/// trip of a loop), and a translation made once per kernel and worker pays for itself
/// within a few waves. Small, so that tests with two waves exercise translated code.
pub(crate) const HOT_AFTER: u64 = 1;

/// Instructions in one region at most: longer runs are split into consecutive regions.
/// Bounds the compile time of one region and how far a region may reach past the
/// watchdog's next check (a region runs only when its whole length fits before it).
pub(crate) const MAX_REGION: usize = 64;

/// True when no instruction after `i` belongs in the same region: `i` may jump, ends the
/// wave, waits at a barrier, yields or hands work to the GWS unit (a step other than
/// `Continue`), or changes MODE, which native float code assumed on entry.
pub(crate) fn ends_region(i: &Inst) -> bool {
    let name = i.info.name;
    i.info.form == crate::inst::Form::Branch
        || matches!(
            name,
            "s_setpc_b64" | "s_swappc_b64" | "s_barrier" | "s_sleep" | "s_trap" | "s_rfe_b64"
        )
        || name.starts_with("s_endpgm")
        || name.starts_with("s_setreg")
        || name.starts_with("ds_gws")
}

/// `HSASIM_JIT=1` in the environment: the translator is on for every dispatch
/// ([`ExecConfig::jit`](crate::ExecConfig::jit)). Read once.
pub(crate) fn forced_on() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var("HSASIM_JIT").is_ok_and(|v| v.trim() == "1"))
}

/// One instruction of a region, owned by it.
pub(crate) struct RegionInst {
    pub(crate) run: Handler,
    /// What it counts as in the wave's class counts (the decode cache's, copied).
    pub(crate) class: Class,
    pub(crate) inst: Inst,
    pub(crate) pc: u64,
    pub(crate) next_pc: u64,
    /// Times it ran as a call-out (for the interpreted-opcode counts).
    pub(crate) called_out: u64,
}

/// Why a region returned before its end (set by [`call_out`]).
pub(crate) enum Leave {
    /// It ran to its end (or ran nothing: the entry check failed).
    Ran,
    /// The instruction that left returned this step.
    Step(Step),
    Error(Box<DispatchError>),
    /// A handler panicked: resumed by [`Region::run`].
    Panic(Box<dyn Any + Send>),
}

/// What the generated code and its call-outs tell the run loop besides the count.
pub(crate) struct RegionExit {
    pub(crate) leave: Leave,
    /// Instructions run as call-outs, of the count the region returned.
    pub(crate) called_out: u64,
}

/// `fn(wave, ctx, exit, budget) -> instructions run` (0: the entry check failed, nothing
/// ran). A region that loops on itself runs trips while the count stays within `budget`.
type RegionFn = unsafe extern "C" fn(*mut Wave, *mut Ctx<'_>, *mut RegionExit, u32) -> u32;

/// The call-out: runs `ri`'s handler as `run_wave` would (the wave's PC past it, the
/// context's at it). 0 to go on; 1 to leave the region with `exit` saying why.
///
/// # Safety
/// The pointers come from [`Region::run`]: live, exclusive for the call, `ri` one of the
/// region's own instructions.
unsafe extern "C" fn call_out(
    w: *mut Wave,
    ctx: *mut Ctx<'_>,
    ri: *mut RegionInst,
    exit: *mut RegionExit,
) -> u32 {
    // SAFETY: see the function's contract: Region::run passes the wave and context it holds
    // exclusively, and the generated code passes `ri` pointing into the region's own boxed
    // instructions and `exit` as it got it.
    let (w, ctx, ri, exit) = unsafe { (&mut *w, &mut *ctx, &mut *ri, &mut *exit) };
    ri.called_out += 1;
    exit.called_out += 1;
    w.pc = ri.next_pc;
    ctx.pc = ri.pc;
    let run = ri.run;
    let inst = &ri.inst;
    match catch_unwind(AssertUnwindSafe(|| run(w, inst, ctx))) {
        Ok(Ok(Step::Continue)) => 0,
        Ok(Ok(s)) => {
            exit.leave = Leave::Step(s);
            1
        }
        Ok(Err(e)) => {
            exit.leave = Leave::Error(e);
            1
        }
        Err(payload) => {
            exit.leave = Leave::Panic(payload);
            1
        }
    }
}

/// Emits the additions to the wave's class counts ([`Wave::mix`]) of the instructions
/// from `from` to the next call-out (included) or the region's end.
fn count_segment(
    b: &mut FunctionBuilder,
    wave: cranelift_codegen::ir::Value,
    classes: &[Class],
    callout: &[bool],
    from: usize,
) {
    let mut n = [0i64; Class::COUNT];
    for (class, &call) in classes.iter().zip(callout).skip(from) {
        n[*class as usize] += 1;
        if call {
            break;
        }
    }
    let trusted = MemFlagsData::trusted();
    for (c, &k) in n.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let off = (emit::MIX_OFFSET + 8 * c) as i32;
        let v = b.ins().load(types::I64, trusted, wave, off);
        let v = b.ins().iadd_imm_s(v, k);
        b.ins().store(trusted, v, wave, off);
    }
}

/// A translated region.
pub(crate) struct Region {
    code: RegionFn,
    /// Its instructions, boxed so that their addresses (in the generated code) stay put.
    insts: Box<[RegionInst]>,
}

impl Region {
    pub(crate) fn len(&self) -> u64 {
        self.insts.len() as u64
    }

    /// Hands each instruction's call-outs since the last call to `f` (by opcode name).
    pub(crate) fn take_called_out(&mut self, mut f: impl FnMut(&'static str, u64)) {
        for ri in self.insts.iter_mut().filter(|ri| ri.called_out != 0) {
            f(ri.inst.info.name, ri.called_out);
            ri.called_out = 0;
        }
    }

    /// Runs the region on `w`, at most `budget` instructions (at least its length): the
    /// instructions run (0 when its entry check failed) and why it stopped. A handler's
    /// panic continues here, as if from the run loop.
    #[inline(always)]
    pub(crate) fn run(&mut self, w: &mut Wave, ctx: &mut Ctx, budget: u64) -> (u64, RegionExit) {
        debug_assert!(budget >= self.len());
        let budget = budget.min(u64::from(u32::MAX)) as u32;
        let mut exit = RegionExit {
            leave: Leave::Ran,
            called_out: 0,
        };
        // SAFETY: the code was generated for exactly this signature by `Jit::translate`;
        // it reads and writes the wave and context through the pointers only in ways the
        // handlers do (registers in range, fields at their offsets), and its call-outs
        // get the same pointers and this region's own instructions, alive while `self` is.
        let n = unsafe { (self.code)(w, ctx, &mut exit, budget) };
        if matches!(exit.leave, Leave::Panic(_)) {
            if let Leave::Panic(payload) = std::mem::replace(&mut exit.leave, Leave::Ran) {
                std::panic::resume_unwind(payload);
            }
        }
        (n as u64, exit)
    }
}

/// A Cranelift module owned by one decode cache: only the worker holding that cache uses
/// it, one thread at a time.
struct Module_(JITModule);

// SAFETY: the JIT module's raw pointers point into memory it allocated and owns; it is used
// by one thread at a time (its decode cache belongs to one worker, which moves between
// threads only while idle, under the idle list's lock).
unsafe impl Send for Module_ {}

/// The translations of one decode cache, and what making them cost.
pub(crate) struct Jit {
    module: Option<Module_>,
    cl: Context,
    fctx: FunctionBuilderContext,
    regions: Vec<Region>,
    /// The host has FMA (Cranelift then emits it; without, native FMA stays a call-out).
    fma: bool,
    pub(crate) compiled: u64,
    pub(crate) translate_time: Duration,
}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(Module_(m)) = self.module.take() {
            // SAFETY: the regions, whose code lives in this memory, go with the Jit: no
            // function pointer into it survives.
            self.regions.clear();
            unsafe { m.free_memory() };
        }
    }
}

impl Jit {
    /// A translator for this host, or why there is none (a host Cranelift cannot target).
    pub(crate) fn new() -> Result<Jit, String> {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v)
                .map_err(|e| format!("cranelift setting {k}={v}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        // The verifier costs compile time; debug builds (the tests) keep it.
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("host not supported by the translator: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("translator target: {e}"))?;
        #[cfg(target_arch = "x86_64")]
        let fma = std::arch::is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let fma = true;
        let module = JITModule::new(JITBuilder::with_isa(
            isa,
            cranelift_module::default_libcall_names(),
        ));
        let cl = module.make_context();
        Ok(Jit {
            module: Some(Module_(module)),
            cl,
            fctx: FunctionBuilderContext::new(),
            regions: Vec::new(),
            fma,
            compiled: 0,
            translate_time: Duration::ZERO,
        })
    }

    pub(crate) fn region(&mut self, id: u32) -> &mut Region {
        &mut self.regions[id as usize]
    }

    pub(crate) fn regions_mut(&mut self) -> &mut [Region] {
        &mut self.regions
    }

    /// Whether a region of `insts` would run any native code: one made only of call-outs
    /// would cost more than interpreting.
    pub(crate) fn worth_translating(&self, insts: &[RegionInst], w: &Wave) -> bool {
        insts
            .iter()
            .any(|ri| emit::Native::of(&ri.inst, w, self.fma).is_some())
    }

    /// Translates `insts` (consecutive instructions, the last one ending the region or the
    /// region at its cap) for waves like `w`; the region's id. Constants that do not depend
    /// on the wave's state (inline constants, literals) are read from `w` at translation.
    pub(crate) fn translate(&mut self, insts: Vec<RegionInst>, w: &Wave) -> Result<u32, String> {
        let start = Instant::now();
        let result = self.build(insts.into_boxed_slice(), w);
        self.translate_time += start.elapsed();
        let region = result?;
        self.compiled += 1;
        self.regions.push(region);
        Ok(self.regions.len() as u32 - 1)
    }

    fn build(&mut self, mut insts: Box<[RegionInst]>, w: &Wave) -> Result<Region, String> {
        let Some(Module_(module)) = self.module.as_mut() else {
            return Err("translator module gone".into());
        };
        module.clear_context(&mut self.cl);
        let frontend = module.target_config();
        let ptr = frontend.pointer_type();
        let mut sig = module.make_signature();
        for _ in 0..3 {
            sig.params.push(AbiParam::new(ptr));
        }
        sig.params.push(AbiParam::new(types::I32));
        sig.returns.push(AbiParam::new(types::I32));
        let mut callout_sig = module.make_signature();
        for _ in 0..4 {
            callout_sig.params.push(AbiParam::new(ptr));
        }
        callout_sig.returns.push(AbiParam::new(types::I32));
        self.cl.func.signature = sig.clone();

        let plans: Vec<Option<emit::Native>> = insts
            .iter()
            .map(|ri| emit::Native::of(&ri.inst, w, self.fma))
            .collect();
        let needs_mode = plans.iter().flatten().any(|n| n.is_float());
        let n = insts.len() as i64;

        let mut b = FunctionBuilder::new(&mut self.cl.func, &mut self.fctx);
        let callout_ref = b.import_signature(callout_sig);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        // `done(count)` returns the count; `trip(base)` runs the region once more, `base`
        // instructions having run in the trips before (a region ending in a branch back to
        // its own entry loops inside the function while the budget allows a whole trip).
        let done = b.create_block();
        let count = b.append_block_param(done, types::I32);
        let trip = b.create_block();
        let base = b.append_block_param(trip, types::I32);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let (wave, ctx, exit, budget) = (params[0], params[1], params[2], params[3]);
        let trusted = MemFlagsData::trusted();
        let vbase = b.ins().load(ptr, trusted, wave, emit::V_OFFSET as i32);
        let callout_addr = b.ins().iconst(ptr, call_out as *const () as usize as i64);
        let zero = b.ins().iconst(types::I32, 0);
        if needs_mode {
            let mode = b
                .ins()
                .load(types::I32, trusted, wave, emit::MODE_OFFSET as i32);
            let bits = b.ins().band_imm_u(mode, 0x3f);
            let ok = b.ins().icmp_imm_u(IntCC::Equal, bits, 0x30);
            b.ins().brif(
                ok,
                trip,
                &[BlockArg::Value(zero)],
                done,
                &[BlockArg::Value(zero)],
            );
        } else {
            b.ins().jump(trip, &[BlockArg::Value(zero)]);
        }
        b.switch_to_block(trip);
        // The class counts go up by segments: at the start of each trip, and after each
        // call-out that lets the region go on, by every instruction up to and including the
        // next call-out (only a call-out can leave early). So a call-out's handler sees the
        // wave's counts exactly as in the run loop, which counts each instruction before
        // its handler runs, and a region left early has counted what ran and no more.
        let classes: Vec<Class> = insts.iter().map(|ri| ri.class).collect();
        let callout: Vec<bool> = plans.iter().map(Option::is_none).collect();
        count_segment(&mut b, wave, &classes, &callout, 0);
        let entry_pc = insts.first().map_or(0, |ri| ri.pc);
        let last = insts.len() - 1;
        let mut k = 0;
        while k < insts.len() {
            if matches!(plans[k], Some(n) if !matches!(n, emit::Native::Branch { .. })) {
                // Native instructions other than a branch go by runs (vector ones as one
                // loop over lane chunks).
                let mut run = Vec::new();
                while let Some(Some(n)) = plans.get(k) {
                    if matches!(n, emit::Native::Branch { .. }) {
                        break;
                    }
                    run.push(*n);
                    k += 1;
                }
                emit::Emitter {
                    b: &mut b,
                    wave,
                    vbase,
                }
                .run(&run);
                if k > last {
                    let ri = &insts[last];
                    let ran = b.ins().iadd_imm_s(base, n);
                    let next_pc = b.ins().iconst(types::I64, ri.next_pc as i64);
                    b.ins()
                        .store(trusted, next_pc, wave, emit::PC_OFFSET as i32);
                    let pc = b.ins().iconst(types::I64, ri.pc as i64);
                    b.ins().store(trusted, pc, ctx, emit::CTX_PC_OFFSET as i32);
                    b.ins().jump(done, &[BlockArg::Value(ran)]);
                }
                continue;
            }
            let (ri, plan) = (&mut insts[k], &plans[k]);
            // Instructions run when this one is done: the trips before, and k + 1.
            let ran = b.ins().iadd_imm_s(base, k as i64 + 1);
            match plan {
                Some(emit::Native::Branch { cond, offset }) => {
                    debug_assert_eq!(k, last, "a branch ends its region");
                    let taken = emit::Emitter {
                        b: &mut b,
                        wave,
                        vbase,
                    }
                    .taken(*cond);
                    let target = ri.next_pc.wrapping_add(*offset as u64);
                    if target == entry_pc {
                        // Another trip when taken and a whole one fits the budget.
                        let after = b.ins().iadd_imm_s(ran, n);
                        let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, after, budget);
                        let again = b.ins().band(taken, fits);
                        let leave = b.create_block();
                        b.ins()
                            .brif(again, trip, &[BlockArg::Value(ran)], leave, &[]);
                        b.switch_to_block(leave);
                    }
                    let to = b.ins().iconst(types::I64, target as i64);
                    let fall = b.ins().iconst(types::I64, ri.next_pc as i64);
                    let pc = b.ins().select(taken, to, fall);
                    b.ins().store(trusted, pc, wave, emit::PC_OFFSET as i32);
                    let at = b.ins().iconst(types::I64, ri.pc as i64);
                    b.ins().store(trusted, at, ctx, emit::CTX_PC_OFFSET as i32);
                    b.ins().jump(done, &[BlockArg::Value(ran)]);
                }
                Some(_) => unreachable!("runs take every other native instruction"),
                None => {
                    let next_pc = b.ins().iconst(types::I64, ri.next_pc as i64);
                    b.ins()
                        .store(trusted, next_pc, wave, emit::PC_OFFSET as i32);
                    let pc = b.ins().iconst(types::I64, ri.pc as i64);
                    b.ins().store(trusted, pc, ctx, emit::CTX_PC_OFFSET as i32);
                    let ri_addr = b.ins().iconst(ptr, ri as *mut RegionInst as usize as i64);
                    let call = b.ins().call_indirect(
                        callout_ref,
                        callout_addr,
                        &[wave, ctx, ri_addr, exit],
                    );
                    let left = b.inst_results(call)[0];
                    if k == last {
                        b.ins().jump(done, &[BlockArg::Value(ran)]);
                    } else {
                        let next = b.create_block();
                        b.ins().brif(left, done, &[BlockArg::Value(ran)], next, &[]);
                        b.switch_to_block(next);
                        count_segment(&mut b, wave, &classes, &callout, k + 1);
                    }
                }
            }
            k += 1;
        }
        b.switch_to_block(done);
        b.ins().return_(&[count]);
        b.seal_all_blocks();
        b.finalize(frontend);

        let id = module
            .declare_anonymous_function(&sig)
            .map_err(|e| format!("declare: {e}"))?;
        module
            .define_function(id, &mut self.cl)
            .map_err(|e| format!("compile: {e:?}"))?;
        module
            .finalize_definitions()
            .map_err(|e| format!("finalize: {e}"))?;
        let addr = module.get_finalized_function(id);
        // SAFETY: `addr` is the entry of the function just compiled with `sig`, which is
        // RegionFn's C signature (three pointers and a u32 in, a u32 out).
        let code: RegionFn = unsafe { std::mem::transmute::<*const u8, RegionFn>(addr) };
        Ok(Region { code, insts })
    }
}
