// hipshim-test: targets=gfx942
// Per-operation benchmark program for `hipshim bench ops`: runs one operation N times and
// prints "ns_per_op <best round> median <median round> mean <mean>" (host time per
// operation).
// `hipshim bench ops` runs it natively for time and under callgrind with N and 2N operations
// (and no untimed round) for instructions: setup and teardown cancel in the difference.
//
// Usage: ops OPERATION [N] [ROUNDS] [WARMUP]   (WARMUP: operations in an untimed first round;
// default 200, or 1 for the 64 MiB copies and graph launches)
//   launch     asynchronous hipLaunchKernel of a kernel with three arguments on an idle
//              non-blocking stream (the stream is synchronised between rounds, untimed)
//   sync       hipStreamSynchronize of an idle stream
//   record     hipEventRecord on an idle stream
//   roundtrip  launch of an empty kernel followed by hipStreamSynchronize
//   create     hipStreamCreate followed by hipStreamDestroy
//   copy4k     hipMemcpy of 4 KiB from pinned host memory to the device
//   copy4k_pageable  hipMemcpy of 4 KiB from pageable host memory (a heap buffer) to the
//              device
//   pageable   hipMemcpy of 64 MiB from pageable host memory to the device (prints GB/s too)
//   pageable_d2h  hipMemcpy of 64 MiB from the device to pageable host memory (GB/s too)
//   graph      hipGraphLaunch of an executable graph of GRAPH_NODES empty-kernel nodes in a
//              chain; N launches per round, times reported per kernel node
//   graph_eager  the same (`hipshim bench ops` runs it with HIPSHIM_GRAPH_QUEUES=0: every
//              node through the runtime's eager launch)
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// Kernel nodes of the `graph` operation's graph (cli/src/bench/ops.rs divides by it too).
static const int GRAPH_NODES = 100;

__global__ void args_kernel(int* out, int a, float b) {
    if (out != nullptr && threadIdx.x == 0 && a < 0) out[0] = static_cast<int>(b);
}

