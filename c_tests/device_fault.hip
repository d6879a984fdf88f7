// hipshim-test: expect-stderr=0xdead0000 expect-stderr=opcode expect-stderr=s_trap
//
// device_fault: work that fails on the device is reported as a HIP error at the next
// synchronising call, the process keeps running, and later work on the device succeeds.
// Three ways to fail: a store to an address no allocation covers (hipErrorIllegalAddress,
// stderr names the address), an instruction word the GPU does not define and a trap
// (hipErrorLaunchFailure; stderr names the opcode / the trap).
#include <hip/hip_runtime.h>

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

static int failures = 0;

static void expect_eq(const char* what, hipError_t got, hipError_t want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL %s: expected %s (%d), got %s (%d)\n", what, hipGetErrorName(want),
                     static_cast<int>(want), hipGetErrorName(got), static_cast<int>(got));
        ++failures;
    } else {
        std::printf("ok   %s -> %s\n", what, hipGetErrorName(got));
    }
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
    expect_eq("hipDeviceSynchronize after recovery", hipDeviceSynchronize(), hipSuccess);
    expect_eq("hipMemcpy after recovery", hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost),
              hipSuccess);
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
    expect_eq("hipMalloc", hipMalloc(&out, 64 * sizeof(int)), hipSuccess);

    store_to_nowhere<<<1, 64>>>(7);
    expect_eq("launch of a faulting kernel (asynchronous)", hipGetLastError(), hipSuccess);
    expect_eq("sync after a stray store", hipDeviceSynchronize(), hipErrorIllegalAddress);
    expect_eq("hipGetLastError reports it", hipGetLastError(), hipErrorIllegalAddress);
    expect_eq("reported once", hipDeviceSynchronize(), hipSuccess);
    expect_device_still_works("a stray store");

    undefined_instruction<<<1, 64>>>(out);
    expect_eq("sync after an undefined instruction", hipDeviceSynchronize(), hipErrorLaunchFailure);
    expect_device_still_works("an undefined instruction");

    trap<<<1, 64>>>(out);
    expect_eq("sync after a trap", hipDeviceSynchronize(), hipErrorLaunchFailure);
    expect_device_still_works("a trap");

    expect_eq("hipFree", hipFree(out), hipSuccess);
    if (failures) {
        std::fprintf(stderr, "device_fault: %d check(s) failed\n", failures);
        return 1;
    }
    std::printf("device_fault: PASSED\n");
    return 0;
}
