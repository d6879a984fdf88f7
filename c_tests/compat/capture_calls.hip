// Calls ROCm 7 refuses during a global-mode stream capture (AMD's "HIP API 7.0 changes",
// CUDA's rule) and earlier ABIs allow: hipMallocManaged, hipMemAdvise, hipMemPoolCreate,
// hipMemPoolDestroy, hipDeviceSetMemPool, hipEventQuery, hipDeviceSetCacheConfig. Under
// ROCm 7 each fails with hipErrorStreamCaptureUnsupported and invalidates the capture, unless
// the thread chose relaxed mode; before, each succeeds and the capture goes on.
#include "../check.h"
#include "abi.h"

__global__ void bump(int* p) { atomicAdd(p, 1); }

static void callback(hipStream_t, hipError_t, void* calls) { ++*static_cast<int*>(calls); }

static hipStream_t s;
static int* d;

static void begin() {
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    bump<<<1, 1, 0, s>>>(d);
    CHECK(hipGetLastError());
}

// Ends the capture: invalidated when the call was refused, else a graph.
static void end(bool refused, int line) {
    hipGraph_t g = nullptr;
    hipError_t e = hipStreamEndCapture(s, &g);
    if (e != (refused ? hipErrorStreamCaptureInvalidated : hipSuccess))
        std::fprintf(stderr, "line %d: hipStreamEndCapture: %s\n", line, hipGetErrorName(e));
    EXPECT_ERR(e, refused ? hipErrorStreamCaptureInvalidated : hipSuccess);
    if (g) CHECK(hipGraphDestroy(g));
}

#define DURING_CAPTURE(call)                                                                     \
    do {                                                                                         \
        begin();                                                                                 \
        EXPECT_ERR(call, refused);                                                               \
        end(rocm7, __LINE__);                                                                    \
    } while (0)

int main() {
    const bool rocm7 = expected_abi() >= 7;
    const hipError_t refused = rocm7 ? hipErrorStreamCaptureUnsupported : hipSuccess;
    CHECK(hipMalloc(&d, sizeof(int)));
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    void* managed = nullptr;
    CHECK(hipMallocManaged(&managed, 4096));
    hipEvent_t e;
    CHECK(hipEventCreate(&e));
    CHECK(hipEventRecord(e, nullptr));
    CHECK(hipEventSynchronize(e));
    hipMemPool_t pool = nullptr, current = nullptr;
    CHECK(hipDeviceGetMemPool(&current, 0));
    hipMemPoolProps props = {};
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;

    void* p = nullptr;
    DURING_CAPTURE(hipMallocManaged(&p, 64));
    if (p) CHECK(hipFree(p));
    DURING_CAPTURE(hipMemAdvise(managed, 4096, hipMemAdviseSetReadMostly, 0));
    DURING_CAPTURE(hipMemPoolCreate(&pool, &props));
    if (!pool) CHECK(hipMemPoolCreate(&pool, &props));
    DURING_CAPTURE(hipDeviceSetMemPool(0, pool));
    CHECK(hipDeviceSetMemPool(0, current));
    DURING_CAPTURE(hipMemPoolDestroy(pool));
    if (rocm7) CHECK(hipMemPoolDestroy(pool));
    DURING_CAPTURE(hipEventQuery(e));
    DURING_CAPTURE(hipDeviceSetCacheConfig(hipFuncCachePreferNone));
    int calls = 0;
    begin();
    EXPECT_ERR(hipStreamAddCallback(s, callback, &calls, 0), hipErrorStreamCaptureUnsupported);
    end(rocm7, __LINE__);
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(calls, 0);
    hipLaunchParams part = {};
    void* args[] = {&d};
    part.func = reinterpret_cast<void*>(&bump);
    part.gridDim = dim3(1);
    part.blockDim = dim3(1);
    part.args = args;
    part.stream = s;
    begin();
    EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(&part, 1, 0),
               hipErrorStreamCaptureUnsupported);
    end(rocm7, __LINE__);

    // Relaxed mode allows them in every ABI.
    begin();
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    EXPECT_OK(hipMallocManaged(&p, 64));
    EXPECT_OK(hipMemAdvise(managed, 4096, hipMemAdviseSetReadMostly, 0));
    EXPECT_OK(hipEventQuery(e));
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    end(false, __LINE__);
    CHECK(hipFree(p));

    CHECK(hipEventDestroy(e));
    CHECK(hipFree(managed));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d));
    return finish("capture_calls");
}
