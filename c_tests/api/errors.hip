// errors: every negative case of issue 5's Errors section returns the documented error and
// the process keeps working: invalid handles (never-handles and unloaded ones), invalid
// launch configurations, null pointers, oversize allocations, out-of-range devices; error
// names and strings for every value.
#include "../check.h"

#include <cstring>

// amdgpu_flat_work_group_size rather than __launch_bounds__: hipshim's headers spell the
// latter as CUDA's launch_bounds attribute, which clang ignores for AMDGPU.
__global__ void __attribute__((amdgpu_flat_work_group_size(1, 256))) bounded(int* out) { out[threadIdx.x] = threadIdx.x; }

__global__ void uses_lds(int* out) {
    extern __shared__ int dynamic[];
    dynamic[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = dynamic[blockDim.x - 1 - threadIdx.x];
}

int main() {
    int count = 0;
    EXPECT_OK(hipGetDeviceCount(&count));
    int* out = nullptr;
    EXPECT_OK(hipMalloc(&out, 1024 * sizeof(int)));

    // Out-of-range device ordinals.
    EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
    EXPECT_ERR(hipSetDevice(-1), hipErrorInvalidDevice);
    hipDeviceProp_t props;
    EXPECT_ERR(hipGetDeviceProperties(&props, count), hipErrorInvalidDevice);
    EXPECT_ERR(hipGetDeviceProperties(&props, -3), hipErrorInvalidDevice);
    char name[64];
    EXPECT_ERR(hipDeviceGetName(name, sizeof name, count), hipErrorInvalidDevice);
    size_t bytes = 0;
    EXPECT_ERR(hipDeviceTotalMem(&bytes, count), hipErrorInvalidDevice);
    int major = 0, minor = 0;
    EXPECT_ERR(hipDeviceComputeCapability(&major, &minor, count), hipErrorInvalidDevice);
    hipDevice_t dev = 0;
    EXPECT_ERR(hipDeviceGet(&dev, count), hipErrorInvalidDevice);
    char bus[16];
    EXPECT_ERR(hipDeviceGetPCIBusId(bus, sizeof bus, count), hipErrorInvalidDevice);

    // Null pointers.
    EXPECT_ERR(hipGetDeviceProperties(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetName(nullptr, 10, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetName(name, 0, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocPitch(nullptr, &bytes, 10, 10), hipErrorInvalidValue);
    EXPECT_ERR(hipHostMalloc(static_cast<void**>(nullptr), 10, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocManaged(static_cast<void**>(nullptr), 10), hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetInfo(nullptr, nullptr), hipSuccess);
    EXPECT_ERR(hipPointerGetAttributes(nullptr, out), hipErrorInvalidValue);
    hipPointerAttribute_t attr;
    EXPECT_ERR(hipPointerGetAttributes(&attr, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipMemset(nullptr, 0, 16), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy2D(nullptr, 16, out, 16, 16, 2, hipMemcpyDeviceToDevice),
               hipErrorInvalidValue);
    EXPECT_ERR(hipHostRegister(nullptr, 64, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipHostUnregister(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipHostGetDevicePointer(nullptr, out, 0), hipErrorInvalidValue);
    hipModule_t module = nullptr;
    EXPECT_ERR(hipModuleLoad(&module, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLoad(nullptr, "x"), hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLoadData(&module, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipFuncGetAttributes(nullptr, reinterpret_cast<const void*>(&bounded)),
               hipErrorInvalidValue);

    // Oversize allocations: more than the device has.
    void* p = nullptr;
    EXPECT_ERR(hipMalloc(&p, (size_t)1 << 50), hipErrorOutOfMemory);
    EXPECT_TRUE(p == nullptr);
    EXPECT_ERR(hipMalloc(&p, SIZE_MAX), hipErrorOutOfMemory);
    EXPECT_ERR(hipMallocPitch(&p, &bytes, (size_t)1 << 40, (size_t)1 << 20), hipErrorOutOfMemory);
    EXPECT_ERR(hipMallocManaged(&p, (size_t)1 << 50), hipErrorOutOfMemory);
    EXPECT_ERR(hipPeekAtLastError(), hipSuccess);

    // Host memory errors: bad flags, double registration, unregistering what is not.
    EXPECT_ERR(hipHostMalloc(&p, 64, hipHostMallocCoherent | hipHostMallocNonCoherent),
               hipErrorInvalidValue);
    EXPECT_ERR(hipHostMalloc(&p, 64, 0x100), hipErrorInvalidValue);
    EXPECT_ERR(hipHostAlloc(&p, 64, hipHostMallocCoherent), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocManaged(&p, 64, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocManaged(&p, 0), hipErrorInvalidValue);
    static char page[8192];
    EXPECT_OK(hipHostRegister(page, sizeof page, 0));
    // Another registration at the same address replaces it (AMD's runtime does not check;
    // memory freed without hipHostUnregister is registered again at its address): one
    // hipHostUnregister then ends it. Any other overlap is refused.
    EXPECT_OK(hipHostRegister(page, sizeof page / 2, hipHostRegisterMapped));
    EXPECT_OK(hipHostRegister(page, sizeof page, 0));
    EXPECT_ERR(hipHostRegister(page + 100, 10, 0), hipErrorHostMemoryAlreadyRegistered);
    EXPECT_ERR(hipHostRegister(page, sizeof page, 0x100), hipErrorInvalidValue);
    EXPECT_OK(hipHostUnregister(page));
    EXPECT_ERR(hipHostUnregister(page), hipErrorHostMemoryNotRegistered);
    EXPECT_ERR(hipHostGetDevicePointer(&p, page, 0), hipErrorInvalidValue);
    unsigned flags = 0;
    EXPECT_ERR(hipHostGetFlags(&flags, out), hipErrorInvalidValue);
    EXPECT_ERR(hipHostFree(out), hipErrorInvalidValue); // device memory is not host memory
    EXPECT_ERR(hipHostFree(page), hipErrorInvalidValue);
    size_t size = 0;
    EXPECT_ERR(hipMemPtrGetInfo(page, &size), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy(out, page, 1 << 20, hipMemcpyHostToDevice), hipErrorInvalidValue);
    EXPECT_ERR(hipMemset(page, 0, 16), hipErrorInvalidValue);
    EXPECT_ERR(hipMemset(out, 0, 1 << 20), hipErrorInvalidValue); // past the allocation

    // Module and function handles that were never handles, or are gone.
    int junk[16] = {};
    hipModule_t fake_module = reinterpret_cast<hipModule_t>(junk);
    hipFunction_t fake_function = reinterpret_cast<hipFunction_t>(junk);
    hipFunction_t function = nullptr;
    EXPECT_ERR(hipModuleGetFunction(&function, fake_module, "k"), hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleGetFunction(&function, nullptr, "k"), hipErrorInvalidHandle);
    // AMD's runtime looks an unloaded module up in its table: not there is not found.
    EXPECT_ERR(hipModuleUnload(fake_module), hipErrorNotFound);
    EXPECT_ERR(hipModuleUnload(nullptr), hipErrorInvalidHandle);
    hipDeviceptr_t global = nullptr;
    EXPECT_ERR(hipModuleGetGlobal(&global, &size, fake_module, "g"), hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleLaunchKernel(fake_function, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr,
                                     nullptr),
               hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
               hipErrorInvalidHandle);
    int value = 0;
    EXPECT_ERR(hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_NUM_REGS, fake_function),
               hipErrorInvalidHandle);
    int blocks = 0;
    EXPECT_ERR(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fake_function, 64, 0),
               hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleLoad(&module, "/nonexistent/kernels.co"), hipErrorFileNotFound);
    EXPECT_ERR(hipModuleLoadData(&module, junk), hipErrorInvalidImage);
    // Launch of a host pointer that is no kernel.
    void* args[] = {&out};
    EXPECT_ERR(hipLaunchKernel(reinterpret_cast<const void*>(junk), dim3(1), dim3(1), args, 0,
                               nullptr),
               hipErrorInvalidDeviceFunction);
    EXPECT_ERR(hipLaunchKernel(nullptr, dim3(1), dim3(1), args, 0, nullptr),
               hipErrorInvalidDeviceFunction);
    hipFuncAttributes fa;
    EXPECT_ERR(hipFuncGetAttributes(&fa, junk), hipErrorInvalidDeviceFunction);
    EXPECT_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void*)junk, 64, 0),
               hipErrorInvalidDeviceFunction);

    // The dynamic LDS that still lets N blocks run on one CU: with it N fit, with a byte more
    // fewer; bad counts, sizes and functions are refused.
    const void* plain = reinterpret_cast<const void*>(&bounded);
    size_t avail = 0;
    EXPECT_OK(hipOccupancyAvailableDynamicSMemPerBlock(&avail, plain, 2, 64));
    EXPECT_TRUE(avail > 0 && avail <= 32768);
    int fit = 0;
    EXPECT_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&fit, plain, 64, avail));
    EXPECT_TRUE(fit >= 2);
    EXPECT_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&fit, plain, 64, avail + 1));
    EXPECT_TRUE(fit < 2);
    EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(nullptr, plain, 2, 64), hipErrorInvalidValue);
    EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail, plain, 0, 64), hipErrorInvalidValue);
    EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail, plain, 2, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail, plain, 2, 1 << 20),
               hipErrorInvalidValue);
    EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail, (const void*)junk, 2, 64),
               hipErrorInvalidDeviceFunction);

    // Invalid launch configurations.
    const void* k = reinterpret_cast<const void*>(&bounded);
    // An argument array with a null entry, or none at all, for a kernel that takes one: an
    // error, and nothing is launched.
    void* null_arg[] = {nullptr};
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(64), null_arg, 0, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(64), nullptr, 0, nullptr), hipErrorInvalidValue);
    // The ROCm 6 profile's codes (the program links libamdhip64.so.6); c_tests/compat/
    // launch_errors covers every profile.
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(2048), args, 0, nullptr),
               hipErrorInvalidValue); // over 1024 threads
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(512), args, 0, nullptr),
               hipErrorLaunchFailure); // over the kernel's __launch_bounds__(256)
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(16, 16, 2), args, 0, nullptr),
               hipErrorLaunchFailure);
    EXPECT_ERR(hipLaunchKernel(k, dim3(0), dim3(64), args, 0, nullptr),
               hipErrorInvalidConfiguration); // zero grid
    EXPECT_ERR(hipLaunchKernel(k, dim3(1, 0, 1), dim3(64), args, 0, nullptr),
               hipErrorInvalidConfiguration);
    EXPECT_ERR(hipLaunchKernel(k, dim3(1), dim3(64, 1, 0), args, 0, nullptr),
               hipErrorInvalidConfiguration); // zero block
    int lds = 0;
    EXPECT_OK(hipDeviceGetAttribute(&lds, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
    const void* l = reinterpret_cast<const void*>(&uses_lds);
    EXPECT_ERR(hipLaunchKernel(l, dim3(1), dim3(64), args, (size_t)lds + 1, nullptr),
               hipErrorInvalidValue); // more shared memory than the device has
    uses_lds<<<1, 64, (size_t)lds * 2>>>(out);
    EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);
    bounded<<<1, 1024>>>(out);
    EXPECT_ERR(hipGetLastError(), hipErrorLaunchFailure);
    // The kernels still work with valid configurations, dynamic LDS included.
    bounded<<<1, 256>>>(out);
    EXPECT_OK(hipGetLastError());
    uses_lds<<<1, 128, 128 * sizeof(int)>>>(out);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipDeviceSynchronize());
    int host[128];
    EXPECT_OK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host[0], 127);
    EXPECT_EQ(host[127], 0);

    // Copy directions and kinds.
    EXPECT_ERR(hipMemcpy(out, host, 16, static_cast<hipMemcpyKind>(7)),
               hipErrorInvalidMemcpyDirection);
    EXPECT_ERR(hipMemcpy2D(out, 16, host, 16, 16, 1, static_cast<hipMemcpyKind>(9)),
               hipErrorInvalidMemcpyDirection);

    // Device attributes and limits.
    EXPECT_ERR(hipDeviceGetAttribute(&value, static_cast<hipDeviceAttribute_t>(-1), 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceSetLimit(static_cast<hipLimit_t>(42), 1), hipErrorUnsupportedLimit);

    // Names and strings for every value; unknown values still give text.
    const hipError_t all[] = {
        hipSuccess, hipErrorInvalidValue, hipErrorOutOfMemory, hipErrorNotInitialized,
        hipErrorInvalidConfiguration, hipErrorInvalidPitchValue, hipErrorInvalidSymbol,
        hipErrorInvalidDevicePointer, hipErrorInvalidMemcpyDirection,
        hipErrorInvalidDeviceFunction, hipErrorNoDevice, hipErrorInvalidDevice,
        hipErrorInvalidImage, hipErrorNoBinaryForGpu, hipErrorUnsupportedLimit,
        hipErrorFileNotFound, hipErrorInvalidHandle, hipErrorNotFound, hipErrorNotReady,
        hipErrorIllegalAddress, hipErrorLaunchOutOfResources,
        hipErrorPeerAccessAlreadyEnabled, hipErrorPeerAccessNotEnabled,
        hipErrorHostMemoryAlreadyRegistered, hipErrorHostMemoryNotRegistered,
        hipErrorLaunchFailure, hipErrorNotSupported, hipErrorInvalidChannelDescriptor,
        hipErrorInvalidTexture, hipErrorUnknown, hipErrorRuntimeMemory, hipErrorRuntimeOther};
    for (hipError_t e : all) {
        const char* n = hipGetErrorName(e);
        const char* s = hipGetErrorString(e);
        if (n == nullptr || std::strncmp(n, "hip", 3) != 0 ||
            (e != hipErrorUnknown && std::strcmp(n, "hipErrorUnknown") == 0) || s == nullptr ||
            s[0] == '\0') {
            std::fprintf(stderr, "FAIL error %d has name %s and string %s\n", (int)e,
                         n ? n : "(null)", s ? s : "(null)");
            ++failures;
        }
    }
    EXPECT_TRUE(std::strcmp(hipGetErrorName(hipErrorHostMemoryAlreadyRegistered),
                            "hipErrorHostMemoryAlreadyRegistered") == 0);
    EXPECT_TRUE(hipGetErrorString(static_cast<hipError_t>(4242)) != nullptr);

    // After all of that, the device still works.
    EXPECT_OK(hipMemset(out, 1, 64));
    EXPECT_OK(hipFree(out));
    return finish("errors");
}
