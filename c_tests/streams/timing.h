// What the c_tests/streams programs share: kernels that spin, wait for a host flag or add,
// each stamping when it finished (to show order), and the host helpers that drive them.
#ifndef C_TESTS_STREAMS_TIMING_H
#define C_TESTS_STREAMS_TIMING_H

#include "../check.h"

#include <chrono>
#include <thread>

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

#endif // C_TESTS_STREAMS_TIMING_H
