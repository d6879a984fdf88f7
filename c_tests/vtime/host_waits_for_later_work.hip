// hipshim-test: env=HSASIM_TIME=virtual
//
// Virtual time, a kernel that waits for the host while the host waits for later work: stream
// A's single workgroup spins until a flag is set, stream B's kernel (launched after it) is
// short, and the host synchronizes B before it sets the flag. On a GPU B runs beside A and
// the host goes on. Virtual time commits work in the order it was submitted, so B's
// completion waited for A, which waits for the host: the synchronize took 20 s (its patience)
// and A's own timeout ran out meanwhile. hsasim now passes a running single-workgroup kernel
// that certainly ends after the later work once that work has waited a second. The
// watchdog (10 s) fails the program where it would not.
#include "../check.h"

#include <chrono>
#include <cstdio>
#include <thread>

// Spins until *flag is set or `timeout` clock ticks pass (then -1: the test fails rather
// than hangs), then stores 1 and the time it ended.
__global__ void wait_flag(const volatile int* flag, unsigned long long timeout, int* out,
                          unsigned long long* when) {
    unsigned long long t0 = __builtin_amdgcn_s_memrealtime();
    while (*flag == 0) {
        if (__builtin_amdgcn_s_memrealtime() - t0 > timeout) {
            *out = -1;
            *when = __builtin_amdgcn_s_memrealtime();
            return;
        }
    }
    *out = 1;
    *when = __builtin_amdgcn_s_memrealtime();
}

__global__ void short_kernel(int* out, unsigned long long* when) {
    *out = 2;
    *when = __builtin_amdgcn_s_memrealtime();
}

int main() {
    // Fail rather than wait out the old 20 s patience.
    std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::fprintf(stderr, "host_waits_for_later_work: FAILED, still running after 10 s\n");
        std::_Exit(1);
    }).detach();

    hipStream_t a, b, setter;
    CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&setter, hipStreamNonBlocking));
    int *flag, *out;
    unsigned long long* when;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipMalloc(&out, 2 * sizeof(int)));
    CHECK(hipMalloc(&when, 2 * sizeof(unsigned long long)));
    CHECK(hipMemset(flag, 0, sizeof(int)));
    CHECK(hipMemset(out, 0, 2 * sizeof(int)));

    for (int round = 0; round < 3; ++round) {
        // 100 MHz clock: a minute of virtual time before A gives up.
        wait_flag<<<1, 1, 0, a>>>(flag, 6000000000ull, out, when);
        short_kernel<<<1, 1, 0, b>>>(out + 1, when + 1);
        CHECK(hipGetLastError());
        CHECK(hipStreamSynchronize(b));
        EXPECT_ERR(hipStreamQuery(a), hipErrorNotReady);
        static int one = 1;
        CHECK(hipMemcpyAsync(flag, &one, sizeof one, hipMemcpyHostToDevice, setter));
        CHECK(hipDeviceSynchronize());
        int done[2];
        unsigned long long t[2];
        CHECK(hipMemcpy(done, out, sizeof done, hipMemcpyDeviceToHost));
        CHECK(hipMemcpy(t, when, sizeof t, hipMemcpyDeviceToHost));
        EXPECT_EQ(done[0], 1);
        EXPECT_EQ(done[1], 2);
        EXPECT_TRUE(t[1] < t[0]);
        CHECK(hipMemset(flag, 0, sizeof(int)));
        CHECK(hipMemset(out, 0, 2 * sizeof(int)));
    }
    return finish("host_waits_for_later_work");
}
