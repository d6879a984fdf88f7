// stream_queries: stream answers that AMD's runtime and hip-tests expect, per ROCm ABI (abi.h):
// - hipStreamQuery of the null stream is hipErrorNotReady while a blocking stream (created
//   without hipStreamNonBlocking, or the per-thread stream) has work pending, as its
//   synchronisation waits for them; a non-blocking stream's work does not count;
// - work on a blocking stream enqueued behind null-stream work is not ready before it;
// - a destroyed or made-up stream handle: hipErrorContextIsDestroyed up to ROCm 6 (AMD checks
//   every stream argument), hipErrorInvalidHandle with ROCm 7 (AMD stopped checking; hipshim
//   still does);
// - hipStreamGetFlags of the null stream is hipErrorInvalidValue (AMD); a CU mask that enables
//   no compute unit is hipErrorInvalidValue.
#include "../check.h"
#include "abi.h"

__global__ void wait_for(volatile int* flag) {
    while (*flag == 0) {
    }
}

__global__ void empty() {}

// Launches a kernel on `s` that runs until *flag becomes non-zero.
static void hold(hipStream_t s, int* flag) {
    *flag = 0;
    hipLaunchKernelGGL(wait_for, dim3(1), dim3(1), 0, s, flag);
    CHECK(hipGetLastError());
}

int main() {
    const int abi = expected_abi();
    std::printf("stream_queries: expecting ROCm %d behaviour\n", abi);
    int* flag = nullptr;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    hipStream_t blocking, non_blocking;
    CHECK(hipStreamCreate(&blocking));
    CHECK(hipStreamCreateWithFlags(&non_blocking, hipStreamNonBlocking));

    EXPECT_OK(hipStreamQuery(0));
    hold(blocking, flag);
    EXPECT_ERR(hipStreamQuery(blocking), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(0), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(hipStreamLegacy), hipErrorNotReady);
    EXPECT_OK(hipStreamQuery(non_blocking));
    *flag = 1;
    EXPECT_OK(hipStreamSynchronize(0)); // waits for the blocking stream too
    EXPECT_OK(hipStreamQuery(blocking));
    EXPECT_OK(hipStreamQuery(0));

    hold(non_blocking, flag);
    EXPECT_OK(hipStreamQuery(0)); // a non-blocking stream's work does not count
    EXPECT_ERR(hipStreamQuery(non_blocking), hipErrorNotReady);
    *flag = 1;
    EXPECT_OK(hipStreamSynchronize(non_blocking));

    hold(hipStreamPerThread, flag);
    EXPECT_ERR(hipStreamQuery(0), hipErrorNotReady);
    *flag = 1;
    EXPECT_OK(hipStreamSynchronize(0));
    EXPECT_OK(hipStreamQuery(hipStreamPerThread));

    // Null-stream work first: the blocking stream's later work waits for it.
    hold(0, flag);
    hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, blocking);
    EXPECT_ERR(hipStreamQuery(blocking), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(0), hipErrorNotReady);
    *flag = 1;
    EXPECT_OK(hipStreamSynchronize(blocking));
    EXPECT_OK(hipStreamQuery(0));

    // Dead handles.
    const hipError_t dead = abi >= 7 ? hipErrorInvalidHandle : hipErrorContextIsDestroyed;
    CHECK(hipStreamDestroy(non_blocking));
    unsigned flags = 0;
    int value = 0;
    EXPECT_ERR(hipStreamQuery(non_blocking), dead);
    EXPECT_ERR(hipStreamSynchronize(non_blocking), dead);
    EXPECT_ERR(hipStreamGetFlags(non_blocking, &flags), dead);
    EXPECT_ERR(hipStreamGetPriority(non_blocking, &value), dead);
    EXPECT_ERR(hipStreamGetDevice(non_blocking, &value), dead);
    EXPECT_ERR(hipStreamDestroy(non_blocking), dead);
    hipStream_t made_up = reinterpret_cast<hipStream_t>(0xFFFF);
    EXPECT_ERR(hipStreamQuery(made_up), dead);
    EXPECT_ERR(hipStreamDestroy(nullptr), hipErrorInvalidHandle);

    EXPECT_ERR(hipStreamGetFlags(nullptr, &flags), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetFlags(blocking, nullptr), hipErrorInvalidValue);
    EXPECT_OK(hipStreamGetFlags(blocking, &flags));
    EXPECT_EQ(flags, 0u);

    // A mask that enables no CU gives the stream the default, every CU (AMD's rule).
    unsigned zero_mask[2] = {0, 0};
    hipStream_t masked = nullptr;
    CHECK(hipExtStreamCreateWithCUMask(&masked, 2, zero_mask));
    uint32_t got[4] = {0, 0, 0, 0}, whole[4] = {0, 0, 0, 0};
    CHECK(hipExtStreamGetCUMask(masked, 4, got));
    CHECK(hipExtStreamGetCUMask(0, 4, whole));
    EXPECT_TRUE(got[0] == whole[0] && got[1] == whole[1] && got[2] == whole[2] && got[3] == whole[3]);
    CHECK(hipStreamDestroy(masked));

    CHECK(hipStreamDestroy(blocking));
    CHECK(hipHostFree(flag));
    return finish("stream_queries");
}
