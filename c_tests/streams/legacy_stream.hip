// hipshim-test: env=HIPSHIM_QUEUE_POLICY=dedicated
// legacy_stream: the null stream's legacy semantics. Work on the null stream waits for
// every blocking stream (including the per-thread stream) and blocking streams wait for
// it; non-blocking streams are not ordered with it, and blocking streams are not ordered
// with each other. Each stream gets its own queue (dedicated policy), so any ordering
// observed comes from the barrier packets the legacy rules add, not from shared queues.
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
// Each case holds one stream with a kernel that waits for a flag, enqueues work on another
// stream that reads what the held kernel writes, and checks (before releasing the flag)
// whether that work could run: it must wait exactly when legacy semantics order the two.

struct Buffers {
    int *flag, *data, *result;
    Buffers() {
        CHECK(hipMalloc(&flag, sizeof(int)));
        CHECK(hipMalloc(&data, sizeof(int)));
        CHECK(hipMalloc(&result, sizeof(int)));
        reset();
    }
    void reset() {
        CHECK(hipMemset(flag, 0, sizeof(int)));
        CHECK(hipMemset(data, 0, sizeof(int)));
        CHECK(hipMemset(result, 0, sizeof(int)));
    }
    ~Buffers() {
        hipFree(flag);
        hipFree(data);
        hipFree(result);
    }
};

static const unsigned long long TIMEOUT = 20000 * TICKS_PER_MS;

// `later` (on stream `second`) reads `data`, which the held kernel on `first` writes.
// If `ordered`, `second` must not complete while `first` is held, and must see the
// write; otherwise it must complete while `first` is still held.
static void check_case(const char* name, hipStream_t first, hipStream_t second, bool ordered) {
    Buffers b;
    FlagSetter flags;
    wait_flag_then_write<<<1, 1, 0, first>>>(b.flag, TIMEOUT, b.data, 5, nullptr);
    add_to<<<1, 1, 0, second>>>(b.data, b.result, 100, nullptr);
    if (ordered) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        hipError_t e = hipStreamQuery(second);
        if (e != hipErrorNotReady) {
            std::fprintf(stderr, "%s: the second stream ran ahead of the first (%s)\n", name,
                         hipGetErrorName(e));
            std::exit(1);
        }
        flags.set(b.flag, 1);
        CHECK(hipStreamSynchronize(second));
        if (read_int(b.result) != 105) {
            std::fprintf(stderr, "%s: the second stream saw %d, expected 105\n", name,
                         read_int(b.result) - 100);
            std::exit(1);
        }
    } else {
        hipError_t e = poll([&] { return hipStreamQuery(second); }, 10000);
        bool first_held = hipStreamQuery(first) == hipErrorNotReady;
        flags.set(b.flag, 1);
        CHECK(hipStreamSynchronize(first));
        if (e != hipSuccess || !first_held) {
            std::fprintf(stderr, "%s: the second stream waited for the first (%s, first %s)\n",
                         name, hipGetErrorName(e), first_held ? "held" : "done");
            std::exit(1);
        }
    }
    CHECK(hipDeviceSynchronize());
    if (read_int(b.data) != 5) {
        std::fprintf(stderr, "%s: the held kernel timed out\n", name);
        std::exit(1);
    }
    std::printf("legacy_stream: %s ok\n", name);
}

int main() {
    hipStream_t blocking, nonblocking, other_blocking;
    CHECK(hipStreamCreate(&blocking));
    CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));
    CHECK(hipStreamCreate(&other_blocking));

    check_case("null waits for a blocking stream", blocking, 0, true);
    check_case("a blocking stream waits for null", 0, blocking, true);
    check_case("hipStreamLegacy is the null stream", blocking, hipStreamLegacy, true);
    check_case("null waits for the per-thread stream", hipStreamPerThread, 0, true);
    check_case("null does not wait for a non-blocking stream", nonblocking, 0, false);
    check_case("a non-blocking stream does not wait for null", 0, nonblocking, false);
    check_case("blocking streams do not wait for each other", blocking, other_blocking, false);

    // Transitively: blocking -> null -> other blocking.
    {
        Buffers b;
        FlagSetter flags;
        int* mid;
        CHECK(hipMalloc(&mid, sizeof(int)));
        wait_flag_then_write<<<1, 1, 0, blocking>>>(b.flag, TIMEOUT, b.data, 5, nullptr);
        add_to<<<1, 1>>>(b.data, mid, 10, nullptr);
        add_to<<<1, 1, 0, other_blocking>>>(mid, b.result, 100, nullptr);
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        EXPECT_ERR(hipErrorNotReady, hipStreamQuery(other_blocking));
        flags.set(b.flag, 1);
        CHECK(hipStreamSynchronize(other_blocking));
        EXPECT(read_int(b.result) == 115);
        CHECK(hipFree(mid));
        std::printf("legacy_stream: blocking -> null -> blocking ok\n");
    }

    // hipStreamSynchronize(0) waits for the blocking streams too (as AMD's runtime does),
    // and hipDeviceSynchronize for every stream.
    {
        Buffers b;
        spin_then_write<<<1, 1, 0, blocking>>>(100 * TICKS_PER_MS, b.data, 9, nullptr);
        CHECK(hipStreamSynchronize(0));
        EXPECT(hipStreamQuery(blocking) == hipSuccess);
        spin_then_write<<<1, 1, 0, nonblocking>>>(100 * TICKS_PER_MS, b.result, 4, nullptr);
        CHECK(hipDeviceSynchronize());
        EXPECT(hipStreamQuery(nonblocking) == hipSuccess);
        EXPECT(read_int(b.data) == 9 && read_int(b.result) == 4);
    }

    CHECK(hipStreamDestroy(blocking));
    CHECK(hipStreamDestroy(nonblocking));
    CHECK(hipStreamDestroy(other_blocking));
    std::printf("legacy_stream: PASSED\n");
    return 0;
}
