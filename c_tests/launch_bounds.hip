// launch_bounds: __launch_bounds__ limits a kernel's block size as on AMD's HIP: the
// bound reaches the code object, hipFuncGetAttributes reports it, and a larger block is
// refused with hipErrorInvalidConfiguration instead of running out of spec.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void __launch_bounds__(256) bounded(int* out) { out[threadIdx.x] = threadIdx.x; }
__global__ void __launch_bounds__(128, 2) bounded_with_waves(int* out) {
    out[threadIdx.x] = 2 * threadIdx.x;
}
__global__ void unbounded(int* out) { out[threadIdx.x] = 3 * threadIdx.x; }

static int failures = 0;

static void expect_eq(const char* what, long got, long want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL %s: expected %ld, got %ld\n", what, want, got);
        ++failures;
    } else {
        std::printf("ok   %s = %ld\n", what, got);
    }
}

int main() {
    int* out = nullptr;
    if (hipMalloc(&out, 1024 * sizeof(int)) != hipSuccess) return 1;
    hipFuncAttributes attr;
    expect_eq("hipFuncGetAttributes(bounded)", hipFuncGetAttributes(&attr, bounded), hipSuccess);
    expect_eq("bounded maxThreadsPerBlock", attr.maxThreadsPerBlock, 256);
    expect_eq("hipFuncGetAttributes(bounded_with_waves)",
              hipFuncGetAttributes(&attr, bounded_with_waves), hipSuccess);
    expect_eq("bounded_with_waves maxThreadsPerBlock", attr.maxThreadsPerBlock, 128);
    expect_eq("hipFuncGetAttributes(unbounded)", hipFuncGetAttributes(&attr, unbounded), hipSuccess);
    expect_eq("unbounded maxThreadsPerBlock", attr.maxThreadsPerBlock, 1024);

    bounded<<<1, 256>>>(out);
    expect_eq("launch at the bound", hipGetLastError(), hipSuccess);
    expect_eq("sync", hipDeviceSynchronize(), hipSuccess);
    bounded<<<1, 512>>>(out);
    expect_eq("launch over the bound", hipGetLastError(), hipErrorInvalidConfiguration);
    bounded_with_waves<<<1, 256>>>(out);
    expect_eq("launch over the two-argument bound", hipGetLastError(),
              hipErrorInvalidConfiguration);
    unbounded<<<1, 1024>>>(out);
    expect_eq("unbounded at 1024", hipGetLastError(), hipSuccess);
    expect_eq("sync", hipDeviceSynchronize(), hipSuccess);
    hipFree(out);
    if (failures) return 1;
    std::printf("launch_bounds: PASSED\n");
    return 0;
}
