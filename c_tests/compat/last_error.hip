// last_error: which error hipGetLastError / hipPeekAtLastError report, per ROCm ABI (abi.h).
// - ROCm 5 and 6: every call sets the last error, success included: a failure followed by a
//   successful call reads as hipSuccess; hipErrorNotReady counts as an error.
// - ROCm 7 (AMD's "HIP API 7.0 changes", as CUDA): the last failure stays until it is read;
//   success and hipErrorNotReady leave it alone. hipExtGetLastError keeps the old meaning (the
//   latest call's result).
// Also the same in every ABI: reading resets; hipDrvGetErrorName/String.
#include "../check.h"
#include "abi.h"

#include <cstring>

__global__ void spin(volatile int* flag) {
    while (*flag == 0) {
    }
}

int main() {
    const int abi = expected_abi();
    const bool sticky = abi >= 7;
    std::printf("last_error: expecting ROCm %d behaviour\n", abi);
    CHECK(hipSetDevice(0));
    (void)hipGetLastError();

    // A failure, then a success.
    void* p = nullptr;
    EXPECT_ERR_KEEP(hipMalloc(&p, size_t(1) << 62), hipErrorOutOfMemory);
    EXPECT_ERR_KEEP(hipSetDevice(0), hipSuccess);
    hipError_t want = sticky ? hipErrorOutOfMemory : hipSuccess;
    EXPECT_EQ(hipPeekAtLastError(), want);
    EXPECT_EQ(hipPeekAtLastError(), want); // peeking leaves it
    EXPECT_EQ(hipGetLastError(), want);
    EXPECT_EQ(hipGetLastError(), hipSuccess); // reading resets

    // The failure read at once is the same in every ABI.
    EXPECT_ERR_KEEP(hipSetDevice(99), hipErrorInvalidDevice);
    EXPECT_EQ(hipGetLastError(), hipErrorInvalidDevice);

    // Two failures: the later one.
    EXPECT_ERR_KEEP(hipSetDevice(99), hipErrorInvalidDevice);
    EXPECT_ERR_KEEP(hipMalloc(nullptr, 16), hipErrorInvalidValue);
    EXPECT_EQ(hipGetLastError(), hipErrorInvalidValue);

    // hipErrorNotReady: an error up to ROCm 6, not one from ROCm 7 on.
    int* flag = nullptr;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    *flag = 0;
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipLaunchKernelGGL(spin, dim3(1), dim3(1), 0, s, flag);
    EXPECT_ERR_KEEP(hipSetDevice(99), hipErrorInvalidDevice);
    EXPECT_ERR_KEEP(hipStreamQuery(s), hipErrorNotReady);
    EXPECT_EQ(hipPeekAtLastError(), sticky ? hipErrorInvalidDevice : hipErrorNotReady);
    // hipExtGetLastError: the latest call's result in every ABI (the peek above is no call
    // that sets it), then success.
    EXPECT_EQ(hipExtGetLastError(), hipErrorNotReady);
    EXPECT_EQ(hipExtGetLastError(), hipSuccess);
    EXPECT_ERR_KEEP(hipSetDevice(0), hipSuccess);
    EXPECT_EQ(hipPeekAtLastError(), sticky ? hipErrorInvalidDevice : hipSuccess);
    *flag = 1;
    CHECK(hipStreamSynchronize(s));
    (void)hipGetLastError();
    EXPECT_EQ(hipGetLastError(), hipSuccess);

    // A launch with a bad configuration, then a success: only ROCm 7 still reports it.
    hipLaunchKernelGGL(spin, dim3(1), dim3(4096), 0, s, flag);
    EXPECT_ERR_KEEP(hipStreamSynchronize(s), hipSuccess);
    EXPECT_EQ(hipGetLastError(), sticky ? hipErrorInvalidConfiguration : hipSuccess);
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(flag));

    // The driver-API names.
    const char* text = nullptr;
    EXPECT_ERR(hipDrvGetErrorName(hipErrorOutOfMemory, &text), hipSuccess);
    EXPECT_TRUE(text && std::strcmp(text, "hipErrorOutOfMemory") == 0);
    EXPECT_ERR(hipDrvGetErrorString(hipErrorOutOfMemory, &text), hipSuccess);
    EXPECT_TRUE(text && std::strcmp(text, hipGetErrorString(hipErrorOutOfMemory)) == 0);
    EXPECT_ERR(hipDrvGetErrorName(hipErrorUnknown, &text), hipSuccess);
    EXPECT_ERR(hipDrvGetErrorName((hipError_t)12345, &text), hipErrorInvalidValue);
    EXPECT_TRUE(text && std::strcmp(text, "hipErrorUnknown") == 0);
    EXPECT_ERR(hipDrvGetErrorString(hipErrorOutOfMemory, nullptr), hipErrorInvalidValue);

    return finish("last_error");
}
