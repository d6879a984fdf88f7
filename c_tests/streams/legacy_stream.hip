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


#include "../check.h"
#include "timing.h"


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
        EXPECT_ERR(hipStreamQuery(other_blocking), hipErrorNotReady);
        flags.set(b.flag, 1);
        CHECK(hipStreamSynchronize(other_blocking));
        EXPECT_TRUE(read_int(b.result) == 115);
        CHECK(hipFree(mid));
        std::printf("legacy_stream: blocking -> null -> blocking ok\n");
    }

    // hipStreamSynchronize(0) waits for the blocking streams too (as AMD's runtime does),
    // and hipDeviceSynchronize for every stream.
    {
        Buffers b;
        spin_then_write<<<1, 1, 0, blocking>>>(100 * TICKS_PER_MS, b.data, 9, nullptr);
        CHECK(hipStreamSynchronize(0));
        EXPECT_TRUE(hipStreamQuery(blocking) == hipSuccess);
        spin_then_write<<<1, 1, 0, nonblocking>>>(100 * TICKS_PER_MS, b.result, 4, nullptr);
        CHECK(hipDeviceSynchronize());
        EXPECT_TRUE(hipStreamQuery(nonblocking) == hipSuccess);
        EXPECT_TRUE(read_int(b.data) == 9 && read_int(b.result) == 4);
    }

    CHECK(hipStreamDestroy(blocking));
    CHECK(hipStreamDestroy(nonblocking));
    CHECK(hipStreamDestroy(other_blocking));
    return finish("legacy_stream");
}
