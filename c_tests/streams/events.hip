// events: create (flags, interprocess refused), record on created and null streams,
// query/synchronize/elapsed time with AMD's errors (unrecorded, disable-timing, not
// ready), destroyed and garbage handles, and hipStreamWaitEvent across streams holding
// the waiting stream on the device while the host goes on.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>


#include "../check.h"
#include "timing.h"


// ---------------------------------------------------------------------------------------

static void create_and_errors() {
    hipEvent_t e;
    EXPECT_ERR(hipEventCreate(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipEventCreateWithFlags(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipEventCreateWithFlags(&e, 0x100), hipErrorInvalidValue);
    // Unknown bits are invalid even beside a known one.
    EXPECT_ERR(hipEventCreateWithFlags(&e, 0x100 | hipEventInterprocess), hipErrorInvalidValue);
    EXPECT_ERR(hipEventCreateWithFlags(&e, 0xffffffffu), hipErrorInvalidValue);
    // Interprocess events need hipEventDisableTiming (c_tests/ipc uses them).
    EXPECT_ERR(hipEventCreateWithFlags(&e, hipEventInterprocess), hipErrorInvalidValue);
    CHECK(hipEventCreateWithFlags(&e, hipEventInterprocess | hipEventDisableTiming));
    CHECK(hipEventDestroy(e));
    // AMD's release-scope hints: either one is accepted, both together are not.
    EXPECT_ERR(hipEventCreateWithFlags(&e, hipEventReleaseToDevice | hipEventReleaseToSystem),
               hipErrorInvalidValue);
    CHECK(hipEventCreateWithFlags(&e, hipEventReleaseToDevice));
    CHECK(hipEventDestroy(e));
    CHECK(hipEventCreateWithFlags(&e, hipEventReleaseToSystem | hipEventDisableTiming));
    CHECK(hipEventDestroy(e));

    CHECK(hipEventCreate(&e));
    // Never recorded: query and synchronize succeed (AMD's behaviour), timing is refused.
    CHECK(hipEventQuery(e));
    CHECK(hipEventSynchronize(e));
    float ms = -1;
    EXPECT_ERR(hipEventElapsedTime(&ms, e, e), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventElapsedTime(nullptr, e, e), hipErrorInvalidValue);
    CHECK(hipEventDestroy(e));

    // Destroyed, garbage and null handles.
    EXPECT_ERR(hipEventQuery(e), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventSynchronize(e), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventRecord(e, 0), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventDestroy(e), hipErrorInvalidHandle);
    EXPECT_ERR(hipStreamWaitEvent(0, e, 0), hipErrorInvalidHandle);
    int on_stack = 0;
    hipEvent_t garbage = reinterpret_cast<hipEvent_t>(&on_stack);
    EXPECT_ERR(hipEventQuery(garbage), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventDestroy(garbage), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventQuery(nullptr), hipErrorInvalidHandle);
    EXPECT_TRUE(on_stack == 0);

    // Recording into a destroyed stream: hipErrorContextIsDestroyed, as AMD's runtime answers
    // for any dead stream up to ROCm 6 (this program's ABI).
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamDestroy(s));
    CHECK(hipEventCreate(&e));
    EXPECT_ERR(hipEventRecord(e, s), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipStreamWaitEvent(0, e, 7), hipErrorInvalidValue);
    CHECK(hipEventDestroy(e));
}

static void record_query_elapsed() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreateWithFlags(&stop, hipEventBlockingSync));
    int* out;
    CHECK(hipMalloc(&out, sizeof(int)));

    CHECK(hipEventRecord(start, s));
    spin_then_write<<<1, 1, 0, s>>>(300 * TICKS_PER_MS, out, 1, nullptr);
    CHECK(hipEventRecord(stop, s));
    EXPECT_ERR(hipEventQuery(stop), hipErrorNotReady);
    float ms = -1;
    EXPECT_ERR(hipEventElapsedTime(&ms, start, stop), hipErrorNotReady);
    CHECK(hipEventSynchronize(stop));
    CHECK(hipEventQuery(stop));
    CHECK(hipEventElapsedTime(&ms, start, stop));
    if (!(ms >= 250.0f && ms < 30000.0f)) {
        std::fprintf(stderr, "elapsed %f ms for a 300 ms kernel\n", ms);
        std::exit(1);
    }
    float back = 0;
    CHECK(hipEventElapsedTime(&back, stop, start));
    EXPECT_TRUE(back <= -250.0f);
    CHECK(hipEventElapsedTime(&back, start, start));
    EXPECT_TRUE(back == 0.0f);

    // The null stream, and re-recording an event.
    CHECK(hipEventRecord(start, 0));
    spin_then_write<<<1, 1>>>(50 * TICKS_PER_MS, out, 2, nullptr);
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    CHECK(hipEventElapsedTime(&ms, start, stop));
    EXPECT_TRUE(ms >= 40.0f);
    EXPECT_TRUE(read_int(out) == 2);

    // hipEventDisableTiming: synchronizes, but has no time.
    hipEvent_t untimed;
    CHECK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
    CHECK(hipEventRecord(untimed, s));
    CHECK(hipEventSynchronize(untimed));
    EXPECT_ERR(hipEventElapsedTime(&ms, start, untimed), hipErrorInvalidHandle);
    EXPECT_ERR(hipEventElapsedTime(&ms, untimed, untimed), hipErrorInvalidHandle);

    // An event destroyed while its record is outstanding still lets the work finish.
    hipEvent_t doomed;
    CHECK(hipEventCreate(&doomed));
    spin_then_write<<<1, 1, 0, s>>>(50 * TICKS_PER_MS, out, 3, nullptr);
    CHECK(hipEventRecord(doomed, s));
    CHECK(hipEventDestroy(doomed));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(read_int(out) == 3);

    CHECK(hipEventDestroy(untimed));
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
}

