// Bad input to the graph calls: null and stale handles, cycles, repeated and foreign edges,
// nodes of the wrong type, bad node parameters, unsupported instantiation flags.
#include "graph.h"

int main() {
    int* a;
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    hipGraph_t g, other;
    EXPECT_ERR(hipGraphCreate(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphCreate(&g, 1), hipErrorInvalidValue);
    CHECK(hipGraphCreate(&g, 0));
    CHECK(hipGraphCreate(&other, 0));
    hipGraphNode_t n1, n2, n3, foreign;
    CHECK(hipGraphAddEmptyNode(&n1, g, nullptr, 0));
    CHECK(hipGraphAddEmptyNode(&n2, g, &n1, 1));
    CHECK(hipGraphAddEmptyNode(&n3, g, &n2, 1));
    CHECK(hipGraphAddEmptyNode(&foreign, other, nullptr, 0));

    // Handles.
    EXPECT_ERR(hipGraphAddEmptyNode(&n1, nullptr, nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddEmptyNode(nullptr, g, nullptr, 0), hipErrorInvalidValue);
    hipGraphNodeType type;
    EXPECT_ERR(hipGraphNodeGetType(nullptr, &type), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphNodeGetType(reinterpret_cast<hipGraphNode_t>(g), &type),
               hipErrorInvalidValue);
    EXPECT_ERR(hipGraphLaunch(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphExecDestroy(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphDestroy(nullptr), hipErrorInvalidValue);

    // Dependencies: a node of another graph, a null list with a count, the same node twice.
    EXPECT_ERR(hipGraphAddEmptyNode(&n1, g, &foreign, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddEmptyNode(&n1, g, nullptr, 1), hipErrorInvalidValue);
    hipGraphNode_t twice[] = {n1, n1};
    hipGraphNode_t extra;
    EXPECT_ERR(hipGraphAddEmptyNode(&extra, g, twice, 2), hipErrorInvalidValue);
    // Edges: a cycle, an edge already there, a self edge, a foreign node, a missing edge.
    EXPECT_ERR(hipGraphAddDependencies(g, &n3, &n1, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddDependencies(g, &n1, &n2, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddDependencies(g, &n2, &n2, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddDependencies(g, &n1, &foreign, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphRemoveDependencies(g, &n1, &n3, 1), hipErrorInvalidValue);
    // A rejected batch adds none of its edges.
    hipGraphNode_t from[] = {n1, n3}, to[] = {n3, n1};
    EXPECT_ERR(hipGraphAddDependencies(g, from, to, 2), hipErrorInvalidValue);
    size_t count = 0;
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &count));
    EXPECT_EQ(count, 2);
    hipGraphNode_t edge_from[2];
    EXPECT_ERR(hipGraphGetEdges(g, edge_from, nullptr, &count), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphGetNodes(g, nullptr, nullptr), hipErrorInvalidValue);

    // Wrong node types for the parameter calls.
    hipKernelNodeParams kp;
    EXPECT_ERR(hipGraphKernelNodeGetParams(n1, &kp), hipErrorInvalidValue);
    hipMemsetParams mp;
    EXPECT_ERR(hipGraphMemsetNodeGetParams(n1, &mp), hipErrorInvalidValue);
    hipHostNodeParams hp;
    EXPECT_ERR(hipGraphHostNodeGetParams(n1, &hp), hipErrorInvalidValue);
    hipGraph_t child;
    EXPECT_ERR(hipGraphChildGraphNodeGetGraph(n1, &child), hipErrorInvalidValue);

    // Bad node parameters.
    hipGraphNode_t node;
    mp = memset_params(a, 0);
    mp.elementSize = 3;
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    mp = memset_params(nullptr, 0);
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    mp = memset_params(a, 0);
    mp.height = 2;
    mp.pitch = 4;
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, nullptr), hipErrorInvalidValue);
    static int pageable[N];
    mp = memset_params(pageable, 0);
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    mp = memset_params(a + 1, 0);
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    mp = memset_params(reinterpret_cast<char*>(a) + 2, 0);
    EXPECT_ERR(hipGraphAddMemsetNode(&node, g, nullptr, 0, &mp), hipErrorInvalidValue);
    hp = {nullptr, nullptr};
    EXPECT_ERR(hipGraphAddHostNode(&node, g, nullptr, 0, &hp), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddMemcpyNode1D(&node, g, nullptr, 0, a, nullptr, 16, hipMemcpyDefault),
               hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddMemcpyNode1D(&node, g, nullptr, 0, a, a, 16, (hipMemcpyKind)9),
               hipErrorInvalidMemcpyDirection);
    EXPECT_ERR(hipGraphAddEventRecordNode(&node, g, nullptr, 0, nullptr), hipErrorInvalidValue);
    kp = {};
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    EXPECT_ERR(hipGraphAddKernelNode(&node, g, nullptr, 0, &kp), hipErrorInvalidDeviceFunction);
    kp.func = reinterpret_cast<void*>(&scale);
    EXPECT_ERR(hipGraphAddKernelNode(&node, g, nullptr, 0, &kp), hipErrorInvalidValue);
    int mul = 1, n = N;
    int* out = a;
    const int* in = a;
    void* args[] = {&in, &out, &mul, &n};
    kp.kernelParams = args;
    kp.blockDim = dim3(2048);
    // Over the device's block limit: the ROCm 6 profile's code, as for a launch
    // (c_tests/compat/launch_errors covers every profile).
    EXPECT_ERR(hipGraphAddKernelNode(&node, g, nullptr, 0, &kp), hipErrorInvalidValue);
    CHECK(hipGraphGetNodes(g, nullptr, &count));
    EXPECT_EQ(count, 3); // nothing was added by the failed calls
    // A graph may embed a copy of itself (as it is when the node is added).
    CHECK(hipGraphAddChildGraphNode(&node, g, nullptr, 0, g));
    hipGraph_t embedded;
    CHECK(hipGraphChildGraphNodeGetGraph(node, &embedded));
    CHECK(hipGraphGetNodes(embedded, nullptr, &count));
    EXPECT_EQ(count, 3);
    CHECK(hipGraphDestroyNode(node));
    EXPECT_ERR(hipGraphGetNodes(embedded, nullptr, &count), hipErrorInvalidValue);

    // Instantiation: device launch is not supported, unknown flags are invalid.
    hipGraphExec_t exec;
    EXPECT_ERR(hipGraphInstantiateWithFlags(&exec, g, hipGraphInstantiateFlagDeviceLaunch),
               hipErrorNotSupported);
    EXPECT_ERR(hipGraphInstantiateWithFlags(&exec, g, 1u << 20), hipErrorInvalidValue);
    CHECK(hipGraphInstantiateWithFlags(&exec, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
    // A node of another graph for the executable graph's setter.
    hipHostNodeParams good = {count_call, nullptr};
    hipGraphNode_t host;
    CHECK(hipGraphAddHostNode(&host, other, nullptr, 0, &good));
    EXPECT_ERR(hipGraphExecHostNodeSetParams(exec, host, &good), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphExecUpdate(exec, g, nullptr, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphLaunch(exec, reinterpret_cast<hipStream_t>(0x1230)), hipErrorInvalidHandle);
    EXPECT_ERR(hipGraphDebugDotPrint(g, nullptr, 0), hipErrorInvalidValue);
    CHECK(hipGraphExecDestroy(exec));
    EXPECT_ERR(hipGraphExecDestroy(exec), hipErrorInvalidValue);

    CHECK(hipGraphDestroy(g));
    EXPECT_ERR(hipGraphDestroy(g), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddEmptyNode(&node, g, nullptr, 0), hipErrorInvalidValue);
    CHECK(hipGraphDestroy(other));
    CHECK(hipFree(a));
    return finish("graph errors");
}
