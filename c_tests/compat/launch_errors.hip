// The error each launch call returns for a refused configuration, as the program's ROCm ABI
// gives it (compat::Abi::launch_error): ROCm 5 as Debian's ROCm 5.2 runtime returns it on
// hsasim, ROCm 6 as AMD's 6.x launch validation, ROCm 7 as AMD's "HIP API 7.0 changes"
// lists. Every launch call, the cooperative ones and a graph kernel node included; valid
// launches still run. A launch on a destroyed stream: ROCm 5 hipErrorContextIsDestroyed (as
// any call on one), ROCm 6 hipErrorInvalidValue, ROCm 7 hipErrorContextIsDestroyed and, for
// a cooperative launch, hipErrorInvalidHandle.
#include "../check.h"
#include "abi.h"

__global__ void mark(int* out) { out[threadIdx.x] = 1; }
__global__ void __launch_bounds__(64) bounded(int* out) { out[threadIdx.x] = 2; }

struct Expected {
    hipError_t zero, block_over_device, shared_over_device;
    hipError_t coop_zero, coop_block_over_device, coop_shared_over_device;
    hipError_t dead_stream, coop_dead_stream;
};

static Expected expected(int abi) {
    switch (abi) {
    case 5:
        return {hipErrorInvalidValue, hipErrorInvalidConfiguration, hipErrorOutOfMemory,
                hipErrorInvalidValue, hipErrorInvalidConfiguration,
                hipErrorCooperativeLaunchTooLarge, hipErrorContextIsDestroyed,
                hipErrorContextIsDestroyed};
    case 7:
        return {hipErrorInvalidValue, hipErrorInvalidConfiguration, hipErrorInvalidValue,
                hipErrorInvalidValue, hipErrorInvalidConfiguration,
                hipErrorCooperativeLaunchTooLarge, hipErrorContextIsDestroyed,
                hipErrorInvalidHandle};
    default:
        return {hipErrorInvalidConfiguration, hipErrorInvalidValue, hipErrorInvalidValue,
                hipErrorInvalidConfiguration, hipErrorInvalidConfiguration,
                hipErrorInvalidValue, hipErrorInvalidValue, hipErrorInvalidValue};
    }
}

