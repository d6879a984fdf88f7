// policy: the difference the stream->queue policy makes (HIPSHIM_QUEUE_POLICY). Run by
// the c_test list with the default policy and by tests/c_tests_streams.rs under `single`,
// `dedicated`, `pool:1` and `pool:2:rr`; the program reads the variable to know which
// outcome to expect.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
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
// The policy experiment. Stream A gets a long kernel (it runs until the host sets a flag,
// or 20 s pass), stream B a short one, launched back to back. The host then watches B for
// up to 2 s and records whether B finished while A was still running; only after that
// does it release A. Device timestamps (s_memrealtime at each kernel's end) confirm the
// order. When A and B share a queue (`single`, `pool:1`) B's packet sits behind A's
// (every packet carries the barrier bit), so B completes after A; with a queue each
// (`dedicated`, or a pool of 2 or more) hsasim runs the two queues on separate packet
// processors and B completes first. The design cannot hang: A's wait is bounded.

int main() {
    const char* env = std::getenv("HIPSHIM_QUEUE_POLICY");
    std::string policy = env ? env : "pool:4";
    bool shared = policy == "single" || policy.rfind("pool:1", 0) == 0;

    hipStream_t a, b;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreate(&b));
    FlagSetter flags;
    int *flag, *out;
    unsigned long long* when;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipMalloc(&out, 2 * sizeof(int)));
    CHECK(hipMalloc(&when, 2 * sizeof(unsigned long long)));
    CHECK(hipMemset(flag, 0, sizeof(int)));
    CHECK(hipMemset(out, 0, 2 * sizeof(int)));

    wait_flag_then_write<<<1, 1, 0, a>>>(flag, 20000 * TICKS_PER_MS, out, 1, when);
    spin_then_write<<<1, 1, 0, b>>>(TICKS_PER_MS, out + 1, 2, when + 1);
    CHECK(hipGetLastError());

    hipError_t b_state = poll([&] { return hipStreamQuery(b); }, 2000);
    bool a_running = hipStreamQuery(a) == hipErrorNotReady;
    bool b_overtook = b_state == hipSuccess && a_running;
    flags.set(flag, 1);
    CHECK(hipDeviceSynchronize());

    int done[2];
    unsigned long long t[2];
    CHECK(hipMemcpy(done, out, sizeof done, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(t, when, sizeof t, hipMemcpyDeviceToHost));
    if (done[0] != 1 || done[1] != 2) {
        std::fprintf(stderr, "policy: kernels did not finish normally (A %d, B %d)\n", done[0],
                     done[1]);
        return 1;
    }
    bool b_ended_first = t[1] < t[0];
    std::printf("policy %s: B %s A (B finished %s; device end times A %llu, B %llu)\n",
                policy.c_str(), b_overtook ? "overtook" : "waited for",
                b_state == hipSuccess ? "within 2 s" : "only after A was released", t[0], t[1]);
    if (shared && (b_overtook || b_ended_first)) {
        std::fprintf(stderr, "policy %s: streams share a queue, yet B finished before A\n",
                     policy.c_str());
        return 1;
    }
    if (!shared && !(b_overtook && b_ended_first)) {
        std::fprintf(stderr, "policy %s: streams have queues of their own, yet B waited for A\n",
                     policy.c_str());
        return 1;
    }
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    std::printf("policy: PASSED\n");
    return 0;
}
