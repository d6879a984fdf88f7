// block_reduce: tree reduction in shared memory with __syncthreads (sum of
// 64-bit integers, 512-thread blocks = 8 waves meeting at every barrier),
// then a second kernel reduces the per-block partial sums.
#include <hip/hip_runtime.h>

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

constexpr int B = 512;

__global__ void reduce(const long long* in, long long* out, int n) {
    __shared__ long long s[B];
    int t = threadIdx.x;
    long long v = 0;
    for (int i = blockIdx.x * B + t; i < n; i += B * gridDim.x) v += in[i];
    s[t] = v;
    __syncthreads();
    for (int step = B / 2; step > 0; step >>= 1) {
        if (t < step) s[t] += s[t + step];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

int main() {
    const int n = 1000003, blocks = 97;
    std::vector<long long> in(n);
    long long want = 0;
    for (int i = 0; i < n; ++i) {
        in[i] = (long long)(i % 1000) * 1000003LL - 77;
        want += in[i];
    }
    long long *din, *dpart, *dsum;
    CHECK(hipMalloc(&din, n * sizeof(long long)));
    CHECK(hipMalloc(&dpart, blocks * sizeof(long long)));
    CHECK(hipMalloc(&dsum, sizeof(long long)));
    CHECK(hipMemcpy(din, in.data(), n * sizeof(long long), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(reduce, dim3(blocks), dim3(B), 0, 0, din, dpart, n);
    hipLaunchKernelGGL(reduce, dim3(1), dim3(B), 0, 0, dpart, dsum, blocks);
    CHECK(hipDeviceSynchronize());
    long long got = 0;
    CHECK(hipMemcpy(&got, dsum, sizeof got, hipMemcpyDeviceToHost));
    CHECK(hipFree(din));
    CHECK(hipFree(dpart));
    CHECK(hipFree(dsum));
    if (got != want) {
        std::fprintf(stderr, "block_reduce: FAILED, sum %lld want %lld\n", got, want);
        return 1;
    }
    std::printf("block_reduce: PASSED (sum %lld)\n", got);
    return 0;
}
