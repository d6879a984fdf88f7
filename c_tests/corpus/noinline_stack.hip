// noinline_stack: non-inlined device functions with local arrays indexed by
// run-time values (so they live in scratch), recursion, and a call chain
// three deep: exercises s_swappc/s_setpc, the stack pointer and scratch.
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
__attribute__((noinline)) __device__ int sort_and_pick(int seed, int k) {
    int a[24];
    for (int i = 0; i < 24; ++i) a[i] = (seed * (i + 7) * 2654435761u) >> 20 & 1023;
    // Insertion sort: data-dependent indexing keeps the array in memory.
    for (int i = 1; i < 24; ++i) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            --j;
        }
        a[j + 1] = v;
    }
    return a[k % 24];
}

__attribute__((noinline)) __device__ long long fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) __device__ float middle(int seed, int k) {
    volatile float buf[9];
    for (int i = 0; i < 9; ++i) buf[i] = (float)sort_and_pick(seed + i, k + i);
    float s = 0;
    for (int i = 0; i < 9; ++i) s += buf[(i * 4) % 9];
    return s;
}

__global__ void calls(int* picks, long long* fibs, float* mids, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    picks[i] = sort_and_pick(i + 1, i);
    fibs[i] = fib(i % 15);
    mids[i] = middle(i, i % 5);
}

static int host_pick(int seed, int k) {
    int a[24];
    for (int i = 0; i < 24; ++i) a[i] = (seed * (i + 7) * 2654435761u) >> 20 & 1023;
    std::vector<int> v(a, a + 24);
    for (int i = 1; i < 24; ++i)
        for (int j = i; j > 0 && v[j - 1] > v[j]; --j) std::swap(v[j], v[j - 1]);
    return v[k % 24];
}

int main() {
    const int n = 777;
    int* dp;
    long long* df;
    float* dm;
    CHECK(hipMalloc(&dp, n * 4));
    CHECK(hipMalloc(&df, n * 8));
    CHECK(hipMalloc(&dm, n * 4));
    hipLaunchKernelGGL(calls, dim3((n + 127) / 128), dim3(128), 0, 0, dp, df, dm, n);
    CHECK(hipDeviceSynchronize());
    std::vector<int> picks(n);
    std::vector<long long> fibs(n);
    std::vector<float> mids(n);
    CHECK(hipMemcpy(picks.data(), dp, n * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(fibs.data(), df, n * 8, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(mids.data(), dm, n * 4, hipMemcpyDeviceToHost));
    long long f[16] = {0, 1};
    for (int i = 2; i < 16; ++i) f[i] = f[i - 1] + f[i - 2];
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        int want = host_pick(i + 1, i);
        if (picks[i] != want && bad++ < 10) std::fprintf(stderr, "pick[%d] = %d want %d\n", i, picks[i], want);
        if (fibs[i] != f[i % 15] && bad++ < 10) std::fprintf(stderr, "fib[%d] = %lld\n", i, fibs[i]);
        float buf[9], s = 0;
        for (int q = 0; q < 9; ++q) buf[q] = (float)host_pick(i + q, i % 5 + q);
        for (int q = 0; q < 9; ++q) s += buf[(q * 4) % 9];
        if (mids[i] != s && bad++ < 10) std::fprintf(stderr, "mid[%d] = %g want %g\n", i, mids[i], s);
    }
    CHECK(hipFree(dp));
    CHECK(hipFree(df));
    CHECK(hipFree(dm));
    if (bad) {
        std::fprintf(stderr, "noinline_stack: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("noinline_stack: PASSED\n");
    return 0;
}
