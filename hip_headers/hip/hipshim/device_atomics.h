// hipshim HIP headers: atomic read-modify-write functions.
//
// Plain `atomicX` work at device (agent) scope, `atomicX_system` at system
// scope (host and peer devices), `atomicX_block` at work-group scope; all are
// relaxed, as in CUDA/HIP: ordering needs a fence (__threadfence). Each
// returns the value held before the operation. They are clang's
// `__hip_atomic_*` builtins, which the AMDGPU backend turns into global/LDS
// atomic instructions (or a compare-and-swap loop where the target has none).
#ifndef HIPSHIM_DEVICE_ATOMICS_H
#define HIPSHIM_DEVICE_ATOMICS_H

#include "hip_types.h"

#define HIPSHIM_ATOMIC static __device__ inline __attribute__((always_inline))

// NAME(T*, T) for one builtin at the three scopes.
#define HIPSHIM_RMW(NAME, BUILTIN, T)                                                         \
    HIPSHIM_ATOMIC T NAME(T* p, T v) {                                                        \
        return BUILTIN(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);                     \
    }                                                                                         \
    HIPSHIM_ATOMIC T NAME##_system(T* p, T v) {                                               \
        return BUILTIN(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);                    \
    }                                                                                         \
    HIPSHIM_ATOMIC T NAME##_block(T* p, T v) {                                                \
        return BUILTIN(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);                 \
    }

#define HIPSHIM_RMW_INTS(NAME, BUILTIN)                                                       \
    HIPSHIM_RMW(NAME, BUILTIN, int)                                                           \
    HIPSHIM_RMW(NAME, BUILTIN, unsigned int)                                                  \
    HIPSHIM_RMW(NAME, BUILTIN, unsigned long long)                                            \
    HIPSHIM_RMW(NAME, BUILTIN, long long)

HIPSHIM_RMW_INTS(atomicAdd, __hip_atomic_fetch_add)
HIPSHIM_RMW(atomicAdd, __hip_atomic_fetch_add, float)
HIPSHIM_RMW(atomicAdd, __hip_atomic_fetch_add, double)
HIPSHIM_RMW_INTS(atomicMin, __hip_atomic_fetch_min)
HIPSHIM_RMW_INTS(atomicMax, __hip_atomic_fetch_max)
HIPSHIM_RMW_INTS(atomicAnd, __hip_atomic_fetch_and)
HIPSHIM_RMW_INTS(atomicOr, __hip_atomic_fetch_or)
HIPSHIM_RMW_INTS(atomicXor, __hip_atomic_fetch_xor)
HIPSHIM_RMW_INTS(atomicExch, __hip_atomic_exchange)
HIPSHIM_RMW(atomicExch, __hip_atomic_exchange, float)
HIPSHIM_RMW(atomicExch, __hip_atomic_exchange, double)

// Subtraction is addition of the negation (two's complement wraps alike).
HIPSHIM_ATOMIC int atomicSub(int* p, int v) { return atomicAdd(p, -v); }
HIPSHIM_ATOMIC unsigned int atomicSub(unsigned int* p, unsigned int v) {
    return atomicAdd(p, 0u - v);
}
HIPSHIM_ATOMIC unsigned long long atomicSub(unsigned long long* p, unsigned long long v) {
    return atomicAdd(p, 0ull - v);
}
HIPSHIM_ATOMIC long long atomicSub(long long* p, long long v) { return atomicAdd(p, -v); }
HIPSHIM_ATOMIC float atomicSub(float* p, float v) { return atomicAdd(p, -v); }
HIPSHIM_ATOMIC double atomicSub(double* p, double v) { return atomicAdd(p, -v); }

// Compare-and-swap: stores `desired` when *p == expected; returns the old value.
#define HIPSHIM_CAS(NAME, SCOPE, T)                                                           \
    HIPSHIM_ATOMIC T NAME(T* p, T expected, T desired) {                                      \
        __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED,         \
                                             __ATOMIC_RELAXED, SCOPE);                        \
        return expected;                                                                      \
    }
#define HIPSHIM_CAS_ALL(T)                                                                    \
    HIPSHIM_CAS(atomicCAS, __HIP_MEMORY_SCOPE_AGENT, T)                                       \
    HIPSHIM_CAS(atomicCAS_system, __HIP_MEMORY_SCOPE_SYSTEM, T)                               \
    HIPSHIM_CAS(atomicCAS_block, __HIP_MEMORY_SCOPE_WORKGROUP, T)
HIPSHIM_CAS_ALL(int)
HIPSHIM_CAS_ALL(unsigned int)
HIPSHIM_CAS_ALL(unsigned long long)
HIPSHIM_CAS_ALL(long long)
HIPSHIM_CAS_ALL(float)
HIPSHIM_CAS_ALL(double)

// Wrapping increment/decrement: ((old >= limit) ? 0 : old + 1) and
// ((old == 0 || old > limit) ? limit : old - 1), the hardware's inc/dec.
HIPSHIM_ATOMIC unsigned int atomicInc(unsigned int* p, unsigned int limit) {
    return __builtin_amdgcn_atomic_inc32(p, limit, __ATOMIC_RELAXED, "agent");
}
HIPSHIM_ATOMIC unsigned int atomicDec(unsigned int* p, unsigned int limit) {
    return __builtin_amdgcn_atomic_dec32(p, limit, __ATOMIC_RELAXED, "agent");
}

#undef HIPSHIM_RMW_INTS
#undef HIPSHIM_RMW
#undef HIPSHIM_CAS_ALL
#undef HIPSHIM_CAS
#undef HIPSHIM_ATOMIC

#endif // HIPSHIM_DEVICE_ATOMICS_H
