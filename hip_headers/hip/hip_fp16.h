// hipshim HIP headers: IEEE binary16 (`__half`) and pairs of it (`__half2`).
//
// Both are thin wrappers over clang's `_Float16`, which the AMDGPU backend
// computes natively (v_add_f16, v_pk_fma_f16, ...) and the x86-64 host
// computes through float with correct rounding, so host and device agree
// bit for bit on single operations. Everything is __host__ __device__ except
// the math functions that need the device library (hsqrt, hexp, ...).
//
// Conversions to and from float are implicit, as in HIP. Arithmetic
// operators take two halves; mixing a __half and a float in one expression is
// ambiguous (convert one side explicitly).
#ifndef HIP_HIP_FP16_H
#define HIP_HIP_FP16_H

#include "hipshim/host_defines.h"

#define HIPSHIM_HD static __host__ __device__ inline __attribute__((always_inline))

struct __half_raw {
    unsigned short x;
};

struct __half {
    _Float16 data;

    __half() = default;
    __host__ __device__ constexpr __half(_Float16 v) : data(v) {}
    __host__ __device__ __half(float v) : data((_Float16)v) {}
    __host__ __device__ __half(double v) : data((_Float16)v) {}
    __host__ __device__ __half(int v) : data((_Float16)v) {}
    __host__ __device__ __half(unsigned int v) : data((_Float16)v) {}
    __host__ __device__ __half(__half_raw r) : data(__builtin_bit_cast(_Float16, r.x)) {}
    __host__ __device__ operator float() const { return (float)data; }
    __host__ __device__ operator __half_raw() const {
        return __half_raw{__builtin_bit_cast(unsigned short, data)};
    }

    __host__ __device__ __half& operator+=(__half o) { data += o.data; return *this; }
    __host__ __device__ __half& operator-=(__half o) { data -= o.data; return *this; }
    __host__ __device__ __half& operator*=(__half o) { data *= o.data; return *this; }
    __host__ __device__ __half& operator/=(__half o) { data /= o.data; return *this; }
};

typedef __half half;

