// library: hipLibraryLoadData and hipLibraryLoadFromFile (a raw code object and an offload
// bundle), hipLibraryGetKernelCount, hipLibraryEnumerateKernels, hipLibraryGetKernel,
// hipKernelGetName, hipKernelGetLibrary, a launch of a hipKernel_t through
// hipModuleLaunchKernel, hipModuleGetFunctionCount, hipLibraryUnload and what becomes invalid
// after it, and the error of each bad input.
// Run by tests/c_tests_api.rs with HIPSHIM_TEST_CODE_OBJECT (for the running target) and
// HIPSHIM_TEST_BUNDLE (both targets) set to files built from kernels.hip.
#include "../../check.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

static std::vector<char> read_file(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The kernels of kernels.hip.
static const char* const kernel_names[] = {"scale", "mixed", "reverse_lds"};
static const unsigned kernel_count = 3;

// Never a handle hipshim issues (those are never reused and tagged by kind).
static hipKernel_t const sentinel = reinterpret_cast<hipKernel_t>(0x5e17);

// Runs `scale` (data[i] *= factor) through the kernel handle, as a hipFunction_t.
static void launch_scale(hipKernel_t scale) {
    const int n = 300;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    float* data = nullptr;
    CHECK(hipMalloc(&data, n * sizeof(float)));
    EXPECT_OK(hipMemcpy(data, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
    float factor = 3.0f;
    int count = n;
    void* params[] = {&data, &factor, &count};
    EXPECT_OK(hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(scale), (n + 127) / 128, 1, 1,
                                    128, 1, 1, 0, nullptr, params, nullptr));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_OK(hipMemcpy(host.data(), data, n * sizeof(float), hipMemcpyDeviceToHost));
    EXPECT_TRUE(host[1] == 3.0f && host[299] == 897.0f);
    EXPECT_OK(hipFree(data));
}

// Exercises one loaded library; returns with it still loaded.
static void exercise(hipLibrary_t library, const char* how) {
    std::printf("library from %s\n", how);
    unsigned count = 0;
    EXPECT_OK(hipLibraryGetKernelCount(&count, library));
    EXPECT_EQ(count, kernel_count);

    // Room for more than there are: every kernel once, nothing written past them.
    hipKernel_t all[kernel_count + 1] = {nullptr, nullptr, nullptr, sentinel};
    EXPECT_OK(hipLibraryEnumerateKernels(all, kernel_count + 1, library));
    EXPECT_TRUE(all[kernel_count] == sentinel);
    hipKernel_t by_name[kernel_count] = {};
    for (unsigned i = 0; i < kernel_count; ++i) {
        const char* name = nullptr;
        EXPECT_OK(hipKernelGetName(&name, all[i]));
        hipLibrary_t back = nullptr;
        EXPECT_OK(hipKernelGetLibrary(&back, all[i]));
        EXPECT_TRUE(back == library);
        for (unsigned k = 0; k < kernel_count; ++k) {
            if (name != nullptr && std::strcmp(name, kernel_names[k]) == 0) {
                EXPECT_TRUE(by_name[k] == nullptr); // each name once
                by_name[k] = all[i];
            }
        }
    }
    for (unsigned k = 0; k < kernel_count; ++k) {
        EXPECT_TRUE(by_name[k] != nullptr);
        // By name: the handle enumeration gave, on every call.
        hipKernel_t kernel = nullptr;
        EXPECT_OK(hipLibraryGetKernel(&kernel, library, kernel_names[k]));
        EXPECT_TRUE(kernel == by_name[k]);
    }

    // A smaller array gets the first kernels and nothing beyond its room; none for room 0.
    hipKernel_t two[3] = {nullptr, nullptr, sentinel};
    EXPECT_OK(hipLibraryEnumerateKernels(two, 2, library));
    EXPECT_TRUE(two[0] == all[0] && two[1] == all[1] && two[2] == sentinel);
    hipKernel_t none[1] = {sentinel};
    EXPECT_OK(hipLibraryEnumerateKernels(none, 0, library));
    EXPECT_TRUE(none[0] == sentinel);

    // A hipKernel_t is usable where a hipFunction_t is.
    hipKernel_t scale = by_name[0];
    launch_scale(scale);
    int regs = 0;
    EXPECT_OK(hipFuncGetAttribute(&regs, HIP_FUNC_ATTRIBUTE_NUM_REGS,
                                  reinterpret_cast<hipFunction_t>(scale)));
    EXPECT_TRUE(regs > 0);

    // Names that are no kernel of it: unknown, a device variable, the descriptor's symbol.
    hipKernel_t kernel = sentinel;
    EXPECT_ERR(hipLibraryGetKernel(&kernel, library, "no_such_kernel"), hipErrorNotFound);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, library, "module_counter"), hipErrorNotFound);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, library, "scale.kd"), hipErrorNotFound);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, library, ""), hipErrorNotFound);
    EXPECT_TRUE(kernel == sentinel);
    // Null pointers.
    EXPECT_ERR(hipLibraryGetKernel(nullptr, library, "scale"), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, library, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryGetKernelCount(nullptr, library), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryEnumerateKernels(nullptr, kernel_count, library), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryEnumerateKernels(nullptr, 0, library), hipErrorInvalidValue);
    EXPECT_ERR(hipKernelGetName(nullptr, scale), hipErrorInvalidValue);
    EXPECT_ERR(hipKernelGetLibrary(nullptr, scale), hipErrorInvalidValue);
    // A library is not a module.
    hipFunction_t f = nullptr;
    EXPECT_ERR(hipModuleGetFunction(&f, reinterpret_cast<hipModule_t>(library), "scale"),
               hipErrorInvalidHandle);
}

