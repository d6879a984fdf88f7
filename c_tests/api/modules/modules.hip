// modules: hipModuleLoad (file), hipModuleLoadData/Ex and hipModuleLoadFatBinary (bytes: a raw
// code object and an offload bundle), hipModuleGetFunction, hipModuleGetGlobal, hipModuleLaunchKernel with
// kernelParams and with the HIP_LAUNCH_PARAM_* extra buffer, function attributes,
// occupancy, hipModuleUnload and what becomes invalid after it.
// Run by tests/c_tests_api.rs with HIPSHIM_TEST_CODE_OBJECT (for the running target) and
// HIPSHIM_TEST_BUNDLE (both targets) set to files built from kernels.hip.
#include "../../check.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

__global__ void local_kernel(int* out) { out[threadIdx.x] = 1; }

static std::vector<char> read_file(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct Pair {
    int a;
    double b;
};

// Exercises one loaded module; returns with it still loaded.
static void exercise(hipModule_t module, const char* how) {
    std::printf("module from %s\n", how);
    hipFunction_t scale = nullptr, mixed = nullptr, reverse = nullptr, again = nullptr;
    EXPECT_OK(hipModuleGetFunction(&scale, module, "scale"));
    EXPECT_OK(hipModuleGetFunction(&again, module, "scale"));
    EXPECT_TRUE(scale == again);
    EXPECT_OK(hipModuleGetFunction(&mixed, module, "mixed"));
    EXPECT_OK(hipModuleGetFunction(&reverse, module, "reverse_lds"));
    EXPECT_ERR(hipModuleGetFunction(&again, module, "no_such_kernel"), hipErrorNotFound);
    EXPECT_ERR(hipModuleGetFunction(&again, module, ""), hipErrorInvalidValue);

    // The module's global: initial value, size, and a kernel's update.
    hipDeviceptr_t counter = nullptr;
    size_t size = 0;
    EXPECT_OK(hipModuleGetGlobal(&counter, &size, module, "module_counter"));
    EXPECT_EQ(size, sizeof(int));
    int value = 0;
    EXPECT_OK(hipMemcpyDtoH(&value, counter, sizeof value));
    EXPECT_EQ(value, 5);
    EXPECT_ERR(hipModuleGetGlobal(&counter, &size, module, "nope"), hipErrorNotFound);

    // kernelParams.
    const int n = 1000;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    float* data = nullptr;
    EXPECT_OK(hipMalloc(&data, n * sizeof(float)));
    EXPECT_OK(hipMemcpy(data, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
    float factor = 2.0f;
    int count = n;
    void* params[] = {&data, &factor, &count};
    EXPECT_OK(hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params,
                                    nullptr));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_OK(hipMemcpy(host.data(), data, n * sizeof(float), hipMemcpyDeviceToHost));
    EXPECT_TRUE(host[999] == 1998.0f && host[1] == 2.0f);
    EXPECT_OK(hipMemcpyDtoH(&value, counter, sizeof value));
    EXPECT_EQ(value, 6);

    // The extra buffer: explicit arguments at their kernarg offsets (char @0, Pair @8,
    // pointer @24), as a compiler lays them out.
    long long* out = nullptr;
    EXPECT_OK(hipMalloc(&out, 3 * sizeof(long long)));
    struct {
        char c;
        char pad[7];
        Pair p;
        long long* out;
    } packed = {};
    static_assert(sizeof(packed) == 32, "packed layout");
    packed.c = 'A';
    packed.p.a = -7;
    packed.p.b = 123.0;
    packed.out = out;
    size_t packed_size = sizeof packed;
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &packed_size, HIP_LAUNCH_PARAM_END};
    EXPECT_OK(hipModuleLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
    EXPECT_OK(hipDeviceSynchronize());
    long long got[3] = {};
    EXPECT_OK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
    EXPECT_EQ(got[0], 'A');
    EXPECT_EQ(got[1], -7);
    EXPECT_EQ(got[2], 123);
    // Malformed launches.
    size_t too_small = 8;
    void* short_extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                           &too_small, HIP_LAUNCH_PARAM_END};
    EXPECT_ERR(hipModuleLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, short_extra),
               hipErrorInvalidValue);
    void* bad_extra[] = {HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size, HIP_LAUNCH_PARAM_END};
    EXPECT_ERR(hipModuleLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, bad_extra),
               hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra),
               hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
               hipErrorInvalidValue);

    // Dynamic LDS and the kernel's own block limit.
    int* ints = nullptr;
    EXPECT_OK(hipMalloc(&ints, 128 * sizeof(int)));
    std::vector<int> seq(128);
    for (int i = 0; i < 128; ++i) seq[i] = i;
    EXPECT_OK(hipMemcpy(ints, seq.data(), 128 * sizeof(int), hipMemcpyHostToDevice));
    void* rparams[] = {&ints};
    EXPECT_OK(hipModuleLaunchKernel(reverse, 1, 1, 1, 128, 1, 1, 128 * sizeof(int), nullptr,
                                    rparams, nullptr));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_OK(hipMemcpy(seq.data(), ints, 128 * sizeof(int), hipMemcpyDeviceToHost));
    EXPECT_EQ(seq[0], 127);
    // Over the kernel's launch bounds: AMD's hipErrorLaunchFailure (every ROCm ABI).
    EXPECT_ERR(hipModuleLaunchKernel(reverse, 1, 1, 1, 256, 1, 1, 0, nullptr, rparams, nullptr),
               hipErrorLaunchFailure);
    EXPECT_ERR(hipModuleLaunchKernel(reverse, 1, 1, 1, 64, 1, 1, 1 << 20, nullptr, rparams,
                                     nullptr),
               hipErrorInvalidValue);

    // Attributes and occupancy.
    int attr = 0;
    EXPECT_OK(hipFuncGetAttribute(&attr, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, reverse));
    EXPECT_EQ(attr, 128);
    EXPECT_OK(hipFuncGetAttribute(&attr, HIP_FUNC_ATTRIBUTE_NUM_REGS, scale));
    EXPECT_TRUE(attr > 0);
    EXPECT_ERR(hipFuncGetAttribute(&attr, static_cast<hipFunction_attribute>(99), scale),
               hipErrorInvalidValue);
    int blocks = 0;
    EXPECT_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 256, 0));
    EXPECT_TRUE(blocks >= 1);
    EXPECT_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reverse, 256, 0));
    EXPECT_EQ(blocks, 0); // over the kernel's limit
    // The flags change nothing on AMD's GPUs.
    int plain = -1, flagged = -2;
    EXPECT_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&plain, scale, 64, 0));
    EXPECT_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &flagged, scale, 64, 0, hipOccupancyDisableCachingOverride));
    EXPECT_EQ(flagged, plain);
    EXPECT_ERR(hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(nullptr, scale, 64, 0,
                                                                           hipOccupancyDefault),
               hipErrorInvalidValue);
    // Any other flag is refused, as AMD's runtime refuses it.
    EXPECT_ERR(hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, scale, 64, 0, 2),
               hipErrorInvalidValue);
    int grid = 0, block = 0;
    EXPECT_OK(hipModuleOccupancyMaxPotentialBlockSize(&grid, &block, reverse, 0, 0));
    EXPECT_TRUE(block > 0 && block <= 128 && grid > 0);
    int flagged_grid = -1, flagged_block = -1;
    EXPECT_OK(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
        &flagged_grid, &flagged_block, reverse, 0, 0, hipOccupancyDisableCachingOverride));
    EXPECT_EQ(flagged_grid, grid);
    EXPECT_EQ(flagged_block, block);
    EXPECT_OK(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&flagged_grid, &flagged_block, scale,
                                                               0, 64, hipOccupancyDefault));
    EXPECT_TRUE(flagged_block > 0 && flagged_block <= 64);
    EXPECT_ERR(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&flagged_grid, &flagged_block,
                                                                reverse, 0, 0, 4),
               hipErrorInvalidValue);
    EXPECT_ERR(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(nullptr, &flagged_block, reverse,
                                                                0, 0, hipOccupancyDefault),
               hipErrorInvalidValue);

    EXPECT_OK(hipFree(data));
    EXPECT_OK(hipFree(out));
    EXPECT_OK(hipFree(ints));
}

