// hipshim-test: targets=gfx942
// Launch benchmark: ns per asynchronous hipLaunchKernel of an empty kernel (host side only:
// the time to return from the launch, not the kernel's run time). Run by benches/launch.rs
// with tracing off, with HIPSHIM_TRACE and with HIPSHIM_LOG=trace.
// Usage: launch [launches per round] [rounds]; prints "ns_per_launch <best round>".
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t err_ = (call);                                                          \
        if (err_ != hipSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                         hipGetErrorName(err_), static_cast<int>(err_));                   \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
    int per_round = argc > 1 ? std::atoi(argv[1]) : 256;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    // Warm-up: loads the code object and assigns the queue.
    empty_kernel<<<1, 64, 0, s>>>();
    CHECK(hipStreamSynchronize(s));
    double best = 1e30, total = 0;
    for (int r = 0; r < rounds; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < per_round; ++i) {
            empty_kernel<<<1, 64, 0, s>>>();
        }
        auto t1 = std::chrono::steady_clock::now();
        double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / per_round;
        if (ns < best) best = ns;
        total += ns;
        // Outside the timed part: the queue drains so every round starts with room.
        CHECK(hipStreamSynchronize(s));
    }
    std::printf("ns_per_launch %.1f mean %.1f (%d rounds of %d launches)\n", best,
                total / rounds, rounds, per_round);
    return 0;
}
