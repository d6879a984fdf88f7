// streams: creation (flags, priorities, CU masks), query and synchronize, destroy with
// work outstanding, callbacks and host functions in stream order, per-thread streams and
// the _spt entry points, and the errors for dead or garbage handles and null pointers.
#include <hip/hip_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>


#include "../check.h"
#include "timing.h"


// ---------------------------------------------------------------------------------------

static void priorities() {
    int least = 99, greatest = 99;
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT_TRUE(least == 1 && greatest == -1);
    CHECK(hipDeviceGetStreamPriorityRange(nullptr, &greatest)); // either may be null
    const int asked[] = {-5, -1, 0, 1, 7};
    const int want[] = {-1, -1, 0, 1, 1}; // clamped into [greatest, least]
    for (int i = 0; i < 5; ++i) {
        hipStream_t s;
        CHECK(hipStreamCreateWithPriority(&s, hipStreamDefault, asked[i]));
        int p = 42;
        CHECK(hipStreamGetPriority(s, &p));
        EXPECT_TRUE(p == want[i]);
        int* out;
    CHECK(hipMalloc(&out, sizeof(int)));
        spin_then_write<<<1, 1, 0, s>>>(0, out, 10 + i, nullptr);
    CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(read_int(out) == 10 + i);
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
    }
    int p = 42;
    CHECK(hipStreamGetPriority(0, &p));
    EXPECT_TRUE(p == 0);
}

static void create_flags_device() {
    hipStream_t a, b;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    EXPECT_TRUE(a != b && a != nullptr && b != nullptr);
    unsigned flags = 99;
    CHECK(hipStreamGetFlags(a, &flags));
    EXPECT_TRUE(flags == hipStreamDefault);
    CHECK(hipStreamGetFlags(b, &flags));
    EXPECT_TRUE(flags == hipStreamNonBlocking);
    // AMD answers the null stream's flags with hipErrorInvalidValue (CUDA gives 0).
    EXPECT_ERR(hipStreamGetFlags(0, &flags), hipErrorInvalidValue);
    int dev = -1;
    CHECK(hipStreamGetDevice(b, &dev));
    EXPECT_TRUE(dev == 0);
    CHECK(hipStreamGetDevice(0, &dev));
    EXPECT_TRUE(dev == 0);
    EXPECT_TRUE(hipGetStreamDeviceId(a) == 0);
    hipStream_t bad;
    EXPECT_ERR(hipStreamCreateWithFlags(&bad, 0x10), hipErrorInvalidValue);
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
}

static void query_and_synchronize() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamQuery(s)); // nothing enqueued yet
    int* out;
    CHECK(hipMalloc(&out, sizeof(int)));
    spin_then_write<<<1, 1, 0, s>>>(300 * TICKS_PER_MS, out, 7, nullptr);
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamQuery(s));
    EXPECT_TRUE(read_int(out) == 7);
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
}

static void destroy_with_work_outstanding() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int* out;
    CHECK(hipMalloc(&out, sizeof(int)));
    CHECK(hipMemset(out, 0, sizeof(int)));
    spin_then_write<<<1, 1, 0, s>>>(200 * TICKS_PER_MS, out, 99, nullptr);
    CHECK(hipStreamDestroy(s)); // returns at once; the kernel still runs to the end
    CHECK(hipDeviceSynchronize());
    EXPECT_TRUE(read_int(out) == 99);

    // The handle is dead: every use is an error, never a crash (with ROCm 6's ABI, which
    // this program gets, AMD's hipErrorContextIsDestroyed; c_tests/compat checks ROCm 7's).
    EXPECT_ERR(hipStreamQuery(s), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipStreamSynchronize(s), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipStreamDestroy(s), hipErrorContextIsDestroyed);
    unsigned flags;
    EXPECT_ERR(hipStreamGetFlags(s, &flags), hipErrorContextIsDestroyed);
    // A launch on it: ROCm 6's launch validation answers hipErrorInvalidValue.
    spin_then_write<<<1, 1, 0, s>>>(0, out, 1, nullptr);
    EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);
    EXPECT_TRUE(read_int(out) == 99);
    CHECK(hipFree(out));
}

