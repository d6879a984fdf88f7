// profiler_names: hipApiName and hipGetCmdName name AMD's callback ids and command kinds
// ("unknown" / "Unknown command kind" otherwise, never null) without touching the last error;
// hipProfilerStart/Stop answer as the profile's AMD runtime does (ROCm 7: success; earlier:
// hipErrorNotSupported).
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>

#include "../check.h"
#include "abi.h"

static void expect_name(const char* got, const char* want, const char* what) {
    if (got == nullptr || std::strcmp(got, want) != 0) {
        std::fprintf(stderr, "FAIL %s: expected \"%s\", got \"%s\"\n", what, want,
                     got ? got : "(null)");
        ++failures;
    }
}

int main() {
    expect_name(hipApiName(1), "__hipPopCallConfiguration", "id 1");
    expect_name(hipApiName(107), "hipLaunchKernel", "id 107");
    expect_name(hipApiName(108), "hipMalloc", "id 108");
    expect_name(hipApiName(125), "hipMemcpy", "id 125");
    expect_name(hipApiName(408), "hipStreamBatchMemOp", "id 408");
    expect_name(hipApiName(0), "unknown", "id 0");
    expect_name(hipApiName(393), "unknown", "reserved id 393");
    expect_name(hipApiName(100000), "unknown", "id 100000");

    expect_name(hipGetCmdName(0x11F0), "KernelExecution", "kernel command");
    expect_name(hipGetCmdName(0x11F5), "CopyDeviceToDevice", "copy command");
    expect_name(hipGetCmdName(0x4502), "StreamWrite", "stream write command");
    expect_name(hipGetCmdName(0xdead), "Unknown command kind", "unknown command");

    // The name calls leave the last error as it was.
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT_ERR_KEEP(hipSetDevice(count + 5), hipErrorInvalidDevice);
    (void)hipApiName(108);
    (void)hipGetCmdName(0x11F0);
    EXPECT_ERR(hipGetLastError(), hipErrorInvalidDevice);

    hipError_t want = expected_abi() >= 7 ? hipSuccess : hipErrorNotSupported;
    EXPECT_ERR(hipProfilerStart(), want);
    EXPECT_ERR(hipProfilerStop(), want);
    return finish("profiler_names");
}
