// policy: the difference the stream->queue policy makes (HIPSHIM_QUEUE_POLICY). Run by
// the c_test list with the default policy and by tests/c_tests_streams.rs under `single`,
// `dedicated`, `pool:1` and `pool:2:rr`; the program reads the variable to know which
// outcome to expect.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>


#include "../check.h"
#include "timing.h"


// ---------------------------------------------------------------------------------------
// The policy experiment. Stream A gets a long kernel (it runs until the host sets a flag,
// or 20 s pass), stream B a short one, launched back to back. The host then watches B for
// up to 2 s and records whether B finished while A was still running; only after that
// does it release A. Device timestamps (s_memrealtime at each kernel's end) confirm the
// order. When A and B share a queue (`single`, `pool:1`) B's packet sits behind A's
// (every packet carries the barrier bit), so B completes after A; with a queue each
// (`dedicated`, or a pool of 2 or more) hsasim runs the two queues on separate packet
// processors and B completes first. The design cannot hang: A's wait is bounded.

int main() {
    const char* env = std::getenv("HIPSHIM_QUEUE_POLICY");
    std::string policy = env ? env : "pool:4";
    bool shared = policy == "single" || policy.rfind("pool:1", 0) == 0;

    hipStream_t a, b;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreate(&b));
    FlagSetter flags;
    int *flag, *out;
    unsigned long long* when;
    CHECK(hipMalloc(&flag, sizeof(int)));
    CHECK(hipMalloc(&out, 2 * sizeof(int)));
    CHECK(hipMalloc(&when, 2 * sizeof(unsigned long long)));
    CHECK(hipMemset(flag, 0, sizeof(int)));
    CHECK(hipMemset(out, 0, 2 * sizeof(int)));

    wait_flag_then_write<<<1, 1, 0, a>>>(flag, 20000 * TICKS_PER_MS, out, 1, when);
    spin_then_write<<<1, 1, 0, b>>>(TICKS_PER_MS, out + 1, 2, when + 1);
    CHECK(hipGetLastError());

    hipError_t b_state = poll([&] { return hipStreamQuery(b); }, 2000);
    bool a_running = hipStreamQuery(a) == hipErrorNotReady;
    bool b_overtook = b_state == hipSuccess && a_running;
    flags.set(flag, 1);
    CHECK(hipDeviceSynchronize());

    int done[2];
    unsigned long long t[2];
    CHECK(hipMemcpy(done, out, sizeof done, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(t, when, sizeof t, hipMemcpyDeviceToHost));
    if (done[0] != 1 || done[1] != 2) {
        std::fprintf(stderr, "policy: kernels did not finish normally (A %d, B %d)\n", done[0],
                     done[1]);
        return 1;
    }
    bool b_ended_first = t[1] < t[0];
    std::printf("policy %s: B %s A (B finished %s; device end times A %llu, B %llu)\n",
                policy.c_str(), b_overtook ? "overtook" : "waited for",
                b_state == hipSuccess ? "within 2 s" : "only after A was released", t[0], t[1]);
    if (shared && (b_overtook || b_ended_first)) {
        std::fprintf(stderr, "policy %s: streams share a queue, yet B finished before A\n",
                     policy.c_str());
        return 1;
    }
    if (!shared && !(b_overtook && b_ended_first)) {
        std::fprintf(stderr, "policy %s: streams have queues of their own, yet B waited for A\n",
                     policy.c_str());
        return 1;
    }
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    return finish("policy");
}