static void invalid_handles_and_null_pointers() {
    int on_stack = 0;
    hipStream_t garbage[] = {reinterpret_cast<hipStream_t>(0xdeadbeef),
                             reinterpret_cast<hipStream_t>(&on_stack),
                             reinterpret_cast<hipStream_t>(~0ull)};
    for (hipStream_t g : garbage) {
        EXPECT_ERR(hipStreamQuery(g), hipErrorContextIsDestroyed);
        EXPECT_ERR(hipStreamSynchronize(g), hipErrorContextIsDestroyed);
        EXPECT_ERR(hipStreamDestroy(g), hipErrorContextIsDestroyed);
        int p;
        EXPECT_ERR(hipStreamGetPriority(g, &p), hipErrorContextIsDestroyed);
    }
    EXPECT_TRUE(on_stack == 0);
    EXPECT_ERR(hipStreamDestroy(0), hipErrorInvalidHandle);
    EXPECT_ERR(hipStreamDestroy(hipStreamPerThread), hipErrorInvalidHandle);

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    EXPECT_ERR(hipStreamCreate(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamCreateWithFlags(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamCreateWithPriority(nullptr, 0, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetFlags(s, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetPriority(s, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetDevice(s, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamAddCallback(s, nullptr, nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipLaunchHostFunc(s, nullptr, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipExtStreamGetCUMask(s, 4, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipExtStreamCreateWithCUMask(&s, 0, nullptr), hipErrorInvalidValue);
    CHECK(hipStreamDestroy(s));
}

// ---- callbacks and host functions ----

static std::atomic<int> sequence{0};
static std::atomic<int> callback_at{-1}, host_fn_at{-1}, slow_done{0};
static hipStream_t callback_stream_seen;
static hipError_t callback_status_seen = hipErrorUnknown;
static void* callback_data_seen;

static void on_callback(hipStream_t stream, hipError_t status, void* data) {
    callback_stream_seen = stream;
    callback_status_seen = status;
    callback_data_seen = data;
    callback_at = sequence++;
}

static void on_host_fn(void*) { host_fn_at = sequence++; }

static void slow_host_fn(void*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    slow_done = 1;
}

static void callbacks_and_host_functions() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int* out;
    CHECK(hipMalloc(&out, 2 * sizeof(int)));
    CHECK(hipMemset(out, 0, 2 * sizeof(int)));

    // A callback runs after the stream's earlier work.
    spin_then_write<<<1, 1, 0, s>>>(100 * TICKS_PER_MS, out, 5, nullptr);
    int marker;
    CHECK(hipStreamAddCallback(s, on_callback, &marker, 0));
    CHECK(hipLaunchHostFunc(s, on_host_fn, nullptr));
    EXPECT_ERR(hipStreamAddCallback(s, on_callback, nullptr, 1), hipErrorInvalidValue);
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(callback_at == 0 && host_fn_at == 1); // in stream order
    EXPECT_TRUE(callback_stream_seen == s);
    EXPECT_TRUE(callback_status_seen == hipSuccess);
    EXPECT_TRUE(callback_data_seen == &marker);

    // Later work waits for a host function: an event after a kernel after it cannot
    // complete while the host function runs.
    hipEvent_t after;
    CHECK(hipEventCreate(&after));
    CHECK(hipLaunchHostFunc(s, slow_host_fn, nullptr));
    add_to<<<1, 1, 0, s>>>(out, out + 1, 1, nullptr);
    CHECK(hipEventRecord(after, s));
    while (!slow_done) {
        hipError_t e = hipEventQuery(after);
        if (e != hipErrorNotReady && !slow_done) {
            std::fprintf(stderr, "work after a host function completed before it (%s)\n",
                         hipGetErrorName(e));
            std::exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(hipEventSynchronize(after));
    EXPECT_TRUE(read_int(out + 1) == 6);

    // Callbacks on the null and per-thread streams.
    callback_at = -1;
    CHECK(hipStreamAddCallback(0, on_callback, nullptr, 0));
    CHECK(hipStreamSynchronize(0));
    EXPECT_TRUE(callback_at >= 0 && callback_stream_seen == nullptr);
    CHECK(hipLaunchHostFunc_spt(0, on_host_fn, nullptr));
            CHECK(hipStreamSynchronize(hipStreamPerThread));
    EXPECT_TRUE(host_fn_at == callback_at + 1);

    CHECK(hipEventDestroy(after));
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
}

// ---- per-thread streams ----

static void per_thread_streams() {
    int* out;
    CHECK(hipMalloc(&out, 4 * sizeof(int)));
    CHECK(hipMemset(out, 0, 4 * sizeof(int)));
    unsigned flags = 9;
    CHECK(hipStreamGetFlags(hipStreamPerThread, &flags));
    EXPECT_TRUE(flags == 0);
    std::thread workers[2];
    for (int t = 0; t < 2; ++t) {
        workers[t] = std::thread([=] {
            spin_then_write<<<1, 1, 0, hipStreamPerThread>>>(20 * TICKS_PER_MS, out + t, 100 + t,
                                                             nullptr);
            CHECK(hipGetLastError());
            CHECK(hipStreamSynchronize(hipStreamPerThread));
            EXPECT_TRUE(hipStreamQuery_spt(0) == hipSuccess);
        });
    }
    for (auto& w : workers) w.join();
    EXPECT_TRUE(read_int(out) == 100 && read_int(out + 1) == 101);

    // _spt entry points: null means the per-thread stream.
    unsigned long long ticks = 0;
    int* dst = out + 2;
    int value = 77;
    unsigned long long* when = nullptr;
    void* args[] = {&ticks, &dst, &value, &when};
    CHECK(hipLaunchKernel_spt(reinterpret_cast<const void*>(spin_then_write), dim3(1), dim3(1),
                              args, 0, 0));
    CHECK(hipStreamSynchronize_spt(0));
    EXPECT_TRUE(read_int(out + 2) == 77);
    int p = 5;
    CHECK(hipStreamGetPriority_spt(0, &p));
    EXPECT_TRUE(p == 0);
    CHECK(hipStreamGetFlags_spt(0, &flags));
    CHECK(hipFree(out));
}

// ---- CU masks ----

static void cu_masks() {
    uint32_t full[4] = {0, 0, 0, 0};
    CHECK(hipExtStreamGetCUMask(0, 4, full));
    EXPECT_TRUE(full[0] != 0); // the null stream may use every CU
    uint32_t mask[1] = {0x3};
    hipStream_t s;
    CHECK(hipExtStreamCreateWithCUMask(&s, 1, mask));
    uint32_t got[4] = {9, 9, 9, 9};
    CHECK(hipExtStreamGetCUMask(s, 4, got));
    EXPECT_TRUE(got[0] == 0x3 && got[1] == 0 && got[2] == 0 && got[3] == 0);
    int* out;
    CHECK(hipMalloc(&out, sizeof(int)));
    spin_then_write<<<1, 1, 0, s>>>(0, out, 33, nullptr);
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(read_int(out) == 33);
    // No CU enabled: the stream gets every CU (AMD's rule).
    uint32_t none[1] = {0};
    hipStream_t t;
    CHECK(hipExtStreamCreateWithCUMask(&t, 1, none));
    uint32_t all[4] = {9, 9, 9, 9};
    CHECK(hipExtStreamGetCUMask(t, 4, all));
    EXPECT_TRUE(all[0] == full[0] && all[1] == full[1] && all[2] == full[2] && all[3] == full[3]);
    CHECK(hipStreamDestroy(t));
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
}

int main() {
    priorities();
    create_flags_device();
    query_and_synchronize();
    destroy_with_work_outstanding();
    invalid_handles_and_null_pointers();
    callbacks_and_host_functions();
    per_thread_streams();
    cu_masks();
    return finish("streams");
}
