// A graph's structure: nodes, roots, edges, dependencies and dependents, node types, removing
// edges and nodes, clones and hipGraphNodeFindInClone, child graphs (copied when added), event
// record and wait nodes ordering two streams, a kernel node given a hipFunction_t and packed
// arguments, and hipGraphDebugDotPrint.
#include "graph.h"

#include <cstdio>
#include <string>

static bool contains(const hipGraphNode_t* list, size_t n, hipGraphNode_t node) {
    for (size_t i = 0; i < n; ++i)
        if (list[i] == node) return true;
    return false;
}

static bool all(const int* p, int value) {
    for (int i = 0; i < N; ++i)
        if (p[i] != value) {
            std::fprintf(stderr, "[%d] = %d, want %d\n", i, p[i], value);
            return false;
        }
    return true;
}

int main() {
    int *h, *a, *b;
    CHECK(hipHostMalloc((void**)&h, N * sizeof(int), 0));
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    CHECK(hipMalloc((void**)&b, N * sizeof(int)));

    // root1 (memset a = 3)   root2 (empty)
    //        \                 /
    //         k (scale b = a * 5)
    //              |
    //         copy (b -> h)
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t root1, root2, k, copy;
    hipMemsetParams mp = memset_params(a, 3);
    CHECK(hipGraphAddMemsetNode(&root1, g, nullptr, 0, &mp));
    CHECK(hipGraphAddEmptyNode(&root2, g, nullptr, 0));
    k = add_scale(g, &root1, 1, a, b, 5);
    CHECK(hipGraphAddDependencies(g, &root2, &k, 1));
    CHECK(hipGraphAddMemcpyNode1D(&copy, g, &k, 1, h, b, N * sizeof(int), hipMemcpyDeviceToHost));

    size_t n = 0;
    CHECK(hipGraphGetNodes(g, nullptr, &n));
    EXPECT_EQ(n, 4);
    hipGraphNode_t nodes[6];
    n = 6;
    CHECK(hipGraphGetNodes(g, nodes, &n));
    EXPECT_EQ(n, 4);
    EXPECT_TRUE(nodes[0] == root1 && nodes[1] == root2 && nodes[2] == k && nodes[3] == copy);
    EXPECT_TRUE(nodes[4] == nullptr && nodes[5] == nullptr);
    n = 2;
    CHECK(hipGraphGetNodes(g, nodes, &n));
    EXPECT_EQ(n, 2);

    hipGraphNode_t roots[4];
    n = 4;
    CHECK(hipGraphGetRootNodes(g, roots, &n));
    EXPECT_EQ(n, 2);
    EXPECT_TRUE(contains(roots, n, root1) && contains(roots, n, root2));

    hipGraphNode_t from[4], to[4];
    n = 0;
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &n));
    EXPECT_EQ(n, 3);
    n = 4;
    CHECK(hipGraphGetEdges(g, from, to, &n));
    EXPECT_EQ(n, 3);
    EXPECT_TRUE(from[0] == root1 && to[0] == k);
    EXPECT_TRUE(from[1] == root2 && to[1] == k);
    EXPECT_TRUE(from[2] == k && to[2] == copy);

    hipGraphNode_t deps[4];
    n = 4;
    CHECK(hipGraphNodeGetDependencies(k, deps, &n));
    EXPECT_EQ(n, 2);
    EXPECT_TRUE(contains(deps, n, root1) && contains(deps, n, root2));
    n = 4;
    CHECK(hipGraphNodeGetDependentNodes(k, deps, &n));
    EXPECT_EQ(n, 1);
    EXPECT_TRUE(deps[0] == copy);
    n = 0;
    CHECK(hipGraphNodeGetDependentNodes(copy, nullptr, &n));
    EXPECT_EQ(n, 0);

    hipGraphNodeType type;
    CHECK(hipGraphNodeGetType(root1, &type));
    EXPECT_EQ(type, hipGraphNodeTypeMemset);
    CHECK(hipGraphNodeGetType(root2, &type));
    EXPECT_EQ(type, hipGraphNodeTypeEmpty);
    CHECK(hipGraphNodeGetType(k, &type));
    EXPECT_EQ(type, hipGraphNodeTypeKernel);
    CHECK(hipGraphNodeGetType(copy, &type));
    EXPECT_EQ(type, hipGraphNodeTypeMemcpy);

    // A clone: the same shape, its own nodes; changes to either stay there.
    hipGraph_t clone;
    CHECK(hipGraphClone(&clone, g));
    hipGraphNode_t k_clone, root2_clone;
    CHECK(hipGraphNodeFindInClone(&k_clone, k, clone));
    CHECK(hipGraphNodeFindInClone(&root2_clone, root2, clone));
    EXPECT_TRUE(k_clone != k);
    n = 4;
    CHECK(hipGraphNodeGetDependencies(k_clone, deps, &n));
    EXPECT_EQ(n, 2);
    EXPECT_TRUE(contains(deps, n, root2_clone));
    CHECK(hipGraphRemoveDependencies(clone, &root2_clone, &k_clone, 1));
    CHECK(hipGraphDestroyNode(root2_clone));
    n = 0;
    CHECK(hipGraphGetNodes(clone, nullptr, &n));
    EXPECT_EQ(n, 3);
    n = 0;
    CHECK(hipGraphGetEdges(clone, nullptr, nullptr, &n));
    EXPECT_EQ(n, 2);
    n = 0;
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &n));
    EXPECT_EQ(n, 3);
    hipGraphNode_t found;
    EXPECT_ERR(hipGraphNodeFindInClone(&found, k, g), hipErrorInvalidValue);

    hipStream_t s1, s2;
    CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiateWithFlags(&exec, clone, 0));
    CHECK(hipGraphLaunch(exec, s1));
    CHECK(hipStreamSynchronize(s1));
    EXPECT_TRUE(all(h, 15));
    CHECK(hipGraphExecDestroy(exec));

    // A child graph: memset(a = 2) -> [child: scale(b = a * 5) -> copy(b -> h)] -> host.
    // The child is copied when added: what is added to `child` later is not run.
    hipGraph_t child, parent;
    CHECK(hipGraphCreate(&child, 0));
    CHECK(hipGraphCreate(&parent, 0));
    hipGraphNode_t ck, ccopy, pfill, pchild, phost;
    ck = add_scale(child, nullptr, 0, a, b, 5);
    CHECK(hipGraphAddMemcpyNode1D(&ccopy, child, &ck, 1, h, b, N * sizeof(int),
                                  hipMemcpyDeviceToHost));
    hipMemsetParams two = memset_params(a, 2);
    CHECK(hipGraphAddMemsetNode(&pfill, parent, nullptr, 0, &two));
    CHECK(hipGraphAddChildGraphNode(&pchild, parent, &pfill, 1, child));
    std::atomic<int> calls{0};
    hipHostNodeParams hp = {count_call, &calls};
    CHECK(hipGraphAddHostNode(&phost, parent, &pchild, 1, &hp));
    hipGraphNode_t late;
    hipMemsetParams junk = memset_params(b, 99);
    CHECK(hipGraphAddMemsetNode(&late, child, &ccopy, 1, &junk));
    CHECK(hipGraphNodeGetType(pchild, &type));
    EXPECT_EQ(type, hipGraphNodeTypeGraph);
    hipGraph_t embedded;
    CHECK(hipGraphChildGraphNodeGetGraph(pchild, &embedded));
    EXPECT_TRUE(embedded != child);
    n = 0;
    CHECK(hipGraphGetNodes(embedded, nullptr, &n));
    EXPECT_EQ(n, 2);
    EXPECT_ERR(hipGraphDestroy(embedded), hipErrorInvalidValue);
    CHECK(hipGraphInstantiate(&exec, parent, nullptr, nullptr, 0));
    std::memset(h, 0, N * sizeof(int));
    for (int i = 0; i < 2; ++i) CHECK(hipGraphLaunch(exec, s1));
    CHECK(hipStreamSynchronize(s1));
    EXPECT_TRUE(all(h, 10));
    EXPECT_EQ(calls.load(), 2);
    CHECK(hipGraphExecDestroy(exec));

    // Event nodes order two streams: s1 is held by a kernel until the host lets it go, then
    // runs graph A (memset a = 4, record ev); graph B on s2 waits for ev before copying a.
    int* flag;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    *flag = 0;
    hipEvent_t ev;
    CHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    hipGraph_t ga, gb;
    CHECK(hipGraphCreate(&ga, 0));
    CHECK(hipGraphCreate(&gb, 0));
    hipGraphNode_t afill, arec, bwait, bcopy;
    hipMemsetParams four = memset_params(a, 4);
    CHECK(hipGraphAddMemsetNode(&afill, ga, nullptr, 0, &four));
    CHECK(hipGraphAddEventRecordNode(&arec, ga, &afill, 1, ev));
    CHECK(hipGraphAddEventWaitNode(&bwait, gb, nullptr, 0, ev));
    CHECK(hipGraphAddMemcpyNode1D(&bcopy, gb, &bwait, 1, h, a, N * sizeof(int),
                                  hipMemcpyDeviceToHost));
    hipEvent_t got_event;
    CHECK(hipGraphEventRecordNodeGetEvent(arec, &got_event));
    EXPECT_TRUE(got_event == ev);
    CHECK(hipGraphEventWaitNodeGetEvent(bwait, &got_event));
    EXPECT_TRUE(got_event == ev);
    CHECK(hipGraphNodeGetType(arec, &type));
    EXPECT_EQ(type, hipGraphNodeTypeEventRecord);
    CHECK(hipGraphNodeGetType(bwait, &type));
    EXPECT_EQ(type, hipGraphNodeTypeWaitEvent);
    hipGraphExec_t ea, eb;
    CHECK(hipGraphInstantiate(&ea, ga, nullptr, nullptr, 0));
    CHECK(hipGraphInstantiate(&eb, gb, nullptr, nullptr, 0));
    std::memset(h, 0, N * sizeof(int));
    wait_flag<<<1, 1, 0, s1>>>(flag);
    CHECK(hipGraphLaunch(ea, s1));
    CHECK(hipGraphLaunch(eb, s2));
    // s1 cannot get past its kernel, so s2 is still waiting for the record.
    EXPECT_ERR(hipStreamQuery(s2), hipErrorNotReady);
    *flag = 1;
    CHECK(hipStreamSynchronize(s2));
    EXPECT_TRUE(all(h, 4));
    CHECK(hipStreamSynchronize(s1));
    CHECK(hipGraphExecDestroy(ea));
    CHECK(hipGraphExecDestroy(eb));

    // A kernel node given a hipFunction_t and its arguments packed in an `extra` buffer.
    {
        hipFunction_t f;
        CHECK(hipGetFuncBySymbol(&f, reinterpret_cast<const void*>(&add2)));
        struct {
            const int* x;
            const int* y;
            int* out;
            int n;
        } packed = {a, a, b, N};
        size_t size = sizeof packed;
        void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                         &size, HIP_LAUNCH_PARAM_END};
        hipKernelNodeParams p = {};
        p.func = f;
        p.gridDim = dim3(N / 64);
        p.blockDim = dim3(64);
        p.extra = extra;
        hipGraph_t gf;
        CHECK(hipGraphCreate(&gf, 0));
        hipGraphNode_t kf, cf;
        CHECK(hipGraphAddKernelNode(&kf, gf, nullptr, 0, &p));
        packed.n = 0; // copied when added
        CHECK(hipGraphAddMemcpyNode1D(&cf, gf, &kf, 1, h, b, N * sizeof(int),
                                      hipMemcpyDeviceToHost));
        p.kernelParams = reinterpret_cast<void**>(extra);
        EXPECT_ERR(hipGraphAddKernelNode(&kf, gf, nullptr, 0, &p), hipErrorInvalidValue);
        hipGraphExec_t ef;
        CHECK(hipGraphInstantiate(&ef, gf, nullptr, nullptr, 0));
        std::memset(h, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(ef, s1));
        CHECK(hipStreamSynchronize(s1));
        EXPECT_TRUE(all(h, 8)); // a holds 4 from the event graphs
        CHECK(hipGraphExecDestroy(ef));
        CHECK(hipGraphDestroy(gf));
    }

    // The DOT print names every node, the kernel by its name, and the child graph's nodes.
    const char* path = "graph_structure.dot";
    CHECK(hipGraphDebugDotPrint(parent, path, 0));
    std::string dot;
    if (FILE* f = std::fopen(path, "r")) {
        char buf[4096];
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) dot.append(buf, got);
        std::fclose(f);
    }
    std::remove(path);
    EXPECT_TRUE(dot.rfind("digraph", 0) == 0);
    for (const char* word : {"MEMSET", "GRAPH", "HOST", "KERNEL", "scale", "MEMCPY", "->"})
        if (dot.find(word) == std::string::npos) {
            std::fprintf(stderr, "FAIL the DOT print has no %s:\n%s\n", word, dot.c_str());
            ++failures;
        }

    for (hipGraph_t x : {g, clone, child, parent, ga, gb}) CHECK(hipGraphDestroy(x));
    EXPECT_ERR(hipGraphGetNodes(g, nullptr, &n), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphNodeGetType(k, &type), hipErrorInvalidValue);
    CHECK(hipEventDestroy(ev));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipHostFree(h));
    CHECK(hipHostFree(flag));
    return finish("graph structure");
}
