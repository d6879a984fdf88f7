// lds_histogram: 256-bin histogram of bytes, each block counting into its own
// LDS bins with LDS atomics, then merging into the global histogram with
// global atomics.
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
__global__ void histogram(const unsigned char* data, unsigned* hist, int n) {
    __shared__ unsigned bins[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins[b]) atomicAdd(&hist[b], bins[b]);
}

int main() {
    const int n = 3000017;
    std::vector<unsigned char> data(n);
    unsigned x = 12345;
    for (int i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        // Skewed: low bins are hot, so LDS atomics collide a lot.
        data[i] = (unsigned char)((x >> 24) & ((x >> 8) & 1 ? 0x0f : 0xff));
    }
    unsigned char* dd;
    unsigned* dh;
    CHECK(hipMalloc(&dd, n));
    CHECK(hipMalloc(&dh, 256 * 4));
    CHECK(hipMemcpy(dd, data.data(), n, hipMemcpyHostToDevice));
    CHECK(hipMemset(dh, 0, 256 * 4));
    hipLaunchKernelGGL(histogram, dim3(60), dim3(192), 0, 0, dd, dh, n);
    CHECK(hipDeviceSynchronize());
    unsigned got[256], want[256] = {};
    CHECK(hipMemcpy(got, dh, sizeof got, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[data[i]]++;
    int bad = 0;
    for (int b = 0; b < 256; ++b)
        if (got[b] != want[b] && bad++ < 10)
            std::fprintf(stderr, "bin %d: %u want %u\n", b, got[b], want[b]);
    CHECK(hipFree(dd));
    CHECK(hipFree(dh));
    if (bad) {
        std::fprintf(stderr, "lds_histogram: FAILED, %d bins wrong\n", bad);
        return 1;
    }
    std::printf("lds_histogram: PASSED (%d bytes)\n", n);
    return 0;
}
