//! Handlers whose lane loops the host's vector units should run. The crate is built for
//! baseline x86-64 (SSE2, no FMA), where `f32::mul_add` is a library call per lane and the
//! 64-lane loops use 128-bit operations. [`simd_handler!`] compiles a handler twice, once
//! with AVX2 and FMA enabled, and runs that copy when the CPU has them (checked once, then
//! cached by std). Both copies compute the same bits: lane loops are element-wise (no
//! reassociation across lanes), and `mul_add` is a correctly rounded fused operation either
//! way.

/// True when the host CPU runs the AVX2+FMA copies of the handlers.
#[inline(always)]
pub fn host_has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines a handler (the `Handler` shape) whose body is compiled both for the baseline
/// target and with AVX2+FMA, choosing at run time. The body must be `#[inline(always)]`
/// material: everything it calls that should vectorise is `#[inline(always)]` too.
macro_rules! simd_handler {
    ($(#[$m:meta])* $vis:vis fn $name:ident($w:ident: &mut Wave, $i:ident: &Inst, $c:ident: &mut Ctx) -> $r:ty $body:block) => {
        $(#[$m])*
        $vis fn $name($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r {
            #[inline(always)]
            #[allow(unused_variables)]
            fn body($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn fast($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r {
                    body($w, $i, $c)
                }
                if $crate::exec::simd::host_has_avx2_fma() {
                    // SAFETY: the CPU has AVX2 and FMA (checked just above).
                    return unsafe { fast($w, $i, $c) };
                }
            }
            body($w, $i, $c)
        }
    };
}
