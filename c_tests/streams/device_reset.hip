// device_reset: hipDeviceReset drains the device and releases what the program created on
// it: its streams become invalid handles (never a crash), its allocations are gone, and the
// device keeps working with new streams and memory.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void fill(int* out, int value) { out[threadIdx.x] = value; }

static int failures = 0;
static void expect_eq(const char* what, hipError_t got, hipError_t want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL %s: expected %s, got %s\n", what, hipGetErrorName(want),
                     hipGetErrorName(got));
        ++failures;
    } else {
        std::printf("ok   %s -> %s\n", what, hipGetErrorName(got));
    }
}

int main() {
    hipStream_t stream = nullptr;
    int* dev = nullptr;
    expect_eq("hipStreamCreate", hipStreamCreate(&stream), hipSuccess);
    expect_eq("hipMalloc", hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);
    fill<<<1, 64, 0, stream>>>(dev, 7);
    expect_eq("hipDeviceReset with work queued", hipDeviceReset(), hipSuccess);
    expect_eq("the old stream is gone", hipStreamQuery(stream), hipErrorInvalidHandle);
    expect_eq("destroying it again", hipStreamDestroy(stream), hipErrorInvalidHandle);
    expect_eq("the old allocation is gone", hipFree(dev), hipErrorInvalidValue);

    hipStream_t fresh = nullptr;
    expect_eq("a new stream", hipStreamCreate(&fresh), hipSuccess);
    expect_eq("new memory", hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);
    fill<<<1, 64, 0, fresh>>>(dev, 9);
    expect_eq("sync the new stream", hipStreamSynchronize(fresh), hipSuccess);
    int host[64] = {};
    expect_eq("copy back", hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost), hipSuccess);
    if (host[0] != 9 || host[63] != 9) {
        std::fprintf(stderr, "FAIL kernel after reset wrote %d..%d\n", host[0], host[63]);
        ++failures;
    }
    expect_eq("hipStreamDestroy", hipStreamDestroy(fresh), hipSuccess);
    expect_eq("hipFree", hipFree(dev), hipSuccess);
    if (failures) return 1;
    std::printf("device_reset: PASSED\n");
    return 0;
}
