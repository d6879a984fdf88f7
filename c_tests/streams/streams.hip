// streams: creation (flags, priorities, CU masks), query and synchronize, destroy with
// work outstanding, callbacks and host functions in stream order, per-thread streams and
// the _spt entry points, and the errors for dead or garbage handles and null pointers.
#include <hip/hip_runtime.h>

#include <atomic>
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

static void priorities() {
    int least = 99, greatest = 99;
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT(least == 1 && greatest == -1);
    CHECK(hipDeviceGetStreamPriorityRange(nullptr, &greatest)); // either may be null
    const int asked[] = {-5, -1, 0, 1, 7};
    const int want[] = {-1, -1, 0, 1, 1}; // clamped into [greatest, least]
    for (int i = 0; i < 5; ++i) {
        hipStream_t s;
        CHECK(hipStreamCreateWithPriority(&s, hipStreamDefault, asked[i]));
        int p = 42;
        CHECK(hipStreamGetPriority(s, &p));
        EXPECT(p == want[i]);
        int* out;
        CHECK(hipMalloc(&out, sizeof(int)));
        spin_then_write<<<1, 1, 0, s>>>(0, out, 10 + i, nullptr);
        CHECK(hipStreamSynchronize(s));
        EXPECT(read_int(out) == 10 + i);
        CHECK(hipFree(out));
        CHECK(hipStreamDestroy(s));
    }
    int p = 42;
    CHECK(hipStreamGetPriority(0, &p));
    EXPECT(p == 0);
}

static void create_flags_device() {
    hipStream_t a, b;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    EXPECT(a != b && a != nullptr && b != nullptr);
    unsigned flags = 99;
    CHECK(hipStreamGetFlags(a, &flags));
    EXPECT(flags == hipStreamDefault);
    CHECK(hipStreamGetFlags(b, &flags));
    EXPECT(flags == hipStreamNonBlocking);
    CHECK(hipStreamGetFlags(0, &flags));
    EXPECT(flags == 0);
    int dev = -1;
    CHECK(hipStreamGetDevice(b, &dev));
    EXPECT(dev == 0);
    CHECK(hipStreamGetDevice(0, &dev));
    EXPECT(dev == 0);
    EXPECT(hipGetStreamDeviceId(a) == 0);
    hipStream_t bad;
    EXPECT_ERR(hipErrorInvalidValue, hipStreamCreateWithFlags(&bad, 0x10));
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
    EXPECT_ERR(hipErrorNotReady, hipStreamQuery(s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamQuery(s));
    EXPECT(read_int(out) == 7);
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
    EXPECT(read_int(out) == 99);

    // The handle is dead: every use is an invalid handle, never a crash.
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamQuery(s));
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamSynchronize(s));
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamDestroy(s));
    unsigned flags;
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamGetFlags(s, &flags));
    spin_then_write<<<1, 1, 0, s>>>(0, out, 1, nullptr);
    EXPECT_ERR(hipErrorInvalidHandle, hipGetLastError());
    EXPECT(read_int(out) == 99);
    CHECK(hipFree(out));
}

