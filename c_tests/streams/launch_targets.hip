// launch_targets: hipLaunchKernel finds its kernel and stream through the calling thread's
// record of its recent launches (runtime/launch.rs). Launches that alternate kernels and
// streams (created, null, per-thread) must each reach their own, and a destroyed stream must
// stop taking launches at once: on the thread whose record still names it, and on a thread
// that had it cached while another thread destroyed it.
#include "../check.h"

#include <atomic>
#include <thread>

constexpr int N = 64;

__global__ void add(int* out, int value) { out[threadIdx.x] += value; }
__global__ void twice(int* out) { out[threadIdx.x] *= 2; }

// Every element of `dev` reads `want`.
static void expect_all(const int* dev, int want) {
    int host[N];
    CHECK(hipMemcpy(host, dev, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != want;
    EXPECT_EQ(wrong, 0);
}

int main() {
    hipStream_t created, blocking;
    CHECK(hipStreamCreateWithFlags(&created, hipStreamNonBlocking));
    CHECK(hipStreamCreate(&blocking));
    hipStream_t streams[] = {created, blocking, nullptr, hipStreamPerThread};
    const int count = sizeof streams / sizeof streams[0];
    int* buffers[count];
    for (int k = 0; k < count; ++k) {
        CHECK(hipMalloc(&buffers[k], N * sizeof(int)));
        CHECK(hipMemset(buffers[k], 0, N * sizeof(int)));
    }

    // Two kernels on four streams, in turn: eight targets, each launched again and again.
    int want[count] = {};
    for (int round = 0; round < 12; ++round) {
        for (int k = 0; k < count; ++k) {
            add<<<1, N, 0, streams[k]>>>(buffers[k], k + 1);
            twice<<<1, N, 0, streams[k]>>>(buffers[k]);
            want[k] = (want[k] + k + 1) * 2;
        }
    }
    EXPECT_OK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    for (int k = 0; k < count; ++k) expect_all(buffers[k], want[k]);

    // Destroyed on this thread, right after launches on it: refused, and nothing runs.
    add<<<1, N, 0, created>>>(buffers[0], 1);
    CHECK(hipStreamSynchronize(created));
    want[0] += 1;
    CHECK(hipStreamDestroy(created));
    add<<<1, N, 0, created>>>(buffers[0], 1000);
    hipError_t refused = hipGetLastError();
    // The ROCm 6 profile's code for a launch on a destroyed stream (compat::Abi).
    EXPECT_TRUE(refused == hipErrorInvalidValue);
    CHECK(hipDeviceSynchronize());
    expect_all(buffers[0], want[0]);

    // Destroyed by this thread while another thread has it cached.
    hipStream_t shared;
    CHECK(hipStreamCreateWithFlags(&shared, hipStreamNonBlocking));
    std::atomic<int> step{0};
    hipError_t first = hipErrorUnknown, after = hipSuccess;
    std::thread other([&] {
        add<<<1, N, 0, shared>>>(buffers[1], 5);
        first = hipGetLastError();
        (void)hipStreamSynchronize(shared);
        step = 1;
        while (step.load() != 2) std::this_thread::yield();
        add<<<1, N, 0, shared>>>(buffers[1], 1000);
        after = hipGetLastError();
    });
    while (step.load() != 1) std::this_thread::yield();
    CHECK(hipStreamDestroy(shared));
    step = 2;
    other.join();
    EXPECT_OK(first);
    EXPECT_TRUE(after == hipErrorInvalidValue);
    CHECK(hipDeviceSynchronize());
    expect_all(buffers[1], want[1] + 5);

    // A stream created afterwards is a new handle and takes launches as before.
    hipStream_t fresh;
    CHECK(hipStreamCreate(&fresh));
    add<<<1, N, 0, fresh>>>(buffers[0], 2);
    EXPECT_OK(hipGetLastError());
    CHECK(hipStreamSynchronize(fresh));
    expect_all(buffers[0], want[0] + 2);

    CHECK(hipStreamDestroy(fresh));
    CHECK(hipStreamDestroy(blocking));
    for (int k = 0; k < count; ++k) CHECK(hipFree(buffers[k]));
    return finish("launch_targets");
}