struct __half2 {
    __half x;
    __half y;
    __half2() = default;
    __host__ __device__ constexpr __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half2 half2;

// Conversions.
HIPSHIM_HD __half __float2half(float f) { return __half(f); }
HIPSHIM_HD __half __float2half_rn(float f) { return __half(f); }
HIPSHIM_HD float __half2float(__half h) { return (float)h.data; }
HIPSHIM_HD __half __double2half(double d) { return __half(d); }
HIPSHIM_HD __half __int2half_rn(int i) { return __half((_Float16)i); }
HIPSHIM_HD __half __uint2half_rn(unsigned int i) { return __half((_Float16)i); }
HIPSHIM_HD int __half2int_rz(__half h) { return (int)h.data; }
HIPSHIM_HD unsigned int __half2uint_rz(__half h) { return (unsigned int)h.data; }
HIPSHIM_HD unsigned short __half_as_ushort(__half h) {
    return __builtin_bit_cast(unsigned short, h.data);
}
HIPSHIM_HD short __half_as_short(__half h) { return __builtin_bit_cast(short, h.data); }
HIPSHIM_HD __half __ushort_as_half(unsigned short u) {
    return __half(__builtin_bit_cast(_Float16, u));
}
HIPSHIM_HD __half __short_as_half(short s) { return __half(__builtin_bit_cast(_Float16, s)); }

// Arithmetic (round to nearest even).
HIPSHIM_HD __half __hadd(__half a, __half b) { return __half((_Float16)(a.data + b.data)); }
HIPSHIM_HD __half __hsub(__half a, __half b) { return __half((_Float16)(a.data - b.data)); }
HIPSHIM_HD __half __hmul(__half a, __half b) { return __half((_Float16)(a.data * b.data)); }
HIPSHIM_HD __half __hdiv(__half a, __half b) { return __half((_Float16)(a.data / b.data)); }
HIPSHIM_HD __half __hneg(__half a) { return __half((_Float16)-a.data); }
HIPSHIM_HD __half __habs(__half a) {
    return __ushort_as_half(__half_as_ushort(a) & 0x7fffu);
}
// Fused: one rounding of a*b+c. The device has the instruction (v_fma_f16);
// the host computes in double, where the product is exact and the sum is
// exact unless the operands' exponents lie extremely far apart.
HIPSHIM_HD __half __hfma(__half a, __half b, __half c) {
#if defined(__HIP_DEVICE_COMPILE__)
    return __half(__builtin_fmaf16(a.data, b.data, c.data));
#else
    return __half((_Float16)((double)a.data * (double)b.data + (double)c.data));
#endif
}
HIPSHIM_HD __half __hmax(__half a, __half b) { return a.data < b.data ? b : a; }
HIPSHIM_HD __half __hmin(__half a, __half b) { return b.data < a.data ? b : a; }

// Comparisons (ordered: false when either is NaN, except __hne).
HIPSHIM_HD bool __heq(__half a, __half b) { return a.data == b.data; }
HIPSHIM_HD bool __hne(__half a, __half b) { return a.data != b.data; }
HIPSHIM_HD bool __hlt(__half a, __half b) { return a.data < b.data; }
HIPSHIM_HD bool __hle(__half a, __half b) { return a.data <= b.data; }
HIPSHIM_HD bool __hgt(__half a, __half b) { return a.data > b.data; }
HIPSHIM_HD bool __hge(__half a, __half b) { return a.data >= b.data; }
HIPSHIM_HD bool __hisnan(__half a) { return a.data != a.data; }
HIPSHIM_HD bool __hisinf(__half a) {
    return (__half_as_ushort(a) & 0x7fffu) == 0x7c00u;
}

static __host__ __device__ inline __half operator+(__half a, __half b) { return __hadd(a, b); }
static __host__ __device__ inline __half operator-(__half a, __half b) { return __hsub(a, b); }
static __host__ __device__ inline __half operator*(__half a, __half b) { return __hmul(a, b); }
static __host__ __device__ inline __half operator/(__half a, __half b) { return __hdiv(a, b); }
static __host__ __device__ inline __half operator-(__half a) { return __hneg(a); }
static __host__ __device__ inline bool operator==(__half a, __half b) { return __heq(a, b); }
static __host__ __device__ inline bool operator!=(__half a, __half b) { return __hne(a, b); }
static __host__ __device__ inline bool operator<(__half a, __half b) { return __hlt(a, b); }
static __host__ __device__ inline bool operator<=(__half a, __half b) { return __hle(a, b); }
static __host__ __device__ inline bool operator>(__half a, __half b) { return __hgt(a, b); }
static __host__ __device__ inline bool operator>=(__half a, __half b) { return __hge(a, b); }

// Pairs.
HIPSHIM_HD __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
HIPSHIM_HD __half2 __half2half2(__half a) { return __half2(a, a); }
HIPSHIM_HD __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
HIPSHIM_HD __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
HIPSHIM_HD __half __low2half(__half2 v) { return v.x; }
HIPSHIM_HD __half __high2half(__half2 v) { return v.y; }
HIPSHIM_HD float __low2float(__half2 v) { return (float)v.x.data; }
HIPSHIM_HD float __high2float(__half2 v) { return (float)v.y.data; }
HIPSHIM_HD __half2 __hadd2(__half2 a, __half2 b) {
    return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y));
}
HIPSHIM_HD __half2 __hsub2(__half2 a, __half2 b) {
    return __half2(__hsub(a.x, b.x), __hsub(a.y, b.y));
}
HIPSHIM_HD __half2 __hmul2(__half2 a, __half2 b) {
    return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y));
}
HIPSHIM_HD __half2 __h2div(__half2 a, __half2 b) {
    return __half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y));
}
HIPSHIM_HD __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
HIPSHIM_HD __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }

#if defined(__HIP__) && defined(__HIP_DEVICE_COMPILE__)
// Device-library math on halves (ocml's f16 functions).
extern "C" __device__ __attribute__((const)) _Float16 __ocml_sqrt_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_rsqrt_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_exp_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_exp2_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_log_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_log2_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_sin_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_cos_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_floor_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_ceil_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_trunc_f16(_Float16);
extern "C" __device__ __attribute__((const)) _Float16 __ocml_rint_f16(_Float16);
#define HIPSHIM_H1(NAME, OCML)                                                                \
    static __device__ inline __half NAME(__half a) { return __half(OCML(a.data)); }
HIPSHIM_H1(hsqrt, __ocml_sqrt_f16)
HIPSHIM_H1(hrsqrt, __ocml_rsqrt_f16)
HIPSHIM_H1(hexp, __ocml_exp_f16)
HIPSHIM_H1(hexp2, __ocml_exp2_f16)
HIPSHIM_H1(hlog, __ocml_log_f16)
HIPSHIM_H1(hlog2, __ocml_log2_f16)
HIPSHIM_H1(hsin, __ocml_sin_f16)
HIPSHIM_H1(hcos, __ocml_cos_f16)
HIPSHIM_H1(hfloor, __ocml_floor_f16)
HIPSHIM_H1(hceil, __ocml_ceil_f16)
HIPSHIM_H1(htrunc, __ocml_trunc_f16)
HIPSHIM_H1(hrint, __ocml_rint_f16)
#undef HIPSHIM_H1
#endif

#undef HIPSHIM_HD

#endif // HIP_HIP_FP16_H
