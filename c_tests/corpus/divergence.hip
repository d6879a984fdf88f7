// divergence: lanes of one wave take different trip counts through nested
// loops, different switch cases (dense: a jump table; sparse: compares),
// early returns and break/continue; the host replays the same control flow.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                         hipGetErrorName(err_));                                       \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)
__host__ __device__ int work(int i) {
    int acc = 0;
    // Collatz steps: a data-dependent trip count per lane.
    unsigned x = (unsigned)i + 1;
    while (x != 1 && acc < 500) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        ++acc;
    }
    for (int j = 0; j < (i % 9); ++j) {
        if ((i + j) % 4 == 0) continue;
        if (j > 6 && (i & 1)) break;
        switch ((i + j) % 7) {
        case 0: acc += 3; break;
        case 1: acc *= 2; break;
        case 2: acc -= j; break;
        case 3: acc ^= 0x55; break;
        case 4: acc += i % 13; [[fallthrough]];
        case 5: acc += 1; break;
        default: acc = acc * 3 - 1; break;
        }
    }
    switch (i % 1000) {
    case 7: acc += 100000; break;
    case 300: acc -= 100000; break;
    case 999: acc = -acc; break;
    default: break;
    }
    return acc;
}

__global__ void diverge(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i % 3 == 0) {
        out[i] = work(i);
        return;
    }
    out[i] = work(i) + (i % 3 == 1 ? 1 : -1) * work(i / 2);
}

int main() {
    const int n = 10000;
    int* d;
    CHECK(hipMalloc(&d, n * 4));
    hipLaunchKernelGGL(diverge, dim3((n + 255) / 256), dim3(256), 0, 0, d, n);
    CHECK(hipDeviceSynchronize());
    std::vector<int> out(n);
    CHECK(hipMemcpy(out.data(), d, n * 4, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        int want = i % 3 == 0 ? work(i) : work(i) + (i % 3 == 1 ? 1 : -1) * work(i / 2);
        if (out[i] != want && bad++ < 10) std::fprintf(stderr, "out[%d] = %d want %d\n", i, out[i], want);
    }
    CHECK(hipFree(d));
    if (bad) {
        std::fprintf(stderr, "divergence: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("divergence: PASSED\n");
    return 0;
}
