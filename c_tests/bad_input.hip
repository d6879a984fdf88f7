// hipshim-test: targets=gfx942
//
// bad_input: the runtime answers bad arguments with AMD's error codes instead
// of crashing, and keeps the per-thread last error the way AMD documents it.
// Every check runs; each failure is printed; the exit status is 1 if any failed.
#include "check.h"

#include <cstdio>
#include <cstring>

static bool non_empty(const char* s) { return s != nullptr && s[0] != '\0'; }

int main() {
    // A working device and a real allocation to contrast with the bad inputs.
    int count = 0;
    EXPECT_ERR(hipGetDeviceCount(&count), hipSuccess);
    EXPECT_TRUE(count >= 1);
    EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
    EXPECT_ERR(hipSetDevice(0), hipSuccess);

    const size_t n = 4096;
    char* dev = nullptr;
    EXPECT_ERR(hipMalloc(&dev, n), hipSuccess);
    EXPECT_TRUE(dev != nullptr);
    char host[4096];
    std::memset(host, 7, sizeof host);

    // hipMalloc with nowhere to store the pointer.
    EXPECT_ERR_KEEP(hipMalloc(nullptr, n), hipErrorInvalidValue);

    // Last error: peek leaves it, get returns and clears it.
    EXPECT_ERR_KEEP(hipPeekAtLastError(), hipErrorInvalidValue);
    EXPECT_ERR_KEEP(hipPeekAtLastError(), hipErrorInvalidValue); // not cleared
    EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);
    EXPECT_ERR(hipGetLastError(), hipSuccess); // cleared
    EXPECT_ERR(hipPeekAtLastError(), hipSuccess);

    // hipFree: null is a no-op; anything it did not hand out is rejected.
    EXPECT_ERR(hipFree(nullptr), hipSuccess);
    EXPECT_ERR(hipFree(host), hipErrorInvalidValue);
    EXPECT_ERR(hipFree(dev + 16), hipErrorInvalidValue);

    // hipMemcpy with null pointers: an error, not a crash.
    EXPECT_ERR(hipMemcpy(nullptr, host, n, hipMemcpyHostToDevice), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy(host, nullptr, n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy(dev, nullptr, n, hipMemcpyDeviceToDevice), hipErrorInvalidValue);

    // A copy kind outside hipMemcpyKind: AMD (and CUDA) call this an invalid
    // copy direction.
    EXPECT_ERR(hipMemcpy(dev, host, n, static_cast<hipMemcpyKind>(42)),
               hipErrorInvalidMemcpyDirection);

    // The valid copy still works after all that.
    EXPECT_ERR(hipMemcpy(dev, host, n, hipMemcpyHostToDevice), hipSuccess);
    char back[4096] = {};
    EXPECT_ERR(hipMemcpy(back, dev, n, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_TRUE(std::memcmp(back, host, n) == 0);

    // Freeing twice: the second free names a pointer that is no longer live.
    EXPECT_ERR(hipFree(dev), hipSuccess);
    EXPECT_ERR(hipFree(dev), hipErrorInvalidValue);

    // Output parameters must not be null.
    EXPECT_ERR(hipGetDeviceCount(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipRuntimeGetVersion(nullptr), hipErrorInvalidValue);

    // Error names are the enumerator spellings; strings are human text.
    EXPECT_TRUE(std::strcmp(err_name(hipSuccess), "hipSuccess") == 0);
    EXPECT_TRUE(std::strcmp(err_name(hipErrorInvalidValue), "hipErrorInvalidValue") == 0);
    EXPECT_TRUE(std::strcmp(err_name(hipErrorNoBinaryForGpu), "hipErrorNoBinaryForGpu") == 0);
    EXPECT_TRUE(std::strcmp(err_name(hipErrorInvalidMemcpyDirection),
                            "hipErrorInvalidMemcpyDirection") == 0);
    EXPECT_TRUE(non_empty(hipGetErrorString(hipSuccess)));
    EXPECT_TRUE(non_empty(hipGetErrorString(hipErrorInvalidValue)));
    EXPECT_TRUE(non_empty(hipGetErrorString(hipErrorInvalidValue)) &&
                std::strcmp(hipGetErrorString(hipErrorInvalidValue),
                            "hipErrorInvalidValue") != 0);
    EXPECT_TRUE(non_empty(hipGetErrorName(static_cast<hipError_t>(12345))));
    EXPECT_TRUE(non_empty(hipGetErrorString(static_cast<hipError_t>(12345))));

    // Versions and name of a working device.
    int version = 0;
    EXPECT_ERR(hipRuntimeGetVersion(&version), hipSuccess);
    EXPECT_TRUE(version > 0);
    EXPECT_ERR(hipDriverGetVersion(&version), hipSuccess);
    char name[256] = {};
    EXPECT_ERR(hipDeviceGetName(name, sizeof name, 0), hipSuccess);
    EXPECT_TRUE(name[0] != '\0');

    std::printf("device \"%s\"\n", name);
    return finish("bad_input");
}