// Stream b waits for an event recorded in stream a: on the device, without the host
// blocking. a is held by a kernel that waits for a flag only the host sets after
// checking that b has not run ahead.
static void wait_event_across_streams() {
    hipStream_t a, b;
    CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    FlagSetter flags;
    int *flag, *data, *result;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipMalloc(&data, sizeof(int)));
    CHECK(hipMalloc(&result, sizeof(int)));
    CHECK(hipMemset(flag, 0, sizeof(int)));
    CHECK(hipMemset(data, 0, sizeof(int)));
    CHECK(hipMemset(result, 0, sizeof(int)));
    hipEvent_t e;
    CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));

    wait_flag_then_write<<<1, 1, 0, a>>>(flag, 20000 * TICKS_PER_MS, data, 7, nullptr);
    CHECK(hipEventRecord(e, a));
    auto t0 = std::chrono::steady_clock::now();
    CHECK(hipStreamWaitEvent(b, e, 0));
    add_to<<<1, 1, 0, b>>>(data, result, 100, nullptr);
    auto host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    EXPECT_TRUE(host_ms.count() < 5000.0); // the host did not wait for a

    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_ERR(hipEventQuery(e), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(b), hipErrorNotReady); // b is held on the device
    flags.set(flag, 1);
    CHECK(hipStreamSynchronize(b));
    CHECK(hipEventQuery(e));
    EXPECT_TRUE(read_int(result) == 107);

    // Waiting for an event that was never recorded is no dependency.
    hipEvent_t fresh;
    CHECK(hipEventCreate(&fresh));
    CHECK(hipStreamWaitEvent(b, fresh, 0));
    CHECK(hipStreamSynchronize(b));

    // _spt: the per-thread stream records and waits.
    CHECK(hipEventRecord_spt(fresh, 0));
    CHECK(hipStreamWaitEvent_spt(0, fresh, 0));
    CHECK(hipEventSynchronize(fresh));

    CHECK(hipEventDestroy(fresh));
    CHECK(hipEventDestroy(e));
    CHECK(hipFree(flag));
    CHECK(hipFree(data));
    CHECK(hipFree(result));
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
}

int main() {
    create_and_errors();
    record_query_elapsed();
    wait_event_across_streams();
    return finish("events");
}
