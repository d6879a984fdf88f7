// events: create (flags, interprocess refused), record on created and null streams,
// query/synchronize/elapsed time with AMD's errors (unrecorded, disable-timing, not
// ready), destroyed and garbage handles, and hipStreamWaitEvent across streams holding
// the waiting stream on the device while the host goes on.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>


#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t err_ = (call);                                                          \
        if (err_ != hipSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                         hipGetErrorName(err_), static_cast<int>(err_));                   \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// The call must return exactly `want`.
#define EXPECT_ERR(want, call)                                                               \
    do {                                                                                     \
        hipError_t err_ = (call);                                                            \
        if (err_ != (want)) {                                                                \
            std::fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s\n", __FILE__,      \
                         __LINE__, #call, hipGetErrorName(err_), static_cast<int>(err_),     \
                         hipGetErrorName(want));                                             \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

#define EXPECT(cond)                                                                      \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

// 100 MHz real-time counter ticks.
static const unsigned long long TICKS_PER_MS = 100000ull;

__device__ inline unsigned long long realtime() { return __builtin_amdgcn_s_memrealtime(); }

// Spins for `ticks`, then stores `value` to *out and the finishing time to *when.
__global__ void spin_then_write(unsigned long long ticks, int* out, int value,
                                unsigned long long* when) {
    unsigned long long t0 = realtime();
    while (realtime() - t0 < ticks) {
    }
    *out = value;
    if (when) *when = realtime();
}

// Waits until the host sets *flag (or `timeout` ticks pass: then stores -1 so the test
// fails instead of hanging), then stores `value` and the finishing time.
__global__ void wait_flag_then_write(const volatile int* flag, unsigned long long timeout,
                                     int* out, int value, unsigned long long* when) {
    unsigned long long t0 = realtime();
    while (*flag == 0) {
        if (realtime() - t0 > timeout) {
            *out = -1;
            if (when) *when = realtime();
            return;
        }
    }
    *out = value;
    if (when) *when = realtime();
}

// out[0] = in[0] + add: a kernel whose result shows what it saw.
__global__ void add_to(const int* in, int* out, int add, unsigned long long* when) {
    *out = *in + add;
    if (when) *when = realtime();
}

// A stream the tests use to set flags while other streams are blocked: non-blocking, so
// it never waits for the null stream; a copy from pageable memory runs on the copy engine.
struct FlagSetter {
    hipStream_t stream;
    FlagSetter() { CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking)); }
    ~FlagSetter() { hipStreamDestroy(stream); }
    void set(int* flag, int value) {
        static int v;
        v = value;
        CHECK(hipMemcpyAsync(flag, &v, sizeof v, hipMemcpyHostToDevice, stream));
        CHECK(hipStreamSynchronize(stream));
    }
};

