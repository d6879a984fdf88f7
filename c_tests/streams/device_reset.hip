// device_reset: hipDeviceReset drains the device and releases what the program created on
// it: its streams become dead handles (an error, never a crash), its allocations are gone, and the
// device keeps working with new streams and memory. Pinned host memory is forgotten but stays
// mapped, as AMD's runtime leaves it: another thread may still be filling such a buffer
// (hip-tests' hipStreamPerThread_DeviceReset_1), and the CPU's write must not fault.
#include "../check.h"

__global__ void fill(int* out, int value) { out[threadIdx.x] = value; }

int main() {
    hipStream_t stream = nullptr;
    int* dev = nullptr;
    int* pinned = nullptr;
    EXPECT_ERR(hipStreamCreate(&stream), hipSuccess);
    EXPECT_ERR(hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);
    EXPECT_ERR(hipHostMalloc(&pinned, 1 << 17), hipSuccess);
    fill<<<1, 64, 0, stream>>>(dev, 7);
    EXPECT_ERR(hipDeviceReset(), hipSuccess);
    EXPECT_ERR(hipStreamQuery(stream), hipErrorContextIsDestroyed); // ROCm 6's code
    EXPECT_ERR(hipStreamDestroy(stream), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipFree(dev), hipErrorInvalidValue);
    for (int i = 0; i < (1 << 15); ++i) pinned[i] = i; // a fault here would end the test
    EXPECT_ERR(hipHostFree(pinned), hipErrorInvalidValue);
    if (pinned[(1 << 15) - 1] != (1 << 15) - 1) {
        std::fprintf(stderr, "FAIL pinned memory changed after reset\n");
        ++failures;
    }

    hipStream_t fresh = nullptr;
    EXPECT_ERR(hipStreamCreate(&fresh), hipSuccess);
    EXPECT_ERR(hipMalloc(&dev, 64 * sizeof(int)), hipSuccess);
    fill<<<1, 64, 0, fresh>>>(dev, 9);
    EXPECT_ERR(hipStreamSynchronize(fresh), hipSuccess);
    int host[64] = {};
    EXPECT_ERR(hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost), hipSuccess);
    if (host[0] != 9 || host[63] != 9) {
        std::fprintf(stderr, "FAIL kernel after reset wrote %d..%d\n", host[0], host[63]);
        ++failures;
    }
    EXPECT_ERR(hipStreamDestroy(fresh), hipSuccess);
    EXPECT_ERR(hipFree(dev), hipSuccess);
    return finish("device_reset");
}
