// A stream callback (hipStreamAddCallback, hipLaunchHostFunc) that waits for its own stream
// or its device would wait for itself: hipshim answers hipErrorNotPermitted (CUDA forbids API
// calls in callbacks) instead of blocking forever. Calls that do not block (queries, records
// and asynchronous work on other streams), and waits for work already complete, still work
// inside a callback.
//
// A watchdog ends the program if a callback never returns (the deadlock this guards against),
// so a failure is reported instead of hanging the test run.
#include "../check.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

static hipStream_t blocking_stream, nonblocking_stream, other_stream;
static hipEvent_t before_callback, after_callback, recorded_inside;
static int* device_buffer;
static int host_buffer[4];

struct Seen {
    hipError_t own_stream_sync, null_stream_sync, device_sync, event_after_sync, sync_copy,
        sync_memset, event_before_sync, own_stream_query, record_elsewhere, async_fill_elsewhere;
};
static Seen in_add_callback, in_host_fn;
// Holds the blocking stream until everything behind it has been queued, so the event recorded
// after the callbacks is recorded before they run.
static std::atomic<bool> go{false};
static void on_gate(void*) {
    while (!go) std::this_thread::yield();
}
static hipError_t nonblocking_own_sync;

static void probe(Seen* seen, hipStream_t own) {
    seen->own_stream_sync = hipStreamSynchronize(own);
    seen->null_stream_sync = hipStreamSynchronize(nullptr);
    seen->device_sync = hipDeviceSynchronize();
    seen->event_after_sync = hipEventSynchronize(after_callback);
    seen->sync_copy = hipMemcpy(host_buffer, device_buffer, sizeof host_buffer,
                                hipMemcpyDeviceToHost);
    seen->sync_memset = hipMemset(device_buffer, 0, sizeof host_buffer);
    // Complete before the callback ran: nothing to wait for.
    seen->event_before_sync = hipEventSynchronize(before_callback);
    // Does not block: the stream is busy with this very callback.
    seen->own_stream_query = hipStreamQuery(own);
    seen->record_elsewhere = hipEventRecord(recorded_inside, other_stream);
    seen->async_fill_elsewhere = hipMemsetAsync(device_buffer, 7, sizeof(int), other_stream);
    (void)hipGetLastError();
}

static void on_callback(hipStream_t stream, hipError_t, void*) { probe(&in_add_callback, stream); }
static void on_host_fn(void*) { probe(&in_host_fn, blocking_stream); }
static void on_nonblocking_host_fn(void*) {
    nonblocking_own_sync = hipStreamSynchronize(nonblocking_stream);
    (void)hipGetLastError();
}

static void expect_refused_and_allowed(const Seen& s) {
    EXPECT_ERR(s.own_stream_sync, hipErrorNotPermitted);
    EXPECT_ERR(s.null_stream_sync, hipErrorNotPermitted);
    EXPECT_ERR(s.device_sync, hipErrorNotPermitted);
    EXPECT_ERR(s.event_after_sync, hipErrorNotPermitted);
    EXPECT_ERR(s.sync_copy, hipErrorNotPermitted);
    EXPECT_ERR(s.sync_memset, hipErrorNotPermitted);
    EXPECT_OK(s.event_before_sync);
    EXPECT_ERR(s.own_stream_query, hipErrorNotReady);
    EXPECT_OK(s.record_elsewhere);
    EXPECT_OK(s.async_fill_elsewhere);
}

int main() {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread watchdog([&] {
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_for(lock, std::chrono::seconds(120), [&] { return done; })) {
            std::fprintf(stderr, "FAIL a callback that waits for its own stream never returned "
                                 "(deadlock)\n");
            std::fflush(stderr);
            std::_Exit(1);
        }
    });

    CHECK(hipStreamCreate(&blocking_stream));
    CHECK(hipStreamCreateWithFlags(&nonblocking_stream, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&other_stream, hipStreamNonBlocking));
    CHECK(hipEventCreate(&before_callback));
    CHECK(hipEventCreate(&after_callback));
    CHECK(hipEventCreate(&recorded_inside));
    CHECK(hipMalloc(&device_buffer, sizeof host_buffer));
    CHECK(hipMemset(device_buffer, 0, sizeof host_buffer));

    CHECK(hipEventRecord(before_callback, blocking_stream));
    CHECK(hipLaunchHostFunc(blocking_stream, on_gate, nullptr));
    CHECK(hipStreamAddCallback(blocking_stream, on_callback, nullptr, 0));
    CHECK(hipLaunchHostFunc(blocking_stream, on_host_fn, nullptr));
    CHECK(hipEventRecord(after_callback, blocking_stream));
    CHECK(hipLaunchHostFunc(nonblocking_stream, on_nonblocking_host_fn, nullptr));
    go = true;
    // The stream reports nothing for the refusals: they were answered, not faults.
    EXPECT_OK(hipStreamSynchronize(blocking_stream));
    EXPECT_OK(hipStreamSynchronize(nonblocking_stream));
    EXPECT_OK(hipDeviceSynchronize());

    expect_refused_and_allowed(in_add_callback);
    expect_refused_and_allowed(in_host_fn);
    EXPECT_ERR(nonblocking_own_sync, hipErrorNotPermitted);
    EXPECT_OK(hipStreamSynchronize(other_stream));
    int first = 0;
    EXPECT_OK(hipMemcpy(&first, device_buffer, sizeof first, hipMemcpyDeviceToHost));
    EXPECT_EQ(first, 0x07070707);
    // Outside callbacks the same calls wait as usual.
    EXPECT_OK(hipStreamSynchronize(nullptr));
    EXPECT_OK(hipEventSynchronize(after_callback));
    EXPECT_TRUE(std::string(hipGetErrorName(hipErrorNotPermitted)) == "hipErrorNotPermitted");
    {
        std::lock_guard<std::mutex> lock(m);
        done = true;
    }
    cv.notify_all();
    watchdog.join();
    EXPECT_OK(hipFree(device_buffer));
    return finish("wait_in_callback");
}
