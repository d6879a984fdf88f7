// hipshim-test: targets=gfx90a sim=gfx942 expect-stderr=gfx90a
//
// no_binary: the fat binary holds only a gfx90a code object and the device is
// a gfx942, so a launch must fail with hipErrorNoBinaryForGpu (and the runtime
// names the ISAs it found on stderr, which the runner checks) instead of
// running the wrong code or crashing. Exit status 1 if it does not.
#include "check.h"

#include <cstdio>

__global__ void fill(int* out, int value) { out[threadIdx.x] = value; }

int main() {
    int* dev = nullptr;
    EXPECT_ERR(hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);

    // Through the compiler's launch path: the stub drops hipLaunchKernel's
    // result, so the error surfaces through hipGetLastError.
    fill<<<1, 64>>>(dev, 1);
    EXPECT_ERR(hipGetLastError(), hipErrorNoBinaryForGpu);
    EXPECT_ERR(hipGetLastError(), hipSuccess);

    // Directly: hipLaunchKernel returns it.
    int value = 2;
    void* args[] = {&dev, &value};
    EXPECT_ERR(hipLaunchKernel(reinterpret_cast<const void*>(&fill), dim3(1), dim3(64), args, 0,
                               nullptr),
               hipErrorNoBinaryForGpu);

    // The runtime is still usable afterwards.
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
    EXPECT_ERR(hipFree(dev), hipSuccess);

    return finish("no_binary");
}
