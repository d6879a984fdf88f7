// hipshim-test: targets=gfx942 env=HIPSHIM_QUEUE_POLICY=dedicated env=HSASIM_MAX_QUEUES=4 expect-stderr=fallback
//
// many_streams: more streams than the device has queues, all alive at once, one kernel each,
// plus the null stream, hipStreamPerThread, a high-priority and a CU-masked stream: every
// launch returns hipSuccess and every kernel runs exactly once (each adds 1 to its own slot).
// With `dedicated` and HSASIM_MAX_QUEUES=4 only 4 queues can be made; the rest of the streams
// share them (the runner also runs this under every policy).
#include <cstdlib>
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#include "../check.h"

__global__ void bump(unsigned* slots, int slot) { atomicAdd(&slots[slot], 1u); }

// Launches into `stream` and checks what the launch reported, as `<<<>>>` callers must
// (the kernel stub drops hipLaunchKernel's status; hipGetLastError has it).
static void launch(hipStream_t stream, unsigned* slots, int slot) {
    bump<<<1, 1, 0, stream>>>(slots, slot);
    hipError_t e = hipGetLastError();
    if (e != hipSuccess) {
        if (failures < 10) std::fprintf(stderr, "FAIL launch %d: %s\n", slot, err_name(e));
        ++failures;
    }
}

int main() {
    const int streams = 1000;
    const int extra = 4;  // null, per-thread, high priority, CU-masked
    const int slots_n = streams + extra;
    unsigned* slots = nullptr;
    EXPECT_OK(hipMalloc(&slots, slots_n * sizeof(unsigned)));
    EXPECT_OK(hipMemset(slots, 0, slots_n * sizeof(unsigned)));

    std::vector<hipStream_t> s(streams);
    for (int i = 0; i < streams; ++i) {
        EXPECT_OK(hipStreamCreate(&s[i]));
        launch(s[i], slots, i);
    }
    launch(0, slots, streams);
    launch(hipStreamPerThread, slots, streams + 1);
    int least = 0, greatest = 0;
    EXPECT_OK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    hipStream_t high = nullptr;
    EXPECT_OK(hipStreamCreateWithPriority(&high, hipStreamDefault, greatest));
    launch(high, slots, streams + 2);
    unsigned mask = 0x3;
    hipStream_t masked = nullptr;
    EXPECT_OK(hipExtStreamCreateWithCUMask(&masked, 1, &mask));
    launch(masked, slots, streams + 3);

    EXPECT_OK(hipDeviceSynchronize());
    std::vector<unsigned> ran(slots_n);
    EXPECT_OK(hipMemcpy(ran.data(), slots, slots_n * sizeof(unsigned), hipMemcpyDeviceToHost));
    int once = 0;
    for (int i = 0; i < slots_n; ++i) {
        if (ran[i] == 1) {
            ++once;
        } else if (failures < 20) {
            std::fprintf(stderr, "FAIL kernel %d ran %u times\n", i, ran[i]);
            ++failures;
        }
    }
    std::printf("%d of %d kernels ran exactly once\n", once, slots_n);

    for (hipStream_t stream : s) EXPECT_OK(hipStreamDestroy(stream));
    EXPECT_OK(hipStreamDestroy(high));
    EXPECT_OK(hipStreamDestroy(masked));
    EXPECT_OK(hipFree(slots));
    return finish("many_streams");
}
