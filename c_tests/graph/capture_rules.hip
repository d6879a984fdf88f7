// What a capture forbids elsewhere: work on the null stream while a blocking stream captures
// is an implicit synchronisation (hipErrorStreamCaptureImplicit, the capture invalidated),
// allowed beside a non-blocking capturing stream; allocations are unsafe during a global-mode
// capture (hipErrorStreamCaptureUnsupported, the capture invalidated), allowed in relaxed mode
// and from other threads of a thread-local capture; a capturing stream destroyed ends its
// capture.
#include "graph.h"

#include <thread>

__global__ void bump(int* p) { atomicAdd(p, 1); }

// Begins a capture on `s` with one kernel in it.
static void begin(hipStream_t s, hipStreamCaptureMode mode, int* d) {
    CHECK(hipStreamBeginCapture(s, mode));
    bump<<<1, 1, 0, s>>>(d);
    CHECK(hipGetLastError());
}

static void expect_invalidated(hipStream_t s) {
    hipGraph_t g = nullptr;
    EXPECT_ERR(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
    EXPECT_TRUE(g == nullptr);
}

static void expect_ended(hipStream_t s) {
    hipGraph_t g = nullptr;
    CHECK(hipStreamEndCapture(s, &g));
    EXPECT_TRUE(g != nullptr);
    if (g) CHECK(hipGraphDestroy(g));
}

int main() {
    int* d = nullptr;
    CHECK(hipMalloc(&d, sizeof(int)));
    CHECK(hipMemset(d, 0, sizeof(int)));
    hipStream_t blocking, nonblocking;
    CHECK(hipStreamCreate(&blocking));
    CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));

    // A kernel on the null stream beside a capturing blocking stream.
    begin(blocking, hipStreamCaptureModeRelaxed, d);
    bump<<<1, 1>>>(d);
    EXPECT_EQ(hipGetLastError(), hipErrorStreamCaptureImplicit);
    expect_invalidated(blocking);
    // A synchronous copy is null-stream work too.
    int h = 0;
    begin(blocking, hipStreamCaptureModeRelaxed, d);
    EXPECT_ERR(hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost), hipErrorStreamCaptureImplicit);
    expect_invalidated(blocking);
    // A non-blocking stream may capture while the null stream works.
    begin(nonblocking, hipStreamCaptureModeRelaxed, d);
    bump<<<1, 1>>>(d);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost));
    EXPECT_EQ(h, 1);  // the null-stream kernel ran; the captured one did not
    expect_ended(nonblocking);

    // Allocations during a global-mode capture, from this thread and from another.
    void* p = nullptr;
    begin(nonblocking, hipStreamCaptureModeGlobal, d);
    EXPECT_ERR(hipMalloc(&p, 64), hipErrorStreamCaptureUnsupported);
    expect_invalidated(nonblocking);
    begin(nonblocking, hipStreamCaptureModeGlobal, d);
    hipError_t other = hipSuccess;
    std::thread([&] { other = hipHostMalloc(&p, 64, 0); }).join();
    EXPECT_EQ(other, hipErrorStreamCaptureUnsupported);
    expect_invalidated(nonblocking);
    // This thread in relaxed mode may allocate.
    begin(nonblocking, hipStreamCaptureModeGlobal, d);
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    CHECK(hipMalloc(&p, 64));
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    expect_ended(nonblocking);
    CHECK(hipFree(p));
    // A thread-local capture: other threads may allocate, this one may not.
    begin(nonblocking, hipStreamCaptureModeThreadLocal, d);
    other = hipErrorUnknown;
    std::thread([&] {
        other = hipMallocManaged(&p, 64);
        if (other == hipSuccess) other = hipFree(p);
    }).join();
    EXPECT_EQ(other, hipSuccess);
    // (hipMallocManaged is refused too from ROCm 7 on; c_tests/compat/capture_calls checks it.)
    EXPECT_ERR(hipMalloc(&p, 64), hipErrorStreamCaptureUnsupported);
    expect_invalidated(nonblocking);

    // A stream destroyed while it captures ends its capture: allocations work again, and
    // ending the capture on the dead handle fails as any call on a dead stream does.
    {
        hipStream_t doomed;
        CHECK(hipStreamCreate(&doomed));
        begin(doomed, hipStreamCaptureModeGlobal, d);
        CHECK(hipStreamDestroy(doomed));
        CHECK(hipMalloc(&p, 64));
        CHECK(hipFree(p));
        hipGraph_t g = nullptr;
        EXPECT_ERR(hipStreamEndCapture(doomed, &g), hipErrorContextIsDestroyed);
    }

    // With no capture left, everything works again.
    CHECK(hipMalloc(&p, 64));
    bump<<<1, 1>>>(d);
    CHECK(hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost));
    EXPECT_EQ(h, 2);
    CHECK(hipFree(p));
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(blocking));
    CHECK(hipStreamDestroy(nonblocking));
    return finish("capture_rules");
}
