// driver_entry_point: hipGetDriverEntryPoint(_spt) returns the address of this library's export
// by name (callable, equal to the function's own address), the _spt form under
// hipEnablePerThreadDefaultStream where one exists (the _spt call's default), and refuses
// unknown and empty names, null out-pointers and unknown flags with hipErrorInvalidValue.
#include <hip/hip_runtime.h>

#include <cstdio>

#include "../check.h"

static void* entry(const char* name, unsigned long long flags, bool spt = false) {
    void* fn = nullptr;
    hipDriverEntryPointQueryResult status = hipDriverEntryPointVersionNotSufficent;
    hipError_t e = spt ? hipGetDriverEntryPoint_spt(name, &fn, flags, &status)
                       : hipGetDriverEntryPoint(name, &fn, flags, &status);
    if (e != hipSuccess || status != hipDriverEntryPointSuccess || fn == nullptr) {
        std::fprintf(stderr, "FAIL %s (flags %llu, spt %d): %s, status %d\n", name, flags, spt,
                     err_name(e), static_cast<int>(status));
        ++failures;
    }
    return fn;
}

int main() {
    // The address is the function's, and it works.
    void* count_fn = entry("hipGetDeviceCount", hipEnableDefault);
    EXPECT_TRUE(count_fn == reinterpret_cast<void*>(&hipGetDeviceCount));
    if (count_fn != nullptr) {
        int via_pointer = -1, direct = -2;
        auto get_count = reinterpret_cast<hipError_t (*)(int*)>(count_fn);
        EXPECT_OK(get_count(&via_pointer));
        CHECK(hipGetDeviceCount(&direct));
        EXPECT_EQ(via_pointer, direct);
    }
    EXPECT_TRUE(entry("hipGetDeviceCount", hipEnableLegacyStream) == count_fn);
    // No _spt form: the per-thread search finds the call itself.
    EXPECT_TRUE(entry("hipGetDeviceCount", hipEnablePerThreadDefaultStream) == count_fn);
    EXPECT_TRUE(entry("hipGetDeviceCount", hipEnableDefault, true) == count_fn);

    // A call with an _spt form.
    void* plain = entry("hipMemcpyAsync", hipEnableDefault);
    void* per_thread = entry("hipMemcpyAsync_spt", hipEnableDefault);
    EXPECT_TRUE(plain == reinterpret_cast<void*>(&hipMemcpyAsync));
    EXPECT_TRUE(plain != per_thread);
    EXPECT_TRUE(entry("hipMemcpyAsync", hipEnableLegacyStream) == plain);
    EXPECT_TRUE(entry("hipMemcpyAsync", hipEnablePerThreadDefaultStream) == per_thread);
    EXPECT_TRUE(entry("hipMemcpyAsync", hipEnableDefault, true) == per_thread);
    EXPECT_TRUE(entry("hipMemcpyAsync", hipEnableLegacyStream, true) == plain);

    // The status is optional.
    void* fn = nullptr;
    EXPECT_OK(hipGetDriverEntryPoint("hipMalloc", &fn, hipEnableDefault, nullptr));
    EXPECT_TRUE(fn == reinterpret_cast<void*>(static_cast<hipError_t (*)(void**, size_t)>(&hipMalloc)));

    // Unknown names say why.
    hipDriverEntryPointQueryResult status = hipDriverEntryPointSuccess;
    fn = nullptr;
    EXPECT_ERR(hipGetDriverEntryPoint("hipNoSuchCall", &fn, hipEnableDefault, &status),
               hipErrorInvalidValue);
    EXPECT_EQ(static_cast<int>(status), static_cast<int>(hipDriverEntryPointSymbolNotFound));
    EXPECT_TRUE(fn == nullptr);
    status = hipDriverEntryPointSuccess;
    EXPECT_ERR(hipGetDriverEntryPoint_spt("hipNoSuchCall", &fn, hipEnableDefault, &status),
               hipErrorInvalidValue);
    EXPECT_EQ(static_cast<int>(status), static_cast<int>(hipDriverEntryPointSymbolNotFound));
    // Not a HIP export, though the process has it.
    EXPECT_ERR(hipGetDriverEntryPoint("malloc", &fn, hipEnableDefault, nullptr),
               hipErrorInvalidValue);

    EXPECT_ERR(hipGetDriverEntryPoint("", &fn, hipEnableDefault, &status), hipErrorInvalidValue);
    EXPECT_ERR(hipGetDriverEntryPoint(nullptr, &fn, hipEnableDefault, &status),
               hipErrorInvalidValue);
    EXPECT_ERR(hipGetDriverEntryPoint("hipMalloc", nullptr, hipEnableDefault, &status),
               hipErrorInvalidValue);
    EXPECT_ERR(hipGetDriverEntryPoint("hipMalloc", &fn, 3, &status), hipErrorInvalidValue);
    EXPECT_ERR(hipGetDriverEntryPoint_spt("hipMalloc", &fn, ~0ull, &status),
               hipErrorInvalidValue);
    return finish("driver_entry_point");
}
