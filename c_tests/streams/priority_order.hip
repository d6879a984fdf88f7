// hipshim-test: env=HIPSHIM_QUEUE_POLICY=dedicated
// priority_order: a high-priority stream's work runs ahead of lower-priority streams' when
// they compete for the device, as the GPU's dispatcher gives compute units to the
// highest-priority queue that has workgroups waiting (hipStreamCreateWithPriority sets the
// queue priority). Three streams, low, normal and high, each run one kernel: the high one has
// the most workgroups, the low one the fewest, launched with the low stream's first. Shared
// equally, the low stream would finish first; by priority the high one finishes first, then
// the normal, then the low. The workgroup that finishes a kernel takes a ticket from a device
// counter, so the tickets give the order in which the kernels finished; the events recorded
// after them agree. So that the streams compete from the start, a workgroup of the low or
// normal kernel does its work only once the next more urgent kernel has started. Runs in
// hsasim's threaded and deterministic modes (tests/c_tests_streams.rs); each stream has a
// queue of its own (dedicated policy).
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../check.h"

static const int THREADS = 256;
static const int ROUNDS = 2048;
// Workgroups per stream: low, normal, high.
static const int BLOCKS[3] = {64, 128, 192};
static const int N = 192 * THREADS; // elements per stream (the most a kernel writes)
static const char* const NAMES[3] = {"low", "normal", "high"};

// Words the kernels share.
struct Shared {
    unsigned started[3]; // by stream: its kernel has started
    unsigned gave_up;    // a workgroup stopped waiting for a more urgent kernel to start
    unsigned finished[3]; // workgroups finished, by stream
    unsigned counter;
    unsigned tickets[3];
};

// Integer work whose result the host can check exactly. `stream`: 0 low, 1 normal, 2 high.
__global__ void work(unsigned* data, int rounds, int stream, Shared* shared) {
    if (threadIdx.x == 0) {
        __hip_atomic_store(&shared->started[stream], 1u, __ATOMIC_RELEASE,
                           __HIP_MEMORY_SCOPE_AGENT);
        // Wait for the more urgent kernel to start, but never for ever: where it cannot start
        // (a device that runs one kernel at a time, in another order) the kernels then run
        // one after the other and the tickets show that order.
        for (long i = 0; stream < 2 && i < (1L << 22); ++i) {
            if (__hip_atomic_load(&shared->started[stream + 1], __ATOMIC_ACQUIRE,
                                  __HIP_MEMORY_SCOPE_AGENT) ||
                __hip_atomic_load(&shared->gave_up, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT))
                break;
            if (i + 1 == (1L << 22))
                __hip_atomic_store(&shared->gave_up, 1u, __ATOMIC_RELAXED,
                                   __HIP_MEMORY_SCOPE_AGENT);
        }
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = data[i];
    for (int r = 0; r < rounds; ++r) {
        x = x * 1664525u + 1013904223u;
    }
    data[i] = x;
    __syncthreads();
    if (threadIdx.x == 0 &&
        __hip_atomic_fetch_add(&shared->finished[stream], 1u, __ATOMIC_ACQ_REL,
                               __HIP_MEMORY_SCOPE_AGENT) == gridDim.x - 1) {
        shared->tickets[stream] = __hip_atomic_fetch_add(&shared->counter, 1u, __ATOMIC_RELAXED,
                                                         __HIP_MEMORY_SCOPE_AGENT);
    }
}

int main() {
    int least = 0, greatest = 0;
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT_TRUE(least > greatest); // lower numbers are more urgent
    const int priority[3] = {least, (least + greatest) / 2, greatest};

    hipStream_t streams[3];
    for (int s = 0; s < 3; ++s) {
        CHECK(hipStreamCreateWithPriority(&streams[s], hipStreamDefault, priority[s]));
    }
    unsigned* data = nullptr;
    Shared* shared = nullptr;
    CHECK(hipMalloc(&data, 3 * N * sizeof(unsigned)));
    CHECK(hipMalloc(&shared, sizeof(Shared)));
    std::vector<unsigned> start(3 * N);
    for (int i = 0; i < 3 * N; ++i) {
        start[i] = i * 2654435761u;
    }
    CHECK(hipMemcpy(data, start.data(), 3 * N * sizeof(unsigned), hipMemcpyHostToDevice));
    CHECK(hipMemset(shared, 0, sizeof(Shared)));

    hipEvent_t done[3];
    for (int s = 0; s < 3; ++s) {
        CHECK(hipEventCreate(&done[s]));
        work<<<BLOCKS[s], THREADS, 0, streams[s]>>>(data + s * N, ROUNDS, s, shared);
        CHECK(hipGetLastError());
        CHECK(hipEventRecord(done[s], streams[s]));
    }
    // Waiting for the low stream's event names none of the kernels: in deterministic mode the
    // waiting thread runs whatever kernel is ready, and takes the highest-priority one first.
    CHECK(hipEventSynchronize(done[0]));
    CHECK(hipDeviceSynchronize());

    Shared got;
    CHECK(hipMemcpy(&got, shared, sizeof got, hipMemcpyDeviceToHost));
    std::printf("finish order (tickets): low %u, normal %u, high %u%s\n", got.tickets[0],
                got.tickets[1], got.tickets[2],
                got.gave_up ? " (a kernel gave up waiting for a more urgent one to start)" : "");
    EXPECT_EQ(got.counter, 3);
    EXPECT_EQ(got.tickets[2], 0); // high first
    EXPECT_EQ(got.tickets[1], 1); // then normal
    EXPECT_EQ(got.tickets[0], 2); // low last
    // The events recorded after the kernels complete in the same order when one thread runs
    // everything. With a packet-processor thread per queue, each event takes its time when its
    // own thread gets to it, and a thread the host deschedules right after its kernel (a busy
    // host) stamps its event after a later kernel's: the tickets above are the order.
    float high_to_normal = 0, normal_to_low = 0;
    CHECK(hipEventElapsedTime(&high_to_normal, done[2], done[1]));
    CHECK(hipEventElapsedTime(&normal_to_low, done[1], done[0]));
    const char* threads = std::getenv("HSASIM_THREADS");
    if (threads && std::strcmp(threads, "0") == 0) {
        EXPECT_TRUE(high_to_normal > 0);
        EXPECT_TRUE(normal_to_low > 0);
    }

    std::vector<unsigned> out(3 * N);
    CHECK(hipMemcpy(out.data(), data, 3 * N * sizeof(unsigned), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int s = 0; s < 3; ++s) {
        for (int i = 0; i < N; ++i) {
            unsigned x = start[s * N + i];
            for (int r = 0; i < BLOCKS[s] * THREADS && r < ROUNDS; ++r) {
                x = x * 1664525u + 1013904223u;
            }
            if (out[s * N + i] != x && wrong++ < 5) {
                std::fprintf(stderr, "FAIL %s stream, element %d: %u, expected %u\n", NAMES[s], i,
                             out[s * N + i], x);
            }
        }
    }
    EXPECT_EQ(wrong, 0);

    for (int s = 0; s < 3; ++s) {
        CHECK(hipEventDestroy(done[s]));
        CHECK(hipStreamDestroy(streams[s]));
    }
    CHECK(hipFree(data));
    CHECK(hipFree(shared));
    return finish("priority_order");
}
