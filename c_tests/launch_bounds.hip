// launch_bounds: __launch_bounds__ limits a kernel's block size as on AMD's HIP: the
// bound reaches the code object, hipFuncGetAttributes reports it, and a larger block is
// refused instead of running out of spec, with hipErrorLaunchFailure as AMD's runtime
// refuses it (every ROCm ABI).
#include "check.h"

#include <cstdio>

__global__ void __launch_bounds__(256) bounded(int* out) { out[threadIdx.x] = threadIdx.x; }
__global__ void __launch_bounds__(128, 2) bounded_with_waves(int* out) {
    out[threadIdx.x] = 2 * threadIdx.x;
}
__global__ void unbounded(int* out) { out[threadIdx.x] = 3 * threadIdx.x; }

int main() {
    int* out = nullptr;
    CHECK(hipMalloc(&out, 1024 * sizeof(int)));
    hipFuncAttributes attr;
    EXPECT_ERR(hipFuncGetAttributes(&attr, bounded), hipSuccess);
    EXPECT_EQ(attr.maxThreadsPerBlock, 256);
    EXPECT_ERR(hipFuncGetAttributes(&attr, bounded_with_waves), hipSuccess);
    EXPECT_EQ(attr.maxThreadsPerBlock, 128);
    EXPECT_ERR(hipFuncGetAttributes(&attr, unbounded), hipSuccess);
    EXPECT_EQ(attr.maxThreadsPerBlock, 1024);

    bounded<<<1, 256>>>(out);
    EXPECT_ERR(hipGetLastError(), hipSuccess);
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
    bounded<<<1, 512>>>(out);
    EXPECT_ERR(hipGetLastError(), hipErrorLaunchFailure);
    bounded_with_waves<<<1, 256>>>(out);
    EXPECT_ERR(hipGetLastError(), hipErrorLaunchFailure);
    unbounded<<<1, 1024>>>(out);
    EXPECT_ERR(hipGetLastError(), hipSuccess);
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
    hipFree(out);
    return finish("launch_bounds");
}
