// An explicit graph with a diamond of kernels between a memcpy and a memset and a host node,
// instantiated and launched several times; parameters copied when nodes are added; the
// hipGraphExec*NodeSetParams calls; hipGraphExecUpdate (a matching graph, a changed topology,
// a changed kernel).
#include "graph.h"

#include <algorithm>
#include <vector>

// Values of the diamond's result for input `in` and kernel multiplier `mul`, memset `fill`:
// e = in * mul + (in + fill).
static bool holds(const int* out, const int* in, int mul, int fill) {
    for (int i = 0; i < N; ++i)
        if (out[i] != in[i] * mul + in[i] + fill) {
            std::fprintf(stderr, "out[%d] = %d, want %d\n", i, out[i], in[i] * mul + in[i] + fill);
            return false;
        }
    return true;
}

int main() {
    int *h_in, *h_out, *h_out2;
    CHECK(hipHostMalloc((void**)&h_in, N * sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&h_out, N * sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&h_out2, N * sizeof(int), 0));
    int *a, *b, *c, *d, *e;
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    CHECK(hipMalloc((void**)&b, N * sizeof(int)));
    CHECK(hipMalloc((void**)&c, N * sizeof(int)));
    CHECK(hipMalloc((void**)&d, N * sizeof(int)));
    CHECK(hipMalloc((void**)&e, N * sizeof(int)));

    // copy(in -> a)   memset(b = 7)
    //     |      \        |
    //  scale(c=a*2)  add2(d=a+b)
    //          \      /
    //        add2(e=c+d) -> copy(e -> out) -> host(count)
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t copy_in, fill, k1, k2, k3, copy_out, host;
    CHECK(hipGraphAddMemcpyNode1D(&copy_in, g, nullptr, 0, a, h_in, N * sizeof(int),
                                  hipMemcpyHostToDevice));
    hipMemsetParams mp = memset_params(b, 7);
    CHECK(hipGraphAddMemsetNode(&fill, g, nullptr, 0, &mp));
    mp.value = 1000; // copied at add time: the node keeps 7
    k1 = add_scale(g, &copy_in, 1, a, c, 2);
    {
        const int *x = a, *y = b;
        int* out = d;
        int n = N;
        void* args[4];
        hipKernelNodeParams p = add2_params(x, y, out, n, args);
        hipGraphNode_t deps[] = {copy_in, fill};
        CHECK(hipGraphAddKernelNode(&k2, g, deps, 2, &p));
        // The arguments were copied: changing them now changes nothing.
        x = nullptr;
        out = nullptr;
        n = 0;
    }
    {
        const int *x = c, *y = d;
        int* out = e;
        int n = N;
        void* args[4];
        hipKernelNodeParams p = add2_params(x, y, out, n, args);
        hipGraphNode_t deps[] = {k1, k2};
        CHECK(hipGraphAddKernelNode(&k3, g, deps, 2, &p));
    }
    CHECK(hipGraphAddMemcpyNode1D(&copy_out, g, &k3, 1, h_out, e, N * sizeof(int),
                                  hipMemcpyDeviceToHost));
    std::atomic<int> calls{0}, other_calls{0};
    hipHostNodeParams hp = {count_call, &calls};
    CHECK(hipGraphAddHostNode(&host, g, &copy_out, 1, &hp));

    // The kernel node's parameters read back as given, with the arguments' values.
    hipKernelNodeParams got;
    CHECK(hipGraphKernelNodeGetParams(k1, &got));
    EXPECT_TRUE(got.func == reinterpret_cast<void*>(&scale));
    EXPECT_EQ(got.gridDim.x, N / 64);
    EXPECT_EQ(got.blockDim.x, 64);
    EXPECT_TRUE(*static_cast<int**>(got.kernelParams[1]) == c);
    EXPECT_EQ(*static_cast<int*>(got.kernelParams[2]), 2);
    hipMemsetParams gm;
    CHECK(hipGraphMemsetNodeGetParams(fill, &gm));
    EXPECT_EQ(gm.value, 7);
    EXPECT_EQ(gm.width, N);

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipGraphUpload(exec, s));

    // Launched several times, with new input each time, on a stream and the null stream.
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < N; ++i) h_in[i] = i + 100 * round;
        std::memset(h_out, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(exec, round == 1 ? nullptr : s));
        CHECK(hipDeviceSynchronize());
        EXPECT_TRUE(holds(h_out, h_in, 2, 7));
        EXPECT_EQ(calls.load(), round + 1);
    }
    // Two launches back to back, in the stream's order.
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(calls.load(), 5);
    EXPECT_TRUE(holds(h_out, h_in, 2, 7));

    // A graph node's new parameters reach only executable graphs made after.
    hipGraphNode_t k1_copy_holder = k1;
    {
        int mul = 4, n = N;
        const int* in = a;
        int* out = c;
        void* args[] = {&in, &out, &mul, &n};
        hipKernelNodeParams p = {};
        p.func = reinterpret_cast<void*>(&scale);
        p.gridDim = dim3(N / 64);
        p.blockDim = dim3(64);
        p.kernelParams = args;
        CHECK(hipGraphKernelNodeSetParams(k1_copy_holder, &p));
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(holds(h_out, h_in, 2, 7));

        // The executable graph's own node: multiplier 3, memset 9, output elsewhere, another
        // counter.
        mul = 3;
        CHECK(hipGraphExecKernelNodeSetParams(exec, k1, &p));
        hipMemsetParams m9 = memset_params(b, 9);
        CHECK(hipGraphExecMemsetNodeSetParams(exec, fill, &m9));
        CHECK(hipGraphExecMemcpyNodeSetParams1D(exec, copy_out, h_out2, e, N * sizeof(int),
                                                hipMemcpyDeviceToHost));
        // The executable graph's copy keeps its direction.
        EXPECT_ERR(hipGraphExecMemcpyNodeSetParams1D(exec, copy_out, e, h_out2, N * sizeof(int),
                                                     hipMemcpyHostToDevice),
                   hipErrorInvalidValue);
        hipHostNodeParams other = {count_call, &other_calls};
        CHECK(hipGraphExecHostNodeSetParams(exec, host, &other));
        std::memset(h_out2, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(holds(h_out2, h_in, 3, 9));
        EXPECT_EQ(other_calls.load(), 1);
        EXPECT_EQ(calls.load(), 6);
        // A node of another type for the setter: refused.
        EXPECT_ERR(hipGraphExecMemsetNodeSetParams(exec, k1, &m9), hipErrorInvalidValue);
        EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, fill, &p), hipErrorInvalidValue);
    }

    // hipGraphExecUpdate from a graph of the same shape: g now has multiplier 4 (set above),
    // memset 7, output h_out, the first counter.
    hipGraphNode_t error_node = nullptr;
    hipGraphExecUpdateResult result = hipGraphExecUpdateError;
    CHECK(hipGraphExecUpdate(exec, g, &error_node, &result));
    EXPECT_EQ(result, hipGraphExecUpdateSuccess);
    std::memset(h_out, 0, N * sizeof(int));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds(h_out, h_in, 4, 7));
    EXPECT_EQ(calls.load(), 7);

    // A clone with one more node: the topology changed; the executable graph is unchanged.
    hipGraph_t bigger;
    CHECK(hipGraphClone(&bigger, g));
    hipGraphNode_t extra;
    CHECK(hipGraphAddEmptyNode(&extra, bigger, nullptr, 0));
    EXPECT_ERR(hipGraphExecUpdate(exec, bigger, &error_node, &result),
               hipErrorGraphExecUpdateFailure);
    EXPECT_EQ(result, hipGraphExecUpdateErrorTopologyChanged);

    // A clone whose first kernel runs another function: the update takes the new function
    // (as AMD's runtime and CUDA since 11.2 do), and the executable graph then computes what
    // the clone instantiated on its own computes. Checked on a second executable graph, so
    // the first keeps its plan for the checks below.
    hipGraphExec_t exec2;
    CHECK(hipGraphInstantiate(&exec2, g, nullptr, nullptr, 0));
    hipGraph_t other_kernel;
    CHECK(hipGraphClone(&other_kernel, g));
    hipGraphNode_t k1_in_clone;
    CHECK(hipGraphNodeFindInClone(&k1_in_clone, k1, other_kernel));
    {
        const int *x = a, *y = b;
        int* out = c;
        int n = N;
        void* args[4];
        hipKernelNodeParams p = add2_params(x, y, out, n, args);
        CHECK(hipGraphKernelNodeSetParams(k1_in_clone, &p));
    }
    CHECK(hipGraphExecUpdate(exec2, other_kernel, &error_node, &result));
    EXPECT_EQ(result, hipGraphExecUpdateSuccess);
    {
        hipGraphExec_t direct;
        CHECK(hipGraphInstantiate(&direct, other_kernel, nullptr, nullptr, 0));
        std::memset(h_out, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(direct, s));
        CHECK(hipStreamSynchronize(s));
        std::vector<int> want(h_out, h_out + N);
        std::memset(h_out, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(exec2, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(std::equal(want.begin(), want.end(), h_out));
        EXPECT_TRUE(!holds(h_out, h_in, 4, 7));
        CHECK(hipGraphExecDestroy(direct));
        CHECK(hipGraphExecDestroy(exec2));
    }

    // An edge removed in a clone: the topology changed.
    hipGraph_t fewer_edges;
    CHECK(hipGraphClone(&fewer_edges, g));
    hipGraphNode_t from, to;
    CHECK(hipGraphNodeFindInClone(&from, k1, fewer_edges));
    CHECK(hipGraphNodeFindInClone(&to, k3, fewer_edges));
    CHECK(hipGraphRemoveDependencies(fewer_edges, &from, &to, 1));
    EXPECT_ERR(hipGraphExecUpdate(exec, fewer_edges, &error_node, &result),
               hipErrorGraphExecUpdateFailure);
    EXPECT_EQ(result, hipGraphExecUpdateErrorTopologyChanged);

    // Still the updated plan.
    std::memset(h_out, 0, N * sizeof(int));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds(h_out, h_in, 4, 7));

    // Destroying the graph leaves the executable graph whole.
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds(h_out, h_in, 4, 7));
    EXPECT_EQ(calls.load(), 11);  // 9, and the two launches of the function-change check

    CHECK(hipGraphExecDestroy(exec));
    EXPECT_ERR(hipGraphLaunch(exec, s), hipErrorInvalidValue);
    CHECK(hipGraphDestroy(bigger));
    CHECK(hipGraphDestroy(other_kernel));
    CHECK(hipGraphDestroy(fewer_edges));
    CHECK(hipStreamDestroy(s));
    for (int* p : {a, b, c, d, e}) CHECK(hipFree(p));
    CHECK(hipHostFree(h_in));
    CHECK(hipHostFree(h_out));
    CHECK(hipHostFree(h_out2));
    return finish("graph exec");
}
