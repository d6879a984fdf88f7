// hipshim-test: targets=gfx942
// Exits without synchronising: a kernel that runs for a while and a copy are still queued
// or running when main returns. hipshim must still write a valid trace and its stats.
#include "../check.h"

#include <cstdio>
#include <cstdlib>

// Spins for about `ticks` of the 100 MHz real-time counter.
__global__ void spin_kernel(unsigned long long ticks, int* out) {
    unsigned long long t0 = __builtin_amdgcn_s_memrealtime();
    while (__builtin_amdgcn_s_memrealtime() - t0 < ticks) {
    }
    *out = 1;
}

int main() {
    int* flag = nullptr;
    int* host = nullptr;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipHostMalloc(reinterpret_cast<void**>(&host), sizeof(int), 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    // ~200 ms: still running when main returns.
    spin_kernel<<<1, 1, 0, s>>>(20000000ull, flag);
    CHECK(hipGetLastError());
    CHECK(hipMemcpyAsync(host, flag, sizeof(int), hipMemcpyDeviceToHost, s));
    std::printf("no_sync: exiting without synchronising\n");
    return 0;
}
