// hipshim HIP headers: wavefront-level operations, bit intrinsics and clocks.
//
// gfx9 (gfx90a, gfx942) runs wave64 only, so `warpSize` is 64 and lane masks
// are 64-bit, as in AMD's HIP. Shuffles are `ds_bpermute_b32` (each lane reads
// the value of the lane whose byte address it supplies); a `width` argument
// splits the wave into independent segments of that many lanes (a power of two
// up to 64), and a lane whose source falls outside its segment reads its own
// value.
#ifndef HIPSHIM_DEVICE_WARP_H
#define HIPSHIM_DEVICE_WARP_H

#include "hip_types.h"

#define HIPSHIM_WARP static __device__ inline __attribute__((always_inline))

static constexpr int warpSize = 64;

// This work-item's lane number in its wave (0..63).
HIPSHIM_WARP unsigned int __lane_id() {
    return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

// The core: every lane reads `value` from lane `src` (byte address src * 4).
HIPSHIM_WARP int __hipshim_bpermute(int src, int value) {
    return __builtin_amdgcn_ds_bpermute(src << 2, value);
}

// Source lanes of the four shuffles, given this lane and a segment width.
HIPSHIM_WARP int __hipshim_src_idx(int lane, int width) {
    return (int)(__lane_id() & ~(unsigned)(width - 1)) + (lane & (width - 1));
}
HIPSHIM_WARP int __hipshim_src_up(unsigned int delta, int width) {
    const int self = (int)__lane_id();
    const int src = self - (int)delta;
    // Below the first lane of this segment: keep our own value.
    return src < (self & ~(width - 1)) ? self : src;
}
HIPSHIM_WARP int __hipshim_src_down(unsigned int delta, int width) {
    const int self = (int)__lane_id();
    // Past the last lane of this segment: keep our own value.
    return (self & (width - 1)) + (int)delta >= width ? self : self + (int)delta;
}
HIPSHIM_WARP int __hipshim_src_xor(int mask, int width) {
    const int self = (int)__lane_id();
    const int src = self ^ mask;
    return src >= ((self + width) & ~(width - 1)) ? self : src;
}

// One overload set per shuffle: 32-bit types move in one bpermute, 64-bit
// types in two.
#define HIPSHIM_SHFL_ALL(NAME, ARG_T, SRC)                                                    \
    HIPSHIM_WARP int NAME(int v, ARG_T a, int width = warpSize) {                             \
        return __hipshim_bpermute(SRC, v);                                                    \
    }                                                                                         \
    HIPSHIM_WARP unsigned int NAME(unsigned int v, ARG_T a, int width = warpSize) {           \
        return (unsigned int)__hipshim_bpermute(SRC, (int)v);                                 \
    }                                                                                         \
    HIPSHIM_WARP float NAME(float v, ARG_T a, int width = warpSize) {                         \
        return __builtin_bit_cast(float, __hipshim_bpermute(SRC, __builtin_bit_cast(int, v))); \
    }                                                                                         \
    HIPSHIM_WARP unsigned long long NAME(unsigned long long v, ARG_T a,                       \
                                         int width = warpSize) {                              \
        const int src = SRC;                                                                  \
        const unsigned int lo = (unsigned int)__hipshim_bpermute(src, (int)(unsigned int)v);  \
        const unsigned int hi = (unsigned int)__hipshim_bpermute(src, (int)(v >> 32));        \
        return (unsigned long long)hi << 32 | lo;                                             \
    }                                                                                         \
    HIPSHIM_WARP long long NAME(long long v, ARG_T a, int width = warpSize) {                 \
        return (long long)NAME((unsigned long long)v, a, width);                              \
    }                                                                                         \
    HIPSHIM_WARP long NAME(long v, ARG_T a, int width = warpSize) {                           \
        return (long)NAME((unsigned long long)v, a, width);                                   \
    }                                                                                         \
    HIPSHIM_WARP unsigned long NAME(unsigned long v, ARG_T a, int width = warpSize) {         \
        return (unsigned long)NAME((unsigned long long)v, a, width);                          \
    }                                                                                         \
    HIPSHIM_WARP double NAME(double v, ARG_T a, int width = warpSize) {                       \
        return __builtin_bit_cast(                                                            \
            double, NAME(__builtin_bit_cast(unsigned long long, v), a, width));                \
    }

HIPSHIM_SHFL_ALL(__shfl, int, __hipshim_src_idx(a, width))
HIPSHIM_SHFL_ALL(__shfl_up, unsigned int, __hipshim_src_up(a, width))
HIPSHIM_SHFL_ALL(__shfl_down, unsigned int, __hipshim_src_down(a, width))
HIPSHIM_SHFL_ALL(__shfl_xor, int, __hipshim_src_xor(a, width))
#undef HIPSHIM_SHFL_ALL

// The `_sync` spellings (CUDA, HIP 6.2+): on AMD the mask names lanes that
// must take part; every active lane takes part here, so it is not needed.
#define HIPSHIM_SHFL_SYNC(NAME, BASE, ARG_T)                                                  \
    template <typename MaskT, typename T>                                                     \
    HIPSHIM_WARP T NAME(MaskT, T v, ARG_T a, int width = warpSize) {                          \
        return BASE(v, a, width);                                                             \
    }
HIPSHIM_SHFL_SYNC(__shfl_sync, __shfl, int)
HIPSHIM_SHFL_SYNC(__shfl_up_sync, __shfl_up, unsigned int)
HIPSHIM_SHFL_SYNC(__shfl_down_sync, __shfl_down, unsigned int)
HIPSHIM_SHFL_SYNC(__shfl_xor_sync, __shfl_xor, int)
#undef HIPSHIM_SHFL_SYNC

// Votes over the active lanes.
HIPSHIM_WARP unsigned long long __activemask() { return __builtin_amdgcn_read_exec(); }
HIPSHIM_WARP unsigned long long __ballot(int predicate) {
    return __builtin_amdgcn_ballot_w64(predicate != 0);
}
HIPSHIM_WARP int __any(int predicate) { return __ballot(predicate) != 0; }
HIPSHIM_WARP int __all(int predicate) { return __ballot(predicate) == __activemask(); }

// Bit intrinsics.
HIPSHIM_WARP int __popc(unsigned int x) { return __builtin_popcount(x); }
HIPSHIM_WARP int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
HIPSHIM_WARP int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
HIPSHIM_WARP int __clzll(long long x) {
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
// 1-based position of the least significant set bit; 0 for 0.
HIPSHIM_WARP int __ffs(int x) { return __builtin_ffs(x); }
HIPSHIM_WARP int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
HIPSHIM_WARP int __ffsll(long long x) { return __builtin_ffsll(x); }
HIPSHIM_WARP int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
HIPSHIM_WARP unsigned int __brev(unsigned int x) { return __builtin_bitreverse32(x); }
HIPSHIM_WARP unsigned long long __brevll(unsigned long long x) {
    return __builtin_bitreverse64(x);
}
HIPSHIM_WARP int __mul24(int x, int y) { return ((x << 8) >> 8) * ((y << 8) >> 8); }
HIPSHIM_WARP unsigned int __umul24(unsigned int x, unsigned int y) {
    return (x & 0xffffffu) * (y & 0xffffffu);
}
HIPSHIM_WARP int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
HIPSHIM_WARP unsigned int __umulhi(unsigned int x, unsigned int y) {
    return (unsigned int)(((unsigned long long)x * y) >> 32);
}

// Clocks (`clock()` is left to <ctime>: a device overload differing only in
// its return type would clash with it): s_memtime counts shader-core clocks, s_memrealtime a constant-rate
// (100 MHz on AMD parts) real-time counter.
HIPSHIM_WARP long long clock64() { return (long long)__builtin_amdgcn_s_memtime(); }
HIPSHIM_WARP long long wall_clock64() { return (long long)__builtin_amdgcn_s_memrealtime(); }

#undef HIPSHIM_WARP

#endif // HIPSHIM_DEVICE_WARP_H
