// hipshim-test: targets=gfx942 env=HIPSHIM_QUEUE_POLICY=dedicated env=HSASIM_MAX_QUEUES=3
//
// stress: 8 host threads launch tiny kernels at once into streams shared by all threads (one
// blocking, one non-blocking, one high-priority, one CU-masked), into a private stream each
// (replaced now and then without synchronising), into short-lived streams destroyed right
// after their launch, into the null stream and into hipStreamPerThread. Every launch must
// return hipSuccess and every kernel must run exactly once: launch i adds 1 to its own slot,
// and after hipDeviceSynchronize every slot reads 1. With HSASIM_MAX_QUEUES=3 most streams
// share queues whatever the policy (the runner runs this under every policy).
#include "../check.h"

#include <cstdio>
#include <thread>
#include <vector>

constexpr int kThreads = 8;
constexpr int kRounds = 48;
constexpr int kPerRound = 6;
constexpr int kSlots = kThreads * kRounds * kPerRound;
constexpr int kShared = 4;

__global__ void bump(unsigned* slots, int slot) { atomicAdd(&slots[slot], 1u); }

// Counted like every check, but only the first 20 are printed: a broken run fails thousands.
static void fail(const char* what, int where, hipError_t e) {
    if (failures.fetch_add(1) < 20) {
        std::fprintf(stderr, "FAIL %s (%d): %s\n", what, where, hipGetErrorName(e));
    }
}

static void check(const char* what, int where, hipError_t e) {
    if (e != hipSuccess) fail(what, where, e);
}

static void launch(hipStream_t stream, unsigned* slots, int slot) {
    bump<<<1, 1, 0, stream>>>(slots, slot);
    check("launch", slot, hipGetLastError());
}

static void worker(int t, hipStream_t* shared, unsigned* slots) {
    hipStream_t own = nullptr;
    const unsigned flags = t % 2 ? hipStreamNonBlocking : hipStreamDefault;
    check("create private stream", t, hipStreamCreateWithFlags(&own, flags));
    for (int r = 0; r < kRounds; ++r) {
        const int base = (t * kRounds + r) * kPerRound;
        launch(shared[(t + r) % kShared], slots, base + 0);
        launch(shared[(t + r + 1) % kShared], slots, base + 1);
        launch(own, slots, base + 2);
        launch(0, slots, base + 3);
        launch(hipStreamPerThread, slots, base + 4);
        hipStream_t brief = nullptr;
        check("create brief stream", base, hipStreamCreate(&brief));
        launch(brief, slots, base + 5);
        // Destroyed with its kernel possibly still queued: the kernel still runs.
        check("destroy brief stream", base, hipStreamDestroy(brief));
        if (r % 6 == 5) {
            check("destroy private stream", base, hipStreamDestroy(own));
            check("replace private stream", base, hipStreamCreateWithFlags(&own, flags));
        }
        if (r % 8 == 7) check("sync per-thread stream", base, hipStreamSynchronize(hipStreamPerThread));
    }
    check("sync private stream", t, hipStreamSynchronize(own));
    check("destroy private stream", t, hipStreamDestroy(own));
}

int main() {
    unsigned* slots = nullptr;
    check("hipMalloc", 0, hipMalloc(&slots, kSlots * sizeof(unsigned)));
    check("hipMemset", 0, hipMemset(slots, 0, kSlots * sizeof(unsigned)));
    int least = 0, greatest = 0;
    check("priority range", 0, hipDeviceGetStreamPriorityRange(&least, &greatest));
    hipStream_t shared[kShared] = {};
    unsigned mask = 0x5;
    check("shared blocking", 0, hipStreamCreate(&shared[0]));
    check("shared non-blocking", 1, hipStreamCreateWithFlags(&shared[1], hipStreamNonBlocking));
    check("shared high priority", 2, hipStreamCreateWithPriority(&shared[2], hipStreamDefault, greatest));
    check("shared CU-masked", 3, hipExtStreamCreateWithCUMask(&shared[3], 1, &mask));

    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, shared, slots);
    for (auto& thread : threads) thread.join();

    check("hipDeviceSynchronize", 0, hipDeviceSynchronize());
    std::vector<unsigned> ran(kSlots);
    check("copy back", 0, hipMemcpy(ran.data(), slots, kSlots * sizeof(unsigned), hipMemcpyDeviceToHost));
    int once = 0;
    for (int i = 0; i < kSlots; ++i) {
        if (ran[i] == 1) {
            ++once;
        } else if (failures.fetch_add(1) < 20) {
            std::fprintf(stderr, "FAIL kernel %d (thread %d, round %d, launch %d) ran %u times\n", i,
                         i / (kRounds * kPerRound), i / kPerRound % kRounds, i % kPerRound, ran[i]);
        }
    }
    for (hipStream_t s : shared) check("destroy shared stream", 0, hipStreamDestroy(s));
    check("hipFree", 0, hipFree(slots));
    std::printf("%d of %d kernels from %d threads ran exactly once\n", once, kSlots, kThreads);
    return finish("stress");
}
