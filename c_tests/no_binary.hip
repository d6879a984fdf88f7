// hipshim-test: targets=gfx90a sim=gfx942 expect-stderr=gfx90a
//
// no_binary: the fat binary holds only a gfx90a code object and the device is
// a gfx942, so a launch must fail with hipErrorNoBinaryForGpu (and the runtime
// names the ISAs it found on stderr, which the runner checks) instead of
// running the wrong code or crashing. Exit status 1 if it does not.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void fill(int* out, int value) { out[threadIdx.x] = value; }

static int failures = 0;

static void expect_eq(const char* what, hipError_t got, hipError_t want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL %s: expected %s (%d), got %s (%d)\n", what,
                     hipGetErrorName(want), static_cast<int>(want), hipGetErrorName(got),
                     static_cast<int>(got));
        ++failures;
    } else {
        std::printf("ok   %s -> %s\n", what, hipGetErrorName(got));
    }
}

int main() {
    int* dev = nullptr;
    expect_eq("hipMalloc", hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);

    // Through the compiler's launch path: the stub drops hipLaunchKernel's
    // result, so the error surfaces through hipGetLastError.
    fill<<<1, 64>>>(dev, 1);
    expect_eq("<<<>>> launch, then hipGetLastError", hipGetLastError(), hipErrorNoBinaryForGpu);
    expect_eq("hipGetLastError again (cleared)", hipGetLastError(), hipSuccess);

    // Directly: hipLaunchKernel returns it.
    int value = 2;
    void* args[] = {&dev, &value};
    expect_eq("hipLaunchKernel",
              hipLaunchKernel(reinterpret_cast<const void*>(&fill), dim3(1), dim3(64), args, 0,
                              nullptr),
              hipErrorNoBinaryForGpu);
    (void)hipGetLastError();

    // The runtime is still usable afterwards.
    expect_eq("hipDeviceSynchronize", hipDeviceSynchronize(), hipSuccess);
    expect_eq("hipFree", hipFree(dev), hipSuccess);

    if (failures != 0) {
        std::fprintf(stderr, "no_binary: FAILED, %d check(s) wrong\n", failures);
        return 1;
    }
    std::printf("no_binary: PASSED\n");
    return 0;
}