// Polls `query` until it is not hipErrorNotReady or `ms` pass; returns its last result.
template <class F>
static hipError_t poll(F query, int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    hipError_t e;
    while ((e = query()) == hipErrorNotReady && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return e;
}

static int read_int(const int* device_ptr) {
    int v = 0;
    CHECK(hipMemcpy(&v, device_ptr, sizeof v, hipMemcpyDeviceToHost));
    return v;
}


// ---------------------------------------------------------------------------------------

static void create_and_errors() {
    hipEvent_t e;
    EXPECT_ERR(hipErrorInvalidValue, hipEventCreate(nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipEventCreateWithFlags(nullptr, 0));
    EXPECT_ERR(hipErrorInvalidValue, hipEventCreateWithFlags(&e, 0x100));
    // Unknown bits are invalid even beside a known but unsupported one.
    EXPECT_ERR(hipErrorInvalidValue, hipEventCreateWithFlags(&e, 0x100 | hipEventInterprocess));
    EXPECT_ERR(hipErrorInvalidValue, hipEventCreateWithFlags(&e, 0xffffffffu));
    EXPECT_ERR(hipErrorNotSupported, hipEventCreateWithFlags(&e, hipEventInterprocess));
    EXPECT_ERR(hipErrorNotSupported,
               hipEventCreateWithFlags(&e, hipEventInterprocess | hipEventDisableTiming));

    CHECK(hipEventCreate(&e));
    // Never recorded: query and synchronize succeed (AMD's behaviour), timing is refused.
    CHECK(hipEventQuery(e));
    CHECK(hipEventSynchronize(e));
    float ms = -1;
    EXPECT_ERR(hipErrorInvalidHandle, hipEventElapsedTime(&ms, e, e));
    EXPECT_ERR(hipErrorInvalidValue, hipEventElapsedTime(nullptr, e, e));
    CHECK(hipEventDestroy(e));

    // Destroyed, garbage and null handles.
    EXPECT_ERR(hipErrorInvalidHandle, hipEventQuery(e));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventSynchronize(e));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventRecord(e, 0));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventDestroy(e));
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamWaitEvent(0, e, 0));
    int on_stack = 0;
    hipEvent_t garbage = reinterpret_cast<hipEvent_t>(&on_stack);
    EXPECT_ERR(hipErrorInvalidHandle, hipEventQuery(garbage));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventDestroy(garbage));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventQuery(nullptr));
    EXPECT(on_stack == 0);

    // Recording into a destroyed stream.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamDestroy(s));
    CHECK(hipEventCreate(&e));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventRecord(e, s));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamWaitEvent(0, e, 7));
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
    EXPECT_ERR(hipErrorNotReady, hipEventQuery(stop));
    float ms = -1;
    EXPECT_ERR(hipErrorNotReady, hipEventElapsedTime(&ms, start, stop));
    CHECK(hipEventSynchronize(stop));
    CHECK(hipEventQuery(stop));
    CHECK(hipEventElapsedTime(&ms, start, stop));
    if (!(ms >= 250.0f && ms < 30000.0f)) {
        std::fprintf(stderr, "elapsed %f ms for a 300 ms kernel\n", ms);
        std::exit(1);
    }
    float back = 0;
    CHECK(hipEventElapsedTime(&back, stop, start));
    EXPECT(back <= -250.0f);
    CHECK(hipEventElapsedTime(&back, start, start));
    EXPECT(back == 0.0f);

    // The null stream, and re-recording an event.
    CHECK(hipEventRecord(start, 0));
    spin_then_write<<<1, 1>>>(50 * TICKS_PER_MS, out, 2, nullptr);
    CHECK(hipEventRecord(stop, 0));
    CHECK(hipEventSynchronize(stop));
    CHECK(hipEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 40.0f);
    EXPECT(read_int(out) == 2);

    // hipEventDisableTiming: synchronizes, but has no time.
    hipEvent_t untimed;
    CHECK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
    CHECK(hipEventRecord(untimed, s));
    CHECK(hipEventSynchronize(untimed));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventElapsedTime(&ms, start, untimed));
    EXPECT_ERR(hipErrorInvalidHandle, hipEventElapsedTime(&ms, untimed, untimed));

    // An event destroyed while its record is outstanding still lets the work finish.
    hipEvent_t doomed;
    CHECK(hipEventCreate(&doomed));
    spin_then_write<<<1, 1, 0, s>>>(50 * TICKS_PER_MS, out, 3, nullptr);
    CHECK(hipEventRecord(doomed, s));
    CHECK(hipEventDestroy(doomed));
    CHECK(hipStreamSynchronize(s));
    EXPECT(read_int(out) == 3);

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
    EXPECT(host_ms.count() < 5000.0); // the host did not wait for a

    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_ERR(hipErrorNotReady, hipEventQuery(e));
    EXPECT_ERR(hipErrorNotReady, hipStreamQuery(b)); // b is held on the device
    flags.set(flag, 1);
    CHECK(hipStreamSynchronize(b));
    CHECK(hipEventQuery(e));
    EXPECT(read_int(result) == 107);

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
    std::printf("events: PASSED\n");
    return 0;
}
