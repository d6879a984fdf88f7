// stream_done: what a stream that answers "done" promises. An event recorded last on a
// stream is complete once hipStreamSynchronize, hipDeviceSynchronize or a successful
// hipStreamQuery says the stream is (its marker completes after the work before it, and a
// copy before it makes that gap wide); and a blocking stream is not done while earlier
// null-stream work is not: AMD's runtime has it wait for the null stream before it answers a
// query or a synchronisation (hip-tests' Unit_hipStreamCreateWithFlags_DefaultStreamInteraction
// and Unit_hipGraphExecEventRecordNodeSetEvent_Functional check these).
#include <hip/hip_runtime.h>

#include <cstdio>

#include "../check.h"
#include "timing.h"

static const unsigned long long TIMEOUT = 20000 * TICKS_PER_MS;

static void events_recorded_last() {
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    hipEvent_t event;
    CHECK(hipEventCreate(&event));
    int* device;
    CHECK(hipMalloc(&device, 4096));
    static int host[1024];
    int after_sync = 0, after_query = 0, after_device_sync = 0;
    for (int i = 0; i < 50; ++i) {
        CHECK(hipMemcpyAsync(device, host, sizeof host, hipMemcpyHostToDevice, stream));
        CHECK(hipEventRecord(event, stream));
        CHECK(hipStreamSynchronize(stream));
        after_sync += hipEventQuery(event) != hipSuccess;

        CHECK(hipMemcpyAsync(host, device, sizeof host, hipMemcpyDeviceToHost, stream));
        CHECK(hipEventRecord(event, stream));
        hipError_t e;
        while ((e = hipStreamQuery(stream)) == hipErrorNotReady) {
        }
        CHECK(e);
        after_query += hipEventQuery(event) != hipSuccess;

        CHECK(hipMemcpyAsync(device, host, sizeof host, hipMemcpyHostToDevice, stream));
        CHECK(hipEventRecord(event, stream));
        CHECK(hipDeviceSynchronize());
        after_device_sync += hipEventQuery(event) != hipSuccess;
    }
    EXPECT_EQ(after_sync, 0);
    EXPECT_EQ(after_query, 0);
    EXPECT_EQ(after_device_sync, 0);
    float ms = -1;
    EXPECT_OK(hipEventElapsedTime(&ms, event, event));
    CHECK(hipFree(device));
    CHECK(hipEventDestroy(event));
    CHECK(hipStreamDestroy(stream));
    std::printf("stream_done: events recorded last ok\n");
}

static void blocking_streams_answer_for_the_null_stream() {
    hipStream_t blocking, nonblocking;
    CHECK(hipStreamCreate(&blocking));
    CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));
    // `data` is host memory: the host sees the kernels' writes without a call that would
    // itself wait for the null stream.
    int *flag, *data;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipHostMalloc(&data, sizeof(int), hipHostMallocCoherent));
    CHECK(hipMemset(flag, 0, sizeof(int)));
    *(volatile int*)data = 0;
    FlagSetter flags;

    // Nothing was enqueued on either stream; the null stream is held.
    wait_flag_then_write<<<1, 1>>>(flag, TIMEOUT, data, 5, nullptr);
    EXPECT_ERR(hipStreamQuery(blocking), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(hipStreamPerThread), hipErrorNotReady);
    EXPECT_OK(hipStreamQuery(nonblocking));
    CHECK(hipStreamSynchronize(nonblocking));
    EXPECT_ERR(hipStreamQuery(0), hipErrorNotReady);
    flags.set(flag, 1);
    CHECK(hipStreamSynchronize(blocking));
    EXPECT_EQ(*(volatile int*)data, 5);
    EXPECT_OK(hipStreamQuery(blocking));
    CHECK(hipDeviceSynchronize());

    // A blocking stream's synchronisation waits for the null stream's work so far.
    spin_then_write<<<1, 1>>>(50 * TICKS_PER_MS, data, 7, nullptr);
    CHECK(hipStreamSynchronize(blocking));
    EXPECT_EQ(*(volatile int*)data, 7);

    CHECK(hipFree(flag));
    CHECK(hipHostFree(data));
    CHECK(hipStreamDestroy(blocking));
    CHECK(hipStreamDestroy(nonblocking));
    std::printf("stream_done: blocking streams answer for the null stream ok\n");
}

int main() {
    events_recorded_last();
    blocking_streams_answer_for_the_null_stream();
    return finish("stream_done");
}
