// hipshim-test: env=HIPSHIM_QUEUE_POLICY=dedicated
// memcpy_order: a synchronous hipMemcpy is ordered on the null stream (legacy semantics): it
// waits for the null stream and for blocking streams, never for a non-blocking stream. A
// kernel that spins on a non-blocking stream must not hold up copies of any kind (pinned,
// pageable, device to device, to and from the host); a kernel spinning on a blocking stream
// must. Each stream gets its own queue (dedicated policy), so a wait seen here comes from
// the ordering rules, not from a shared queue.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "../check.h"

__global__ void hold_until(volatile int* gate) {
    while (*gate == 0) {
    }
}

static const size_t BYTES = 1 << 20;

// Releases the held kernel if the copies have not returned by then, so that a copy that
// wrongly waits for it fails the test instead of hanging it.
struct Watchdog {
    volatile int* gate;
    std::atomic<bool> done{false};
    std::atomic<bool> fired{false};
    std::thread thread;

    explicit Watchdog(volatile int* g) : gate(g) {
        thread = std::thread([this] {
            for (int i = 0; i < 3000 && !done.load(); ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            if (!done.load()) {
                fired = true;
                *gate = 1;
            }
        });
    }
    void stop() {
        done = true;
        thread.join();
    }
};

static void copies_pass_a_non_blocking_stream(int* gate) {
    hipStream_t nb;
    CHECK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    char *dev_a = nullptr, *dev_b = nullptr, *pinned = nullptr;
    CHECK(hipMalloc(&dev_a, BYTES));
    CHECK(hipMalloc(&dev_b, BYTES));
    CHECK(hipHostMalloc(&pinned, BYTES));
    std::vector<char> pageable(BYTES, 7), back(BYTES, 0);
    std::memset(pinned, 3, BYTES);

    *gate = 0;
    hold_until<<<1, 1, 0, nb>>>(gate);
    EXPECT_OK(hipGetLastError());
    Watchdog watchdog(gate);
    EXPECT_OK(hipMemcpy(dev_a, pinned, BYTES, hipMemcpyHostToDevice));
    EXPECT_OK(hipMemcpy(dev_b, dev_a, BYTES, hipMemcpyDeviceToDevice));
    EXPECT_OK(hipMemcpy(back.data(), dev_b, BYTES, hipMemcpyDeviceToHost));
    EXPECT_EQ(back[0], 3);
    EXPECT_EQ(back[BYTES - 1], 3);
    EXPECT_OK(hipMemcpy(dev_a, pageable.data(), BYTES, hipMemcpyHostToDevice));
    EXPECT_OK(hipMemcpy(pinned, dev_a, BYTES, hipMemcpyDeviceToHost));
    EXPECT_EQ(pinned[0], 7);
    EXPECT_EQ(pinned[BYTES - 1], 7);
    EXPECT_OK(hipMemset(dev_b, 9, BYTES));
    EXPECT_OK(hipMemcpy(back.data(), dev_b, BYTES, hipMemcpyDeviceToHost));
    EXPECT_EQ(back[BYTES / 2], 9);
    // All of that happened while the kernel was still spinning.
    EXPECT_ERR(hipStreamQuery(nb), hipErrorNotReady);
    watchdog.stop();
    if (watchdog.fired.load()) {
        std::fprintf(stderr, "FAIL a synchronous copy waited for the non-blocking stream\n");
        ++failures;
    }
    *gate = 1;
    EXPECT_OK(hipStreamSynchronize(nb));
    CHECK(hipFree(dev_a));
    CHECK(hipFree(dev_b));
    CHECK(hipHostFree(pinned));
    CHECK(hipStreamDestroy(nb));
}

static void copies_wait_for_a_blocking_stream(int* gate) {
    hipStream_t blocking;
    CHECK(hipStreamCreate(&blocking));
    char *dev = nullptr, *pinned = nullptr;
    CHECK(hipMalloc(&dev, BYTES));
    CHECK(hipHostMalloc(&pinned, BYTES));
    std::memset(pinned, 5, BYTES);

    *gate = 0;
    hold_until<<<1, 1, 0, blocking>>>(gate);
    EXPECT_OK(hipGetLastError());
    std::atomic<bool> copied{false};
    hipError_t result = hipErrorUnknown;
    std::thread copier([&] {
        result = hipMemcpy(dev, pinned, BYTES, hipMemcpyHostToDevice);
        copied = true;
    });
    // However long this takes, the copy may not finish while the blocking stream's kernel
    // spins: it is ordered after it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(!copied.load());
    *gate = 1;
    copier.join();
    EXPECT_OK(result);
    EXPECT_TRUE(copied.load());
    EXPECT_OK(hipStreamSynchronize(blocking));
    CHECK(hipFree(dev));
    CHECK(hipHostFree(pinned));
    CHECK(hipStreamDestroy(blocking));
}

int main() {
    int* gate = nullptr;
    CHECK(hipHostMalloc(&gate, sizeof(int)));
    copies_pass_a_non_blocking_stream(gate);
    copies_wait_for_a_blocking_stream(gate);
    CHECK(hipHostFree(gate));
    return finish("memcpy_order");
}
