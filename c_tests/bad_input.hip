// hipshim-test: targets=gfx942
//
// bad_input: the runtime answers bad arguments with AMD's error codes instead
// of crashing, and keeps the per-thread last error the way AMD documents it.
// Every check runs; each failure is printed; the exit status is 1 if any failed.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>

static int failures = 0;

static const char* name_of(hipError_t e) {
    const char* n = hipGetErrorName(e);
    return n ? n : "(null)";
}

// Checks that `got` is `want`; names both on failure.
static void expect_eq(const char* what, hipError_t got, hipError_t want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL %s: expected %s (%d), got %s (%d)\n", what, name_of(want),
                     static_cast<int>(want), name_of(got), static_cast<int>(got));
        ++failures;
    } else {
        std::printf("ok   %s -> %s\n", what, name_of(got));
    }
}

static void expect_true(const char* what, bool cond) {
    if (!cond) {
        std::fprintf(stderr, "FAIL %s\n", what);
        ++failures;
    } else {
        std::printf("ok   %s\n", what);
    }
}

static bool non_empty(const char* s) { return s != nullptr && s[0] != '\0'; }

int main() {
    // A working device and a real allocation to contrast with the bad inputs.
    int count = 0;
    expect_eq("hipGetDeviceCount", hipGetDeviceCount(&count), hipSuccess);
    expect_true("at least one device", count >= 1);
    expect_eq("hipSetDevice(count) (out of range)", hipSetDevice(count), hipErrorInvalidDevice);
    (void)hipGetLastError();
    expect_eq("hipSetDevice(0)", hipSetDevice(0), hipSuccess);

    const size_t n = 4096;
    char* dev = nullptr;
    expect_eq("hipMalloc(&p, 4096)", hipMalloc(&dev, n), hipSuccess);
    expect_true("hipMalloc returned a pointer", dev != nullptr);
    char host[4096];
    std::memset(host, 7, sizeof host);

    // hipMalloc with nowhere to store the pointer.
    expect_eq("hipMalloc(nullptr, n)", hipMalloc(nullptr, n), hipErrorInvalidValue);

    // Last error: peek leaves it, get returns and clears it.
    expect_eq("hipPeekAtLastError after a failure", hipPeekAtLastError(), hipErrorInvalidValue);
    expect_eq("hipPeekAtLastError again (not cleared)", hipPeekAtLastError(),
              hipErrorInvalidValue);
    expect_eq("hipGetLastError after a failure", hipGetLastError(), hipErrorInvalidValue);
    expect_eq("hipGetLastError again (cleared)", hipGetLastError(), hipSuccess);
    expect_eq("hipPeekAtLastError after clearing", hipPeekAtLastError(), hipSuccess);

    // hipFree: null is a no-op; anything it did not hand out is rejected.
    expect_eq("hipFree(nullptr)", hipFree(nullptr), hipSuccess);
    expect_eq("hipFree(host stack pointer)", hipFree(host), hipErrorInvalidValue);
    expect_eq("hipFree(interior pointer)", hipFree(dev + 16), hipErrorInvalidValue);
    (void)hipGetLastError();

    // hipMemcpy with null pointers: an error, not a crash.
    expect_eq("hipMemcpy(nullptr, host, H2D)", hipMemcpy(nullptr, host, n, hipMemcpyHostToDevice),
              hipErrorInvalidValue);
    expect_eq("hipMemcpy(host, nullptr, D2H)", hipMemcpy(host, nullptr, n, hipMemcpyDeviceToHost),
              hipErrorInvalidValue);
    expect_eq("hipMemcpy(dev, nullptr, D2D)",
              hipMemcpy(dev, nullptr, n, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    (void)hipGetLastError();

    // A copy kind outside hipMemcpyKind: AMD (and CUDA) call this an invalid
    // copy direction.
    expect_eq("hipMemcpy(dev, host, kind 42)",
              hipMemcpy(dev, host, n, static_cast<hipMemcpyKind>(42)),
              hipErrorInvalidMemcpyDirection);
    (void)hipGetLastError();

    // The valid copy still works after all that.
    expect_eq("hipMemcpy(dev, host, H2D)", hipMemcpy(dev, host, n, hipMemcpyHostToDevice),
              hipSuccess);
    char back[4096] = {};
    expect_eq("hipMemcpy(back, dev, D2H)", hipMemcpy(back, dev, n, hipMemcpyDeviceToHost),
              hipSuccess);
    expect_true("round trip preserved the bytes", std::memcmp(back, host, n) == 0);

    // Freeing twice: the second free names a pointer that is no longer live.
    expect_eq("hipFree(p)", hipFree(dev), hipSuccess);
    expect_eq("hipFree(p) again", hipFree(dev), hipErrorInvalidValue);
    (void)hipGetLastError();

    // Output parameters must not be null.
    expect_eq("hipGetDeviceCount(nullptr)", hipGetDeviceCount(nullptr), hipErrorInvalidValue);
    expect_eq("hipRuntimeGetVersion(nullptr)", hipRuntimeGetVersion(nullptr),
              hipErrorInvalidValue);
    (void)hipGetLastError();

    // Error names are the enumerator spellings; strings are human text.
    expect_true("hipGetErrorName(hipSuccess) == \"hipSuccess\"",
                std::strcmp(name_of(hipSuccess), "hipSuccess") == 0);
    expect_true("hipGetErrorName(hipErrorInvalidValue) == \"hipErrorInvalidValue\"",
                std::strcmp(name_of(hipErrorInvalidValue), "hipErrorInvalidValue") == 0);
    expect_true("hipGetErrorName(hipErrorNoBinaryForGpu) == \"hipErrorNoBinaryForGpu\"",
                std::strcmp(name_of(hipErrorNoBinaryForGpu), "hipErrorNoBinaryForGpu") == 0);
    expect_true("hipGetErrorName(hipErrorInvalidMemcpyDirection)",
                std::strcmp(name_of(hipErrorInvalidMemcpyDirection),
                            "hipErrorInvalidMemcpyDirection") == 0);
    expect_true("hipGetErrorString(hipSuccess) is text", non_empty(hipGetErrorString(hipSuccess)));
    expect_true("hipGetErrorString(hipErrorInvalidValue) is text",
                non_empty(hipGetErrorString(hipErrorInvalidValue)));
    expect_true("hipGetErrorString(hipErrorInvalidValue) is not the bare name",
                non_empty(hipGetErrorString(hipErrorInvalidValue)) &&
                    std::strcmp(hipGetErrorString(hipErrorInvalidValue),
                                "hipErrorInvalidValue") != 0);
    expect_true("hipGetErrorName of an unknown value is text",
                non_empty(hipGetErrorName(static_cast<hipError_t>(12345))));
    expect_true("hipGetErrorString of an unknown value is text",
                non_empty(hipGetErrorString(static_cast<hipError_t>(12345))));

    // Versions and name of a working device.
    int version = 0;
    expect_eq("hipRuntimeGetVersion", hipRuntimeGetVersion(&version), hipSuccess);
    expect_true("runtime version > 0", version > 0);
    expect_eq("hipDriverGetVersion", hipDriverGetVersion(&version), hipSuccess);
    char name[256] = {};
    expect_eq("hipDeviceGetName", hipDeviceGetName(name, sizeof name, 0), hipSuccess);
    expect_true("device name is not empty", name[0] != '\0');

    if (failures != 0) {
        std::fprintf(stderr, "bad_input: FAILED, %d check(s) wrong\n", failures);
        return 1;
    }
    std::printf("bad_input: PASSED, device \"%s\"\n", name);
    return 0;
}
