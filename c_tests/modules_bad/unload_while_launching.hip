// hipModuleUnload while another thread keeps launching the module's kernels. Once the unload
// has begun, new launches of its functions are hipErrorInvalidHandle, and the unload waits
// only for the work queued before: it returns while the launching thread is still going.
//
// Made deterministic with a kernel that holds the stream until the launcher releases it. The
// launcher releases it only when one of its launches is refused, so without refusals the
// queue never drains and the launcher gives up after MAX_TRIES launches (less than a queue's
// ring holds), reports the failure and lets the held kernel go.
#include "../check.h"
#include "own_bundle.h"

#include <atomic>
#include <chrono>
#include <thread>

// Waits until the host sets *release (or `timeout_ticks` of the 100 MHz clock pass: then
// *held = -1, so the test fails instead of hanging), then *held = 1.
extern "C" __global__ void hold(const volatile int* release, unsigned long long timeout_ticks,
                                int* held) {
    unsigned long long t0 = __builtin_amdgcn_s_memrealtime();
    while (*release == 0) {
        if (__builtin_amdgcn_s_memrealtime() - t0 > timeout_ticks) {
            *held = -1;
            return;
        }
        __builtin_amdgcn_s_sleep(10);
    }
    *held = 1;
}

extern "C" __global__ void tick(int* count) { atomicAdd(count, 1); }

static const int MAX_TRIES = 1000;
static const unsigned long long TEN_SECONDS = 1000000000ull;

int main() {
    const Bytes bundle = own_bundle();
    hipModule_t module = nullptr;
    hipFunction_t hold_fn = nullptr, tick_fn = nullptr;
    CHECK(hipModuleLoadData(&module, bundle.data()));
    CHECK(hipModuleGetFunction(&hold_fn, module, "hold"));
    CHECK(hipModuleGetFunction(&tick_fn, module, "tick"));
    int* release = nullptr;
    CHECK(hipHostMalloc(&release, sizeof(int)));
    *(volatile int*)release = 0;
    int* device = nullptr; // [0]: hold's verdict, [1]: ticks run
    CHECK(hipMalloc(&device, 2 * sizeof(int)));
    CHECK(hipMemset(device, 0, 2 * sizeof(int)));
    hipStream_t stream = nullptr;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));

    std::atomic<bool> ready{false}, unload_started{false}, unload_returned{false};
    int launched = 0, refused = 0, other_errors = 0, after_return = 0, succeeded_after_return = 0;

    std::thread launcher([&] {
        unsigned long long timeout = TEN_SECONDS;
        int* held = device;
        void* hold_args[] = {&release, &timeout, &held};
        int* count = device + 1;
        void* tick_args[] = {&count};
        EXPECT_OK(hipModuleLaunchKernel(hold_fn, 1, 1, 1, 1, 1, 1, 0, stream, hold_args, nullptr));
        for (int i = 0; i < 8; ++i) {
            EXPECT_OK(hipModuleLaunchKernel(tick_fn, 1, 1, 1, 1, 1, 1, 0, stream, tick_args,
                                            nullptr));
            ++launched;
        }
        ready = true;
        while (!unload_started) std::this_thread::yield();
        // Launch until refused; the first refusal releases the held stream.
        for (int tries = 0; refused == 0 && tries < MAX_TRIES; ++tries) {
            hipError_t e =
                hipModuleLaunchKernel(tick_fn, 1, 1, 1, 1, 1, 1, 0, stream, tick_args, nullptr);
            if (e == hipSuccess) {
                ++launched;
            } else if (e == hipErrorInvalidHandle) {
                ++refused;
            } else {
                std::fprintf(stderr, "FAIL launch during the unload: %s\n", err_name(e));
                ++other_errors;
                break;
            }
        }
        if (refused == 0)
            std::fprintf(stderr, "FAIL %d launches made after the unload began all succeeded\n",
                         launched - 8);
        *(volatile int*)release = 1;
        // Go on launching until the unload has returned, and a little after: every one is
        // refused.
        while (!unload_returned) {
            if (hipModuleLaunchKernel(tick_fn, 1, 1, 1, 1, 1, 1, 0, stream, tick_args, nullptr) !=
                hipErrorInvalidHandle)
                ++other_errors;
            std::this_thread::yield();
        }
        for (int i = 0; i < 100; ++i) {
            hipError_t e =
                hipModuleLaunchKernel(tick_fn, 1, 1, 1, 1, 1, 1, 0, stream, tick_args, nullptr);
            ++after_return;
            if (e == hipSuccess) ++succeeded_after_return;
            if (e != hipErrorInvalidHandle) ++other_errors;
        }
        (void)hipGetLastError();
    });

    while (!ready) std::this_thread::yield();
    unload_started = true;
    EXPECT_OK(hipModuleUnload(module));
    // The launcher's loop ends only once this is set: it is still going when the unload
    // returns.
    unload_returned = true;
    launcher.join();

    EXPECT_TRUE(refused > 0);
    EXPECT_EQ(other_errors, 0);
    EXPECT_EQ(after_return, 100);
    EXPECT_EQ(succeeded_after_return, 0);
    // Every launch that succeeded ran before the unload returned: the unload waited for the
    // work queued before it began, and only for that.
    int got[2] = {0, 0};
    EXPECT_OK(hipMemcpy(got, device, sizeof got, hipMemcpyDeviceToHost));
    EXPECT_EQ(got[0], 1);
    EXPECT_EQ(got[1], launched);
    EXPECT_ERR(hipModuleLaunchKernel(tick_fn, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr),
               hipErrorInvalidHandle);
    EXPECT_OK(hipStreamDestroy(stream));
    EXPECT_OK(hipFree(device));
    EXPECT_OK(hipHostFree(release));
    return finish("unload_while_launching");
}
