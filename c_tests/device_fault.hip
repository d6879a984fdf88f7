// hipshim-test: expect-stderr=0xdead0000 expect-stderr=opcode expect-stderr=s_trap
//
// device_fault: work that fails on the device is reported as a HIP error at the next
// synchronising call, the process keeps running, and later work on the device succeeds.
// Three ways to fail: a store to an address no allocation covers (hipErrorIllegalAddress,
// stderr names the address), an instruction word the GPU does not define and a trap
// (hipErrorLaunchFailure; stderr names the opcode / the trap).
#include "check.h"

#include <cstdio>

__global__ void store_to_nowhere(int value) {
    int* nowhere = reinterpret_cast<int*>(0xdead0000ull);
    nowhere[threadIdx.x] = value;
}

// An SOP2 word with opcode 53, which gfx9 leaves unassigned.
__global__ void undefined_instruction(int* out) {
    asm volatile(".long 0x9a800000");
    out[threadIdx.x] = 1;
}

__global__ void trap(int* out) {
    out[threadIdx.x] = 1;
    __builtin_trap();
}

__global__ void add_one(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

// The device still works: run a kernel and check its result.
static void expect_device_still_works(const char* after) {
    const int n = 1000;
    int host[n];
    for (int i = 0; i < n; ++i) host[i] = i;
    int* dev = nullptr;
    if (hipMalloc(&dev, sizeof host) != hipSuccess ||
        hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice) != hipSuccess) {
        std::fprintf(stderr, "FAIL after %s: cannot set up memory\n", after);
        ++failures;
        return;
    }
    add_one<<<(n + 255) / 256, 256>>>(dev, n);
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
    EXPECT_ERR(hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost), hipSuccess);
    for (int i = 0; i < n; ++i) {
        if (host[i] != i + 1) {
            std::fprintf(stderr, "FAIL after %s: element %d is %d, expected %d\n", after, i, host[i],
                         i + 1);
            ++failures;
            break;
        }
    }
    hipFree(dev);
}

int main() {
    int* out = nullptr;
    EXPECT_ERR(hipMalloc(&out, 64 * sizeof(int)), hipSuccess);

    store_to_nowhere<<<1, 64>>>(7);
    EXPECT_ERR(hipGetLastError(), hipSuccess);
    EXPECT_ERR_KEEP(hipDeviceSynchronize(), hipErrorIllegalAddress);
    EXPECT_ERR(hipGetLastError(), hipErrorIllegalAddress);
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
    expect_device_still_works("a stray store");

    undefined_instruction<<<1, 64>>>(out);
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);
    expect_device_still_works("an undefined instruction");

    trap<<<1, 64>>>(out);
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);
    expect_device_still_works("a trap");

    EXPECT_ERR(hipFree(out), hipSuccess);
    return finish("device_fault");
}