int main() {
    const char* co_path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    const char* bundle_path = std::getenv("HIPSHIM_TEST_BUNDLE");
    if (co_path == nullptr || bundle_path == nullptr) {
        std::fprintf(stderr, "library: set HIPSHIM_TEST_CODE_OBJECT and HIPSHIM_TEST_BUNDLE\n");
        return 2;
    }
    std::vector<char> co = read_file(co_path);
    std::vector<char> bundle = read_file(bundle_path);
    CHECK(co.empty() || bundle.empty() ? hipErrorFileNotFound : hipSuccess);

    hipLibrary_t from_data = nullptr, from_file = nullptr, bundle_data = nullptr,
                 bundle_file = nullptr;
    EXPECT_OK(hipLibraryLoadData(&from_data, co.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    exercise(from_data, "hipLibraryLoadData(code object)");
    EXPECT_OK(hipLibraryLoadFromFile(&from_file, co_path, nullptr, nullptr, 0, nullptr, nullptr, 0));
    exercise(from_file, "hipLibraryLoadFromFile(code object)");
    // Library options are hints hipshim has no use for: accepted.
    hipLibraryOption preserved = hipLibraryBinaryIsPreserved;
    void* preserved_value = nullptr;
    EXPECT_OK(hipLibraryLoadData(&bundle_data, bundle.data(), nullptr, nullptr, 0, &preserved,
                                 &preserved_value, 1));
    exercise(bundle_data, "hipLibraryLoadData(bundle)");
    EXPECT_OK(hipLibraryLoadFromFile(&bundle_file, bundle_path, nullptr, nullptr, 0, nullptr,
                                     nullptr, 0));
    exercise(bundle_file, "hipLibraryLoadFromFile(bundle)");
    EXPECT_TRUE(from_data != from_file && from_data != bundle_data);

    // Each library has kernel handles of its own.
    hipKernel_t a = nullptr, b = nullptr;
    EXPECT_OK(hipLibraryGetKernel(&a, from_data, "scale"));
    EXPECT_OK(hipLibraryGetKernel(&b, from_file, "scale"));
    EXPECT_TRUE(a != b);

    // hipModuleGetFunctionCount, and a module's function is no library's kernel.
    hipModule_t module = nullptr;
    EXPECT_OK(hipModuleLoadData(&module, co.data()));
    unsigned functions = 0;
    EXPECT_OK(hipModuleGetFunctionCount(&functions, module));
    EXPECT_EQ(functions, kernel_count);
    EXPECT_ERR(hipModuleGetFunctionCount(nullptr, module), hipErrorInvalidValue);
    EXPECT_ERR(hipModuleGetFunctionCount(&functions, nullptr), hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleGetFunctionCount(&functions, reinterpret_cast<hipModule_t>(from_data)),
               hipErrorInvalidHandle);
    hipFunction_t module_scale = nullptr;
    EXPECT_OK(hipModuleGetFunction(&module_scale, module, "scale"));
    const char* name = nullptr;
    hipLibrary_t owner = nullptr;
    EXPECT_ERR(hipKernelGetName(&name, reinterpret_cast<hipKernel_t>(module_scale)),
               hipErrorInvalidHandle);
    EXPECT_ERR(hipKernelGetLibrary(&owner, reinterpret_cast<hipKernel_t>(module_scale)),
               hipErrorInvalidHandle);
    EXPECT_OK(hipModuleUnload(module));
    EXPECT_ERR(hipModuleGetFunctionCount(&functions, module), hipErrorInvalidHandle);

    // Bad loads.
    hipLibrary_t bad = nullptr;
    EXPECT_ERR(hipLibraryLoadData(nullptr, co.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryLoadData(&bad, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    const char text[] = "this is not a code object, not even close......................";
    EXPECT_ERR(hipLibraryLoadData(&bad, text, nullptr, nullptr, 0, nullptr, nullptr, 0),
               hipErrorInvalidImage);
    hipJitOption jit = hipJitOptionMaxRegisters;
    void* jit_value = nullptr;
    EXPECT_ERR(hipLibraryLoadData(&bad, co.data(), &jit, &jit_value, 1, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryLoadFromFile(&bad, co_path, &jit, &jit_value, 1, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryLoadFromFile(&bad, "/nonexistent/library.co", nullptr, nullptr, 0,
                                      nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryLoadFromFile(&bad, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryLoadFromFile(nullptr, co_path, nullptr, nullptr, 0, nullptr, nullptr, 0),
               hipErrorInvalidValue);
    EXPECT_TRUE(bad == nullptr);

    // Null and made-up handles.
    hipLibrary_t made_up = reinterpret_cast<hipLibrary_t>(0x5e10);
    unsigned count = 0;
    hipKernel_t kernel = nullptr;
    hipKernel_t room[1] = {sentinel};
    EXPECT_ERR(hipLibraryGetKernelCount(&count, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, nullptr, "scale"), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryEnumerateKernels(room, 1, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipLibraryUnload(nullptr), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryGetKernelCount(&count, made_up), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, made_up, "scale"), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryEnumerateKernels(room, 1, made_up), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryUnload(made_up), hipErrorInvalidHandle);
    EXPECT_TRUE(room[0] == sentinel);
    EXPECT_ERR(hipKernelGetName(&name, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipKernelGetLibrary(&owner, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipKernelGetName(&name, sentinel), hipErrorInvalidHandle);
    EXPECT_ERR(hipKernelGetLibrary(&owner, sentinel), hipErrorInvalidHandle);

    // Unloading ends the library and its kernels; the others keep working.
    EXPECT_OK(hipLibraryUnload(from_data));
    EXPECT_ERR(hipLibraryUnload(from_data), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryGetKernelCount(&count, from_data), hipErrorInvalidHandle);
    EXPECT_ERR(hipLibraryGetKernel(&kernel, from_data, "scale"), hipErrorInvalidHandle);
    EXPECT_ERR(hipKernelGetName(&name, a), hipErrorInvalidHandle);
    EXPECT_ERR(hipKernelGetLibrary(&owner, a), hipErrorInvalidHandle);
    EXPECT_ERR(hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(a), 1, 1, 1, 1, 1, 1, 0,
                                     nullptr, nullptr, nullptr),
               hipErrorInvalidHandle);
    EXPECT_OK(hipKernelGetName(&name, b));
    EXPECT_TRUE(name != nullptr && std::strcmp(name, "scale") == 0);
    EXPECT_OK(hipKernelGetLibrary(&owner, b));
    EXPECT_TRUE(owner == from_file);
    launch_scale(b);

    EXPECT_OK(hipLibraryUnload(from_file));
    EXPECT_OK(hipLibraryUnload(bundle_data));
    EXPECT_OK(hipLibraryUnload(bundle_file));
    EXPECT_ERR(hipKernelGetName(&name, b), hipErrorInvalidHandle);
    return finish("library");
}
