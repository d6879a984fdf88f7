// launch_variants: the launch entry points besides <<<>>> and hipModuleLaunchKernel:
// hipExtLaunchKernel(GGL) with its events, hipExtModuleLaunchKernel with a grid in work-items,
// hipLaunchKernelExC/hipLaunchKernelEx/hipDrvLaunchKernelEx with launch attributes,
// hipConfigureCall/hipSetupArgument/hipLaunchByPtr, hipGetFuncBySymbol, the kernel name
// lookups and the hipFuncSet* settings.
#include "../check.h"

#include <hip/hip_ext.h>

#include <cstring>

__global__ void scaled(int* out, int base, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = base + static_cast<int>(scale * i);
}

// Every work-item of the grid marks its own element: no work-item past the grid may run.
__global__ void mark(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

static void expect_scaled(const int* host, int n, int base, float scale) {
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (host[i] != base + static_cast<int>(scale * i)) ++wrong;
    EXPECT_EQ(wrong, 0);
}

int main() {
    const int n = 256;
    int* out = nullptr;
    CHECK(hipMalloc(&out, n * sizeof(int)));
    int host[n];
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));

    // hipExtLaunchKernelGGL between two events on the launch's stream.
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    EXPECT_OK(hipExtLaunchKernelGGL(scaled, dim3(4), dim3(64), 0, stream, start, stop, 0, out, 7,
                                    2.0f));
    EXPECT_OK(hipEventSynchronize(stop));
    EXPECT_OK(hipEventQuery(start));
    float ms = -1;
    EXPECT_OK(hipEventElapsedTime(&ms, start, stop));
    EXPECT_TRUE(ms >= 0);
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    expect_scaled(host, n, 7, 2.0f);

    // Without events, on the null stream, and with hipExtAnyOrderLaunch.
    int base = 3;
    float scale = 0.5f;
    void* args[] = {&out, &base, &scale};
    EXPECT_OK(hipExtLaunchKernel(reinterpret_cast<const void*>(scaled), dim3(4), dim3(64), args,
                                 0, nullptr, nullptr, nullptr, hipExtAnyOrderLaunch));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    expect_scaled(host, n, 3, 0.5f);
    EXPECT_ERR(hipExtLaunchKernel(reinterpret_cast<const void*>(scaled), dim3(4), dim3(64), args,
                                  0, nullptr, nullptr, nullptr, 0x40),
               hipErrorInvalidValue);

    // hipConfigureCall, one hipSetupArgument per argument at its offset, hipLaunchByPtr.
    EXPECT_OK(hipConfigureCall(dim3(2), dim3(128), 0, stream));
    base = 11;
    scale = 3.0f;
    EXPECT_OK(hipSetupArgument(&out, sizeof out, 0));
    EXPECT_OK(hipSetupArgument(&base, sizeof base, 8));
    EXPECT_OK(hipSetupArgument(&scale, sizeof scale, 12));
    EXPECT_OK(hipLaunchByPtr(reinterpret_cast<const void*>(scaled)));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    expect_scaled(host, n, 11, 3.0f);
    // A configuration without its arguments: the launch is refused and the configuration
    // consumed.
    EXPECT_OK(hipConfigureCall(dim3(1), dim3(64)));
    EXPECT_ERR(hipLaunchByPtr(reinterpret_cast<const void*>(scaled)), hipErrorInvalidValue);
    EXPECT_ERR(hipLaunchByPtr(reinterpret_cast<const void*>(scaled)),
               hipErrorMissingConfiguration);
    EXPECT_ERR(hipSetupArgument(&base, sizeof base, 0), hipErrorMissingConfiguration);

    // hipGetFuncBySymbol: one handle per kernel, usable with the module launches.
    hipFunction_t f = nullptr, again = nullptr;
    EXPECT_OK(hipGetFuncBySymbol(&f, reinterpret_cast<const void*>(mark)));
    EXPECT_OK(hipGetFuncBySymbol(&again, reinterpret_cast<const void*>(mark)));
    EXPECT_TRUE(f != nullptr && f == again);
    EXPECT_ERR(hipGetFuncBySymbol(&f, reinterpret_cast<const void*>(&expect_scaled)),
               hipErrorInvalidDeviceFunction);

    // hipExtModuleLaunchKernel: clang builds HIP kernels for full work-groups (their metadata
    // says .uniform_work_group_size: 1), so 100 work-items in groups of 64 are refused as in
    // AMD's runtime since ROCm 5.7; 100 in groups of 50 run.
    CHECK(hipMemset(out, 0, n * sizeof(int)));
    void* mark_args[] = {&out};
    EXPECT_ERR(hipExtModuleLaunchKernel(f, 100, 1, 1, 64, 1, 1, 0, stream, mark_args, nullptr,
                                        start, stop, 0),
               hipErrorInvalidValue);
    EXPECT_OK(hipExtModuleLaunchKernel(f, 100, 1, 1, 50, 1, 1, 0, stream, mark_args, nullptr,
                                       start, stop, 0));
    EXPECT_OK(hipEventSynchronize(stop));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    int marked = 0, first_unmarked = -1;
    for (int i = 0; i < n; ++i) {
        if (host[i] == 1) ++marked;
        else if (first_unmarked < 0) first_unmarked = i;
    }
    EXPECT_EQ(marked, 100);
    EXPECT_EQ(first_unmarked, 100);
    EXPECT_ERR(hipExtModuleLaunchKernel(f, 0, 1, 1, 64, 1, 1, 0, stream, mark_args, nullptr),
               hipErrorInvalidConfiguration);

    // Names: by handle and by host stub, the same mangled name.
    const char* by_handle = hipKernelNameRef(f);
    const char* by_ptr = hipKernelNameRefByPtr(reinterpret_cast<const void*>(mark), stream);
    EXPECT_TRUE(by_handle != nullptr && std::strstr(by_handle, "mark") != nullptr);
    EXPECT_TRUE(by_ptr != nullptr && by_handle != nullptr && std::strcmp(by_ptr, by_handle) == 0);
    EXPECT_TRUE(hipKernelNameRefByPtr(reinterpret_cast<const void*>(&expect_scaled), stream) ==
                nullptr);
    (void)hipGetLastError();

    // Settings: valid ones accepted, others refused.
    EXPECT_OK(hipFuncSetAttribute(scaled, hipFuncAttributeMaxDynamicSharedMemorySize, 1024));
    EXPECT_OK(hipFuncSetAttribute(scaled, hipFuncAttributePreferredSharedMemoryCarveout, 50));
    EXPECT_ERR(hipFuncSetAttribute(scaled, hipFuncAttributeMaxDynamicSharedMemorySize, 1 << 30),
               hipErrorInvalidValue);
    EXPECT_ERR(hipFuncSetAttribute(scaled, hipFuncAttributePreferredSharedMemoryCarveout, 101),
               hipErrorInvalidValue);
    EXPECT_ERR(hipFuncSetAttribute(scaled, static_cast<hipFuncAttribute>(3), 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipFuncSetAttribute(static_cast<const void*>(nullptr),
                                   hipFuncAttributeMaxDynamicSharedMemorySize, 0),
               hipErrorInvalidDeviceFunction);
    EXPECT_OK(hipFuncSetCacheConfig(scaled, hipFuncCachePreferL1));
    EXPECT_ERR(hipFuncSetCacheConfig(scaled, static_cast<hipFuncCache_t>(7)),
               hipErrorInvalidValue);
    EXPECT_OK(hipFuncSetSharedMemConfig(reinterpret_cast<const void*>(scaled),
                                        hipSharedMemBankSizeFourByte));

    // hipLaunchKernelExC and its typed form hipLaunchKernelEx, hipDrvLaunchKernelEx: the
    // configuration in a struct; attributes other than cooperative are refused.
    static_assert(sizeof(hipLaunchAttribute) == 72, "ROCm 7 attribute layout");
    static_assert(sizeof(hipLaunchConfig_t) == 56 && sizeof(HIP_LAUNCH_CONFIG) == 56,
                  "ROCm 7 configuration layout");
    hipLaunchConfig_t config = {};
    config.gridDim = dim3(4);
    config.blockDim = dim3(64);
    config.stream = stream;
    base = 5;
    scale = 1.5f;
    EXPECT_OK(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(scaled), args));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    expect_scaled(host, n, 5, 1.5f);
    hipLaunchAttribute attrs[2] = {};
    attrs[0].id = hipLaunchAttributeIgnore;
    attrs[1].id = hipLaunchAttributeCooperative;
    attrs[1].val.cooperative = 0;
    config.attrs = attrs;
    config.numAttrs = 2;
    EXPECT_OK(hipLaunchKernelEx(&config, scaled, out, 9, 2));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    expect_scaled(host, n, 9, 2.0f);
    attrs[1].id = hipLaunchAttributePriority;
    EXPECT_ERR(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(scaled), args),
               hipErrorInvalidConfiguration);
    config.attrs = nullptr;
    EXPECT_ERR(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(scaled), args),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLaunchKernelExC(nullptr, reinterpret_cast<const void*>(scaled), args),
               hipErrorInvalidConfiguration);
    EXPECT_ERR(hipLaunchKernelExC(&config, nullptr, args), hipErrorInvalidDeviceFunction);

    HIP_LAUNCH_CONFIG drv = {};
    drv.gridDimX = 2;
    drv.gridDimY = drv.gridDimZ = 1;
    drv.blockDimX = 64;
    drv.blockDimY = drv.blockDimZ = 1;
    drv.hStream = stream;
    CHECK(hipMemset(out, 0, n * sizeof(int)));
    EXPECT_OK(hipDrvLaunchKernelEx(&drv, f, mark_args, nullptr));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    marked = 0;
    for (int i = 0; i < n; ++i) marked += host[i];
    EXPECT_EQ(marked, 128);
    drv.blockDimX = 0;
    EXPECT_ERR(hipDrvLaunchKernelEx(&drv, f, mark_args, nullptr), hipErrorInvalidConfiguration);
    EXPECT_ERR(hipDrvLaunchKernelEx(nullptr, f, mark_args, nullptr), hipErrorInvalidValue);

    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipStreamDestroy(stream));
    CHECK(hipFree(out));
    return finish("launch_variants");
}
