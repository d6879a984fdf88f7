// Kernels of the API-sequence fuzzer (tests/api_fuzz.rs), loaded as a module. Each one's
// result is a simple function of its arguments and the old contents, so the host model can
// predict every element; `mix` reads what it overwrites, so a reordered or lost launch shows.
#include <hip/hip_runtime.h>

extern "C" __global__ void fuzz_fill(unsigned* p, unsigned value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value + i;
}

extern "C" __global__ void fuzz_mix(unsigned* dst, const unsigned* src, unsigned k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = dst[i] * 3u + src[i] + k;
}

// A store no allocation covers: hipErrorIllegalAddress.
extern "C" __global__ void fuzz_store_to_nowhere(unsigned value) {
    unsigned* nowhere = reinterpret_cast<unsigned*>(0xdead0000ull);
    nowhere[threadIdx.x] = value;
}

// hipErrorLaunchFailure.
extern "C" __global__ void fuzz_trap() {
    __builtin_trap();
}