int main() {
    const char* co_path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    const char* bundle_path = std::getenv("HIPSHIM_TEST_BUNDLE");
    if (co_path == nullptr || bundle_path == nullptr) {
        std::fprintf(stderr, "modules: set HIPSHIM_TEST_CODE_OBJECT and HIPSHIM_TEST_BUNDLE\n");
        return 2;
    }

    hipModule_t from_file = nullptr;
    EXPECT_OK(hipModuleLoad(&from_file, co_path));
    exercise(from_file, "hipModuleLoad(code object)");

    hipModule_t bundle_file = nullptr;
    EXPECT_OK(hipModuleLoad(&bundle_file, bundle_path));
    exercise(bundle_file, "hipModuleLoad(bundle)");

    std::vector<char> co = read_file(co_path);
    std::vector<char> bundle = read_file(bundle_path);
    EXPECT_TRUE(!co.empty() && !bundle.empty());
    hipModule_t from_data = nullptr, from_data_ex = nullptr;
    EXPECT_OK(hipModuleLoadData(&from_data, co.data()));
    exercise(from_data, "hipModuleLoadData(code object)");
    EXPECT_OK(hipModuleLoadDataEx(&from_data_ex, bundle.data(), 0, nullptr, nullptr));
    exercise(from_data_ex, "hipModuleLoadDataEx(bundle)");
    // hipModuleLoadFatBinary takes what hipModuleLoadData takes: an offload bundle here.
    hipModule_t from_fat_binary = nullptr;
    EXPECT_OK(hipModuleLoadFatBinary(&from_fat_binary, bundle.data()));
    exercise(from_fat_binary, "hipModuleLoadFatBinary(bundle)");
    EXPECT_OK(hipModuleUnload(from_fat_binary));
    hipModule_t no_module = nullptr;
    EXPECT_ERR(hipModuleLoadFatBinary(&no_module, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLoadFatBinary(nullptr, bundle.data()), hipErrorInvalidValue);

    // Each module has its own copy of the global.
    hipDeviceptr_t a = nullptr, b = nullptr;
    EXPECT_OK(hipModuleGetGlobal(&a, nullptr, from_file, "module_counter"));
    EXPECT_OK(hipModuleGetGlobal(&b, nullptr, from_data, "module_counter"));
    EXPECT_TRUE(a != b);

    // Unloading invalidates the module and its functions; others keep working.
    hipFunction_t scale = nullptr;
    EXPECT_OK(hipModuleGetFunction(&scale, from_file, "scale"));
    EXPECT_OK(hipModuleUnload(from_file));
    // AMD's answer to a module that is no longer loaded (a null one is an invalid handle).
    EXPECT_ERR(hipModuleUnload(from_file), hipErrorNotFound);
    EXPECT_ERR(hipModuleUnload(nullptr), hipErrorInvalidHandle);
    hipFunction_t f = nullptr;
    EXPECT_ERR(hipModuleGetFunction(&f, from_file, "scale"), hipErrorInvalidHandle);
    int attr = 0;
    EXPECT_ERR(hipFuncGetAttribute(&attr, HIP_FUNC_ATTRIBUTE_NUM_REGS, scale),
               hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
               hipErrorInvalidHandle);
    hipPointerAttribute_t pa;
    EXPECT_OK(hipPointerGetAttributes(&pa, a));
    EXPECT_EQ(pa.type, hipMemoryTypeUnregistered); // its global is gone too
    EXPECT_OK(hipModuleGetFunction(&f, from_data, "scale"));

    // Statically registered kernels: attributes and occupancy by host function.
    hipFuncAttributes fa;
    EXPECT_OK(hipFuncGetAttributes(&fa, reinterpret_cast<const void*>(&local_kernel)));
    EXPECT_EQ(fa.maxThreadsPerBlock, 1024);
    EXPECT_TRUE(fa.maxDynamicSharedSizeBytes > 0);
    int blocks = 0, grid = 0, block = 0;
    EXPECT_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, local_kernel, 256, 0));
    EXPECT_TRUE(blocks >= 1);
    EXPECT_OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, local_kernel, 0, 0));
    EXPECT_TRUE(block >= 64 && block <= 1024 && grid > 0);
    EXPECT_OK(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &blocks, reinterpret_cast<const void*>(&local_kernel), 256, 0,
        hipOccupancyDisableCachingOverride));
    EXPECT_TRUE(blocks >= 1);
    EXPECT_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                   &blocks, reinterpret_cast<const void*>(&local_kernel), 256, 0, 3),
               hipErrorInvalidValue);
    // The typed forms of the headers.
    int typed = -1, typed_grid = -1, typed_block = -1;
    EXPECT_OK(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&typed, local_kernel, 256, 0));
    EXPECT_EQ(typed, blocks);
    EXPECT_OK(hipOccupancyMaxPotentialBlockSizeWithFlags(&typed_grid, &typed_block, local_kernel));
    EXPECT_EQ(typed_grid, grid);
    EXPECT_EQ(typed_block, block);

    // Not code: a text file and garbage bytes.
    const char text[] = "this is not a code object, not even close......................";
    hipModule_t bad = nullptr;
    EXPECT_ERR(hipModuleLoadData(&bad, text), hipErrorInvalidImage);

    // An unload that waits for a faulted kernel reports the fault and has not unloaded:
    // called again, it unloads (a call that reports a fault did not do its own work).
    float* stray = reinterpret_cast<float*>(0x10);
    float factor = 2.0f;
    int n = 1;
    void* params[] = {&stray, &factor, &n};
    EXPECT_OK(hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    EXPECT_ERR(hipModuleUnload(from_data), hipErrorIllegalAddress);
    EXPECT_OK(hipModuleGetFunction(&f, from_data, "scale"));
    EXPECT_OK(hipModuleUnload(from_data));
    EXPECT_ERR(hipModuleUnload(from_data), hipErrorNotFound);
    // The null stream lost its kernel: it owes the fault to its own next synchronize, once.
    EXPECT_ERR(hipStreamSynchronize(nullptr), hipErrorIllegalAddress);
    EXPECT_OK(hipStreamSynchronize(nullptr));

    EXPECT_OK(hipModuleUnload(bundle_file));
    EXPECT_OK(hipModuleUnload(from_data_ex));
    return finish("modules");
}