namespace {

using Clock = std::chrono::steady_clock;

struct Fixture {
    hipStream_t stream = nullptr;
    hipEvent_t event = nullptr;
    void* device = nullptr;
    void* pinned = nullptr;
    std::vector<char> pageable;
    std::vector<char> pageable4k = std::vector<char>(4096, 4);
    size_t pageable_bytes = size_t(64) << 20;
    hipGraphExec_t graph = nullptr;
};

bool is_graph(const char* op) { return !std::strcmp(op, "graph") || !std::strcmp(op, "graph_eager"); }

// A chain of GRAPH_NODES empty-kernel nodes, instantiated and launched once (untimed).
hipGraphExec_t chain_of_empty_kernels(hipStream_t stream) {
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipKernelNodeParams p = {};
    p.func = reinterpret_cast<void*>(&empty_kernel);
    p.gridDim = dim3(1);
    p.blockDim = dim3(64);
    p.kernelParams = nullptr;
    hipGraphNode_t prev = nullptr;
    for (int i = 0; i < GRAPH_NODES; ++i) {
        hipGraphNode_t node;
        CHECK(hipGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
        prev = node;
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    return exec;
}

// One timed round of `n` operations; returns ns per operation.
double round_of(const char* op, int n, Fixture& f) {
    auto t0 = Clock::now();
    if (!std::strcmp(op, "launch")) {
        for (int i = 0; i < n; ++i) args_kernel<<<1, 64, 0, f.stream>>>(nullptr, i, 1.5f);
    } else if (!std::strcmp(op, "sync")) {
        for (int i = 0; i < n; ++i) CHECK(hipStreamSynchronize(f.stream));
    } else if (!std::strcmp(op, "record")) {
        for (int i = 0; i < n; ++i) CHECK(hipEventRecord(f.event, f.stream));
    } else if (!std::strcmp(op, "roundtrip")) {
        for (int i = 0; i < n; ++i) {
            empty_kernel<<<1, 64, 0, f.stream>>>();
            CHECK(hipStreamSynchronize(f.stream));
        }
    } else if (!std::strcmp(op, "create")) {
        for (int i = 0; i < n; ++i) {
            hipStream_t s;
            CHECK(hipStreamCreate(&s));
            CHECK(hipStreamDestroy(s));
        }
    } else if (!std::strcmp(op, "copy4k")) {
        for (int i = 0; i < n; ++i)
            CHECK(hipMemcpy(f.device, f.pinned, 4096, hipMemcpyHostToDevice));
    } else if (!std::strcmp(op, "copy4k_pageable")) {
        for (int i = 0; i < n; ++i)
            CHECK(hipMemcpy(f.device, f.pageable4k.data(), 4096, hipMemcpyHostToDevice));
    } else if (!std::strcmp(op, "pageable")) {
        for (int i = 0; i < n; ++i)
            CHECK(hipMemcpy(f.device, f.pageable.data(), f.pageable_bytes,
                            hipMemcpyHostToDevice));
    } else if (!std::strcmp(op, "pageable_d2h")) {
        for (int i = 0; i < n; ++i)
            CHECK(hipMemcpy(f.pageable.data(), f.device, f.pageable_bytes,
                            hipMemcpyDeviceToHost));
    } else if (is_graph(op)) {
        for (int i = 0; i < n; ++i) CHECK(hipGraphLaunch(f.graph, f.stream));
    } else {
        std::fprintf(stderr, "unknown operation %s\n", op);
        std::exit(2);
    }
    auto t1 = Clock::now();
    // A launch that failed must not pass for a fast one.
    CHECK(hipGetLastError());
    // Untimed: every round starts on an idle stream with an empty ring.
    CHECK(hipStreamSynchronize(f.stream));
    double per = is_graph(op) ? double(n) * GRAPH_NODES : double(n);
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / per;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OPERATION [N] [ROUNDS]\n", argv[0]);
        return 2;
    }
    const char* op = argv[1];
    int n = argc > 2 ? std::atoi(argv[2]) : 256;
    int rounds = argc > 3 ? std::atoi(argv[3]) : 10;
    if (n <= 0 || rounds <= 0) {
        std::fprintf(stderr, "N and ROUNDS must be positive\n");
        return 2;
    }
    Fixture f;
    CHECK(hipStreamCreateWithFlags(&f.stream, hipStreamNonBlocking));
    CHECK(hipEventCreateWithFlags(&f.event, hipEventDisableTiming));
    CHECK(hipMalloc(&f.device, f.pageable_bytes));
    CHECK(hipHostMalloc(&f.pinned, 4096));
    std::memset(f.pinned, 1, 4096);
    bool pageable = !std::strcmp(op, "pageable") || !std::strcmp(op, "pageable_d2h");
    if (pageable) {
        f.pageable.assign(f.pageable_bytes, 2);
        // Device memory never written may still be unbacked (hsasim's is anonymous memory):
        // a copy from it would read the kernel's zero page, far faster than real bytes.
        CHECK(hipMemset(f.device, 3, f.pageable_bytes));
    }
    // Warm-up, untimed: loads the code objects, assigns the queue, touches every path once.
    empty_kernel<<<1, 64, 0, f.stream>>>();
    args_kernel<<<1, 64, 0, f.stream>>>(nullptr, 1, 1.5f);
    CHECK(hipEventRecord(f.event, f.stream));
    CHECK(hipStreamSynchronize(f.stream));
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(f.device, f.pinned, 4096, hipMemcpyHostToDevice));
    if (is_graph(op)) f.graph = chain_of_empty_kernels(f.stream);

    // A round like the timed ones, untimed: the simulated device's threads sleep while it
    // idles, and the first operations after that pay for waking them (tens of microseconds
    // on a 2-core host, where a woken thread often lands on the caller's core), which no
    // later round pays. `hipshim bench ops` asks for none in its callgrind runs, which count
    // instructions, not time (there its waits' spinning would only add noise).
    const int warmup = argc > 4 ? std::atoi(argv[4]) : (pageable || is_graph(op) ? 1 : 200);
    if (warmup > 0) round_of(op, warmup, f);

    std::vector<double> per_round;
    double total = 0;
    for (int r = 0; r < rounds; ++r) {
        per_round.push_back(round_of(op, n, f));
        total += per_round.back();
    }
    // Insertion sort: a handful of rounds, and <algorithm> is not usable with -nogpuinc.
    for (size_t i = 1; i < per_round.size(); ++i) {
        for (size_t j = i; j > 0 && per_round[j] < per_round[j - 1]; --j) {
            const double t = per_round[j];
            per_round[j] = per_round[j - 1];
            per_round[j - 1] = t;
        }
    }
    const double best = per_round.front();
    const size_t mid = per_round.size() / 2;
    const double median =
        per_round.size() % 2 ? per_round[mid] : (per_round[mid - 1] + per_round[mid]) / 2;
    std::printf("ns_per_op %.1f median %.1f mean %.1f", best, median, total / rounds);
    if (pageable) {
        std::printf(" gb_per_s %.2f", double(f.pageable_bytes) / best);
    }
    std::printf(" (%s: %d rounds of %d)\n", op, rounds, n);

    if (f.graph) CHECK(hipGraphExecDestroy(f.graph));
    CHECK(hipFree(f.device));
    CHECK(hipHostFree(f.pinned));
    CHECK(hipEventDestroy(f.event));
    CHECK(hipStreamDestroy(f.stream));
    return 0;
}
