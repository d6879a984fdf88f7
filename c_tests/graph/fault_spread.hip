// hipshim-test: env=HIPSHIM_GRAPH_QUEUES=4 expect-stderr=0xdead0000
// A kernel node that faults on a branch queue of a graph launch (HIPSHIM_GRAPH_QUEUES=4): the
// stream's join waits on that queue through a barrier-AND, and the fault reaches the stream
// through it. Nothing hangs; the stream reports hipErrorIllegalAddress once at its next
// synchronize, the device-wide call once; the node behind the join never runs; afterwards the
// stream and graph launches work again (on new queues).
#include "graph.h"

// A store to an address no allocation covers.
__global__ void store_to_nowhere(int value) {
    int* nowhere = reinterpret_cast<int*>(0xdead0000ull);
    nowhere[threadIdx.x] = value;
}

// Slot `which` of `counts` goes up by one per run.
__global__ void count_run(int* counts, int which) {
    if (threadIdx.x == 0) atomicAdd(&counts[which], 1);
}

static hipGraphNode_t add(hipGraph_t g, std::initializer_list<hipGraphNode_t> deps, void* func,
                          void** args) {
    hipKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(1);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    hipGraphNode_t node;
    CHECK(hipGraphAddKernelNode(&node, g, deps.begin(), deps.size(), &p));
    return node;
}

static hipGraphNode_t add_count(hipGraph_t g, std::initializer_list<hipGraphNode_t> deps,
                                int* counts, int which) {
    void* args[] = {&counts, &which};
    return add(g, deps, reinterpret_cast<void*>(&count_run), args);
}

// root -> {left, right} -> join: `right` (on a branch queue) faults if `fault`.
static hipGraphExec_t diamond(int* counts, bool fault) {
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t root = add_count(g, {}, counts, 0);
    hipGraphNode_t left = add_count(g, {root}, counts, 1);
    hipGraphNode_t right;
    if (fault) {
        int value = 7;
        void* args[] = {&value};
        right = add(g, {root}, reinterpret_cast<void*>(&store_to_nowhere), args);
    } else {
        right = add_count(g, {root}, counts, 2);
    }
    add_count(g, {left, right}, counts, 3);
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    CHECK(hipGraphDestroy(g));
    return exec;
}

int main() {
    int* counts;
    CHECK(hipMalloc((void**)&counts, 4 * sizeof(int)));
    CHECK(hipMemset(counts, 0, 4 * sizeof(int)));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hipGraphExec_t bad = diamond(counts, true);
    hipGraphExec_t good = diamond(counts, false);

    CHECK(hipGraphLaunch(bad, s));
    EXPECT_ERR(hipStreamSynchronize(s), hipErrorIllegalAddress);
    EXPECT_ERR(hipStreamSynchronize(s), hipSuccess);
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
    EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);

    int h[4] = {-1, -1, -1, -1};
    CHECK(hipMemcpy(h, counts, sizeof h, hipMemcpyDeviceToHost));
    EXPECT_EQ(h[0], 1);
    EXPECT_EQ(h[3], 0); // behind the join: never ran

    // Afterwards graph launches work again, spread over new queues.
    CHECK(hipMemset(counts, 0, 4 * sizeof(int)));
    for (int r = 0; r < 3; ++r) CHECK(hipGraphLaunch(good, s));
    EXPECT_ERR(hipStreamSynchronize(s), hipSuccess);
    CHECK(hipMemcpy(h, counts, sizeof h, hipMemcpyDeviceToHost));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(h[i], 3);

    CHECK(hipGraphExecDestroy(bad));
    CHECK(hipGraphExecDestroy(good));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(counts));
    return finish("graph fault on a branch queue");
}