static void invalid_handles_and_null_pointers() {
    int on_stack = 0;
    hipStream_t garbage[] = {reinterpret_cast<hipStream_t>(0xdeadbeef),
                             reinterpret_cast<hipStream_t>(&on_stack),
                             reinterpret_cast<hipStream_t>(~0ull)};
    for (hipStream_t g : garbage) {
        EXPECT_ERR(hipErrorInvalidHandle, hipStreamQuery(g));
        EXPECT_ERR(hipErrorInvalidHandle, hipStreamSynchronize(g));
        EXPECT_ERR(hipErrorInvalidHandle, hipStreamDestroy(g));
        int p;
        EXPECT_ERR(hipErrorInvalidHandle, hipStreamGetPriority(g, &p));
    }
    EXPECT(on_stack == 0);
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamDestroy(0));
    EXPECT_ERR(hipErrorInvalidHandle, hipStreamDestroy(hipStreamPerThread));

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamCreate(nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamCreateWithFlags(nullptr, 0));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamCreateWithPriority(nullptr, 0, 0));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamGetFlags(s, nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamGetPriority(s, nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamGetDevice(s, nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipStreamAddCallback(s, nullptr, nullptr, 0));
    EXPECT_ERR(hipErrorInvalidValue, hipLaunchHostFunc(s, nullptr, nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipExtStreamGetCUMask(s, 4, nullptr));
    EXPECT_ERR(hipErrorInvalidValue, hipExtStreamCreateWithCUMask(&s, 0, nullptr));
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
    EXPECT_ERR(hipErrorInvalidValue, hipStreamAddCallback(s, on_callback, nullptr, 1));
    CHECK(hipStreamSynchronize(s));
    EXPECT(callback_at == 0 && host_fn_at == 1); // in stream order
    EXPECT(callback_stream_seen == s);
    EXPECT(callback_status_seen == hipSuccess);
    EXPECT(callback_data_seen == &marker);

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
    EXPECT(read_int(out + 1) == 6);

    // Callbacks on the null and per-thread streams.
    callback_at = -1;
    CHECK(hipStreamAddCallback(0, on_callback, nullptr, 0));
    CHECK(hipStreamSynchronize(0));
    EXPECT(callback_at >= 0 && callback_stream_seen == nullptr);
    CHECK(hipLaunchHostFunc_spt(0, on_host_fn, nullptr));
    CHECK(hipStreamSynchronize(hipStreamPerThread));
    EXPECT(host_fn_at == callback_at + 1);

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
    EXPECT(flags == 0);
    std::thread workers[2];
    for (int t = 0; t < 2; ++t) {
        workers[t] = std::thread([=] {
            spin_then_write<<<1, 1, 0, hipStreamPerThread>>>(20 * TICKS_PER_MS, out + t, 100 + t,
                                                             nullptr);
            CHECK(hipGetLastError());
            CHECK(hipStreamSynchronize(hipStreamPerThread));
            EXPECT(hipStreamQuery_spt(0) == hipSuccess);
        });
    }
    for (auto& w : workers) w.join();
    EXPECT(read_int(out) == 100 && read_int(out + 1) == 101);

    // _spt entry points: null means the per-thread stream.
    unsigned long long ticks = 0;
    int* dst = out + 2;
    int value = 77;
    unsigned long long* when = nullptr;
    void* args[] = {&ticks, &dst, &value, &when};
    CHECK(hipLaunchKernel_spt(reinterpret_cast<const void*>(spin_then_write), dim3(1), dim3(1),
                              args, 0, 0));
    CHECK(hipStreamSynchronize_spt(0));
    EXPECT(read_int(out + 2) == 77);
    int p = 5;
    CHECK(hipStreamGetPriority_spt(0, &p));
    EXPECT(p == 0);
    CHECK(hipStreamGetFlags_spt(0, &flags));
    CHECK(hipFree(out));
}

// ---- CU masks ----

static void cu_masks() {
    uint32_t full[4] = {0, 0, 0, 0};
    CHECK(hipExtStreamGetCUMask(0, 4, full));
    EXPECT(full[0] != 0); // the null stream may use every CU
    uint32_t mask[1] = {0x3};
    hipStream_t s;
    CHECK(hipExtStreamCreateWithCUMask(&s, 1, mask));
    uint32_t got[4] = {9, 9, 9, 9};
    CHECK(hipExtStreamGetCUMask(s, 4, got));
    EXPECT(got[0] == 0x3 && got[1] == 0 && got[2] == 0 && got[3] == 0);
    int* out;
    CHECK(hipMalloc(&out, sizeof(int)));
    spin_then_write<<<1, 1, 0, s>>>(0, out, 33, nullptr);
    CHECK(hipStreamSynchronize(s));
    EXPECT(read_int(out) == 33);
    uint32_t none[1] = {0};
    hipStream_t t;
    EXPECT_ERR(hipErrorInvalidValue, hipExtStreamCreateWithCUMask(&t, 1, none));
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
    std::printf("streams: PASSED\n");
    return 0;
}