int main() {
    const Expected want = expected(expected_abi());
    int* out = nullptr;
    CHECK(hipMalloc(&out, 1024 * sizeof(int)));
    void* args[] = {&out};
    int lds = 0;
    CHECK(hipDeviceGetAttribute(&lds, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
    const void* m = reinterpret_cast<const void*>(&mark);
    const void* b = reinterpret_cast<const void*>(&bounded);
    const size_t too_much = (size_t)lds + 1;

    // hipLaunchKernel.
    EXPECT_ERR(hipLaunchKernel(m, dim3(0), dim3(64), args, 0, nullptr), want.zero);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1, 1, 0), dim3(64), args, 0, nullptr), want.zero);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(64, 0, 1), args, 0, nullptr), want.zero);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(2048), args, 0, nullptr), want.block_over_device);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(32, 32, 2), args, 0, nullptr),
               want.block_over_device);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(1, 1, 2048), args, 0, nullptr),
               want.block_over_device);
    EXPECT_ERR(hipLaunchKernel(b, dim3(1), dim3(128), args, 0, nullptr), hipErrorLaunchFailure);
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(64), args, too_much, nullptr),
               want.shared_over_device);
    // <<<>>> reports through hipGetLastError.
    mark<<<0, 64>>>(out);
    EXPECT_ERR(hipGetLastError(), want.zero);
    mark<<<1, 2048>>>(out);
    EXPECT_ERR(hipGetLastError(), want.block_over_device);
    bounded<<<1, 65>>>(out);
    EXPECT_ERR(hipGetLastError(), hipErrorLaunchFailure);
    mark<<<1, 64, too_much>>>(out);
    EXPECT_ERR(hipGetLastError(), want.shared_over_device);

    // hipExtLaunchKernel.
    EXPECT_ERR(hipExtLaunchKernel(m, dim3(0), dim3(64), args, 0, nullptr, nullptr, nullptr, 0),
               want.zero);
    EXPECT_ERR(hipExtLaunchKernel(m, dim3(1), dim3(1025), args, 0, nullptr, nullptr, nullptr, 0),
               want.block_over_device);
    EXPECT_ERR(hipExtLaunchKernel(b, dim3(1), dim3(128), args, 0, nullptr, nullptr, nullptr, 0),
               hipErrorLaunchFailure);
    EXPECT_ERR(
        hipExtLaunchKernel(m, dim3(1), dim3(64), args, too_much, nullptr, nullptr, nullptr, 0),
        want.shared_over_device);

    // hipModuleLaunchKernel and hipExtModuleLaunchKernel (grid in work-items).
    hipFunction_t fm = nullptr, fb = nullptr;
    CHECK(hipGetFuncBySymbol(&fm, m));
    CHECK(hipGetFuncBySymbol(&fb, b));
    EXPECT_ERR(hipModuleLaunchKernel(fm, 0, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr), want.zero);
    EXPECT_ERR(hipModuleLaunchKernel(fm, 1, 1, 1, 1025, 1, 1, 0, nullptr, args, nullptr),
               want.block_over_device);
    EXPECT_ERR(hipModuleLaunchKernel(fb, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr),
               hipErrorLaunchFailure);
    EXPECT_ERR(hipModuleLaunchKernel(fm, 1, 1, 1, 64, 1, 1, (unsigned)too_much, nullptr, args,
                                     nullptr),
               want.shared_over_device);
    EXPECT_ERR(hipExtModuleLaunchKernel(fm, 1, 1, 0, 64, 1, 1, 0, nullptr, args, nullptr),
               want.zero);
    EXPECT_ERR(hipExtModuleLaunchKernel(fm, 2048, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr),
               want.block_over_device);

    // Cooperative launches.
    EXPECT_ERR(hipLaunchCooperativeKernel(m, dim3(0), dim3(64), args, 0, nullptr),
               want.coop_zero);
    EXPECT_ERR(hipLaunchCooperativeKernel(m, dim3(1), dim3(2048), args, 0, nullptr),
               want.coop_block_over_device);
    EXPECT_ERR(hipLaunchCooperativeKernel(b, dim3(1), dim3(128), args, 0, nullptr),
               hipErrorLaunchFailure);
    EXPECT_ERR(hipLaunchCooperativeKernel(m, dim3(1), dim3(64), args, (unsigned)too_much, nullptr),
               want.coop_shared_over_device);
    EXPECT_ERR(hipModuleLaunchCooperativeKernel(fm, 1, 0, 1, 64, 1, 1, 0, nullptr, args),
               want.coop_zero);
    EXPECT_ERR(hipModuleLaunchCooperativeKernel(fm, 1, 1, 1, 64, 1, 1, (unsigned)too_much,
                                                nullptr, args),
               want.coop_shared_over_device);

    // A kernel graph node is checked as a launch.
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipKernelNodeParams kp = {};
    kp.func = const_cast<void*>(m);
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(2048);
    kp.kernelParams = args;
    hipGraphNode_t node;
    EXPECT_ERR(hipGraphAddKernelNode(&node, g, nullptr, 0, &kp), want.block_over_device);
    kp.blockDim = dim3(64);
    kp.gridDim = dim3(0);
    EXPECT_ERR(hipGraphAddKernelNode(&node, g, nullptr, 0, &kp), want.zero);
    CHECK(hipGraphDestroy(g));

    // A destroyed stream.
    hipStream_t dead;
    CHECK(hipStreamCreate(&dead));
    CHECK(hipStreamDestroy(dead));
    EXPECT_ERR(hipLaunchKernel(m, dim3(1), dim3(64), args, 0, dead), want.dead_stream);
    EXPECT_ERR(hipModuleLaunchKernel(fm, 1, 1, 1, 64, 1, 1, 0, dead, args, nullptr),
               want.dead_stream);
    EXPECT_ERR(hipLaunchCooperativeKernel(m, dim3(1), dim3(64), args, 0, dead),
               want.coop_dead_stream);

    // Valid launches still run, after every refusal.
    CHECK(hipMemset(out, 0, 1024 * sizeof(int)));
    EXPECT_OK(hipLaunchKernel(m, dim3(1), dim3(64), args, 0, nullptr));
    EXPECT_OK(hipLaunchKernel(b, dim3(1), dim3(64), args, 0, nullptr));
    EXPECT_OK(hipLaunchCooperativeKernel(m, dim3(1), dim3(32), args, 0, nullptr));
    CHECK(hipDeviceSynchronize());
    int host[64];
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    int sum = 0;
    for (int v : host) sum += v;
    EXPECT_EQ(sum, 32 * 1 + 32 * 2);
    CHECK(hipFree(out));
    return finish("launch_errors");
}
