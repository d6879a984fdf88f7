// hipshim HIP headers: the C math library for device code.
//
// Each function forwards to the ROCm device library's `__ocml_*` function of
// the same meaning (linked from ocml.bc by clang). The declarations below are
// written here from ocml's exported names and signatures; nothing else of
// ROCm is needed.
//
// Host code keeps the host <math.h>: clang in HIP mode lets a __device__
// function overload a host function of the same signature, so `sqrtf(x)`
// resolves to the one below in device code and to libm in host code.
#ifndef HIPSHIM_DEVICE_MATH_H
#define HIPSHIM_DEVICE_MATH_H

#include "hip_types.h"

#define HIPSHIM_MATH static __device__ inline __attribute__((always_inline))

// One-argument functions: `NAME f32 (float)` and `NAME f64 (double)`.
#define HIPSHIM_OCML_1(NAME)                                                                  \
    extern "C" __device__ __attribute__((const)) float __ocml_##NAME##_f32(float);           \
    extern "C" __device__ __attribute__((const)) double __ocml_##NAME##_f64(double);         \
    HIPSHIM_MATH float NAME##f(float x) { return __ocml_##NAME##_f32(x); }                   \
    HIPSHIM_MATH double NAME(double x) { return __ocml_##NAME##_f64(x); }                    \
    HIPSHIM_MATH float NAME(float x) { return __ocml_##NAME##_f32(x); }

#define HIPSHIM_OCML_2(NAME)                                                                  \
    extern "C" __device__ __attribute__((const)) float __ocml_##NAME##_f32(float, float);    \
    extern "C" __device__ __attribute__((const)) double __ocml_##NAME##_f64(double, double); \
    HIPSHIM_MATH float NAME##f(float x, float y) { return __ocml_##NAME##_f32(x, y); }       \
    HIPSHIM_MATH double NAME(double x, double y) { return __ocml_##NAME##_f64(x, y); }       \
    HIPSHIM_MATH float NAME(float x, float y) { return __ocml_##NAME##_f32(x, y); }

HIPSHIM_OCML_1(sqrt)
HIPSHIM_OCML_1(rsqrt)
HIPSHIM_OCML_1(cbrt)
HIPSHIM_OCML_1(exp)
HIPSHIM_OCML_1(exp2)
HIPSHIM_OCML_1(exp10)
HIPSHIM_OCML_1(expm1)
HIPSHIM_OCML_1(log)
HIPSHIM_OCML_1(log2)
HIPSHIM_OCML_1(log10)
HIPSHIM_OCML_1(log1p)
HIPSHIM_OCML_1(sin)
HIPSHIM_OCML_1(cos)
HIPSHIM_OCML_1(tan)
HIPSHIM_OCML_1(asin)
HIPSHIM_OCML_1(acos)
HIPSHIM_OCML_1(atan)
HIPSHIM_OCML_1(sinh)
HIPSHIM_OCML_1(cosh)
HIPSHIM_OCML_1(tanh)
HIPSHIM_OCML_1(asinh)
HIPSHIM_OCML_1(acosh)
HIPSHIM_OCML_1(atanh)
HIPSHIM_OCML_1(sinpi)
HIPSHIM_OCML_1(cospi)
HIPSHIM_OCML_1(erf)
HIPSHIM_OCML_1(lgamma)
HIPSHIM_OCML_1(tgamma)
HIPSHIM_OCML_1(fabs)
HIPSHIM_OCML_1(floor)
HIPSHIM_OCML_1(ceil)
HIPSHIM_OCML_1(trunc)
HIPSHIM_OCML_1(round)
HIPSHIM_OCML_1(rint)
HIPSHIM_OCML_1(nearbyint)

HIPSHIM_OCML_2(pow)
HIPSHIM_OCML_2(atan2)
HIPSHIM_OCML_2(hypot)
HIPSHIM_OCML_2(fmin)
HIPSHIM_OCML_2(fmax)
HIPSHIM_OCML_2(fmod)
HIPSHIM_OCML_2(fdim)
HIPSHIM_OCML_2(remainder)
HIPSHIM_OCML_2(copysign)

#undef HIPSHIM_OCML_1
#undef HIPSHIM_OCML_2

extern "C" __device__ __attribute__((const)) float __ocml_fma_f32(float, float, float);
extern "C" __device__ __attribute__((const)) double __ocml_fma_f64(double, double, double);
HIPSHIM_MATH float fmaf(float x, float y, float z) { return __ocml_fma_f32(x, y, z); }
HIPSHIM_MATH double fma(double x, double y, double z) { return __ocml_fma_f64(x, y, z); }
HIPSHIM_MATH float fma(float x, float y, float z) { return __ocml_fma_f32(x, y, z); }

extern "C" __device__ __attribute__((const)) float __ocml_ldexp_f32(float, int);
extern "C" __device__ __attribute__((const)) double __ocml_ldexp_f64(double, int);
HIPSHIM_MATH float ldexpf(float x, int e) { return __ocml_ldexp_f32(x, e); }
HIPSHIM_MATH double ldexp(double x, int e) { return __ocml_ldexp_f64(x, e); }

// ocml's out-parameters live in the private (scratch) address space; the
// public API takes generic pointers, so go through a local.
extern "C" __device__ float __ocml_sincos_f32(float, __attribute__((address_space(5))) float*);
extern "C" __device__ double __ocml_sincos_f64(double,
                                                __attribute__((address_space(5))) double*);
HIPSHIM_MATH void sincosf(float x, float* s, float* c) {
    float cv;
    *s = __ocml_sincos_f32(x, (__attribute__((address_space(5))) float*)&cv);
    *c = cv;
}
HIPSHIM_MATH void sincos(double x, double* s, double* c) {
    double cv;
    *s = __ocml_sincos_f64(x, (__attribute__((address_space(5))) double*)&cv);
    *c = cv;
}

extern "C" __device__ float __ocml_frexp_f32(float, __attribute__((address_space(5))) int*);
extern "C" __device__ double __ocml_frexp_f64(double, __attribute__((address_space(5))) int*);
HIPSHIM_MATH float frexpf(float x, int* e) {
    int ev;
    float m = __ocml_frexp_f32(x, (__attribute__((address_space(5))) int*)&ev);
    *e = ev;
    return m;
}
HIPSHIM_MATH double frexp(double x, int* e) {
    int ev;
    double m = __ocml_frexp_f64(x, (__attribute__((address_space(5))) int*)&ev);
    *e = ev;
    return m;
}

extern "C" __device__ __attribute__((const)) int __ocml_isnan_f32(float);
extern "C" __device__ __attribute__((const)) int __ocml_isnan_f64(double);
extern "C" __device__ __attribute__((const)) int __ocml_isinf_f32(float);
extern "C" __device__ __attribute__((const)) int __ocml_isinf_f64(double);
extern "C" __device__ __attribute__((const)) int __ocml_isfinite_f32(float);
extern "C" __device__ __attribute__((const)) int __ocml_isfinite_f64(double);
HIPSHIM_MATH bool isnan(float x) { return __ocml_isnan_f32(x); }
HIPSHIM_MATH bool isnan(double x) { return __ocml_isnan_f64(x); }
HIPSHIM_MATH bool isinf(float x) { return __ocml_isinf_f32(x); }
HIPSHIM_MATH bool isinf(double x) { return __ocml_isinf_f64(x); }
HIPSHIM_MATH bool isfinite(float x) { return __ocml_isfinite_f32(x); }
HIPSHIM_MATH bool isfinite(double x) { return __ocml_isfinite_f64(x); }

// Fast, less accurate forms (CUDA/HIP intrinsics): ocml's "native" functions,
// which map to the hardware's transcendental instructions.
extern "C" __device__ __attribute__((const)) float __ocml_native_exp_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_exp2_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_exp10_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_log_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_log2_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_log10_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_sin_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_cos_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_sqrt_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_rsqrt_f32(float);
extern "C" __device__ __attribute__((const)) float __ocml_native_recip_f32(float);
HIPSHIM_MATH float __expf(float x) { return __ocml_native_exp_f32(x); }
HIPSHIM_MATH float __exp10f(float x) { return __ocml_native_exp10_f32(x); }
HIPSHIM_MATH float __logf(float x) { return __ocml_native_log_f32(x); }
HIPSHIM_MATH float __log2f(float x) { return __ocml_native_log2_f32(x); }
HIPSHIM_MATH float __log10f(float x) { return __ocml_native_log10_f32(x); }
HIPSHIM_MATH float __sinf(float x) { return __ocml_native_sin_f32(x); }
HIPSHIM_MATH float __cosf(float x) { return __ocml_native_cos_f32(x); }
HIPSHIM_MATH float __tanf(float x) { return __sinf(x) * __ocml_native_recip_f32(__cosf(x)); }
HIPSHIM_MATH void __sincosf(float x, float* s, float* c) {
    *s = __sinf(x);
    *c = __cosf(x);
}
HIPSHIM_MATH float __powf(float x, float y) { return __ocml_native_exp2_f32(y * __log2f(x)); }
HIPSHIM_MATH float __fsqrt_rn(float x) { return __ocml_sqrt_f32(x); }
HIPSHIM_MATH float __frsqrt_rn(float x) { return __ocml_rsqrt_f32(x); }
HIPSHIM_MATH float __frcp_rn(float x) { return 1.0f / x; }
HIPSHIM_MATH float __fdividef(float x, float y) { return x * __ocml_native_recip_f32(y); }
HIPSHIM_MATH float __fdiv_rn(float x, float y) { return x / y; }
HIPSHIM_MATH float __fadd_rn(float x, float y) { return x + y; }
HIPSHIM_MATH float __fsub_rn(float x, float y) { return x - y; }
HIPSHIM_MATH float __fmul_rn(float x, float y) { return x * y; }
HIPSHIM_MATH float __fmaf_rn(float x, float y, float z) { return __ocml_fma_f32(x, y, z); }
HIPSHIM_MATH float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
HIPSHIM_MATH double __dsqrt_rn(double x) { return __ocml_sqrt_f64(x); }
HIPSHIM_MATH double __fma_rn(double x, double y, double z) { return __ocml_fma_f64(x, y, z); }

// Reinterpretation between integer and float bit patterns.
HIPSHIM_MATH float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
HIPSHIM_MATH float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
HIPSHIM_MATH int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
HIPSHIM_MATH unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
HIPSHIM_MATH double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
HIPSHIM_MATH long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
HIPSHIM_MATH int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
HIPSHIM_MATH int __double2loint(double x) { return (int)__double_as_longlong(x); }
HIPSHIM_MATH double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)((unsigned long long)(unsigned int)hi << 32 |
                                            (unsigned int)lo));
}

// Integer helpers commonly used next to math.
HIPSHIM_MATH int abs(int x) { return x < 0 ? -x : x; }
HIPSHIM_MATH long labs(long x) { return x < 0 ? -x : x; }
HIPSHIM_MATH long long llabs(long long x) { return x < 0 ? -x : x; }
HIPSHIM_MATH int min(int a, int b) { return a < b ? a : b; }
HIPSHIM_MATH int max(int a, int b) { return a > b ? a : b; }
HIPSHIM_MATH unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
HIPSHIM_MATH unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
HIPSHIM_MATH long long min(long long a, long long b) { return a < b ? a : b; }
HIPSHIM_MATH long long max(long long a, long long b) { return a > b ? a : b; }
HIPSHIM_MATH unsigned long long min(unsigned long long a, unsigned long long b) {
    return a < b ? a : b;
}
HIPSHIM_MATH unsigned long long max(unsigned long long a, unsigned long long b) {
    return a > b ? a : b;
}
HIPSHIM_MATH float min(float a, float b) { return __ocml_fmin_f32(a, b); }
HIPSHIM_MATH float max(float a, float b) { return __ocml_fmax_f32(a, b); }
HIPSHIM_MATH double min(double a, double b) { return __ocml_fmin_f64(a, b); }
HIPSHIM_MATH double max(double a, double b) { return __ocml_fmax_f64(a, b); }

#undef HIPSHIM_MATH

#endif // HIPSHIM_DEVICE_MATH_H
