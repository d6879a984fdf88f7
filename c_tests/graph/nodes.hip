// The later node types and calls: memory alloc/free nodes (a kernel node uses the allocation,
// the graph runs several times; relaunching before a free; freeing with hipFree; the graph
// memory attributes and trim), copies to and from a __device__ variable, the driver-style
// memset node, disabled nodes, the generic hipGraphAddNode / hipGraph[Exec]NodeSetParams,
// kernel node attributes, hipGraphInstantiateWithParams / hipGraphExecGetFlags, replacing an
// executable graph's child graph, and user objects (the destructor runs once, after the last
// reference, graphs' and executable graphs' included, is gone).
#include "graph.h"

#include <thread>

__device__ int dev_table[N];

static bool all(const int* p, int value, const char* what) {
    for (int i = 0; i < N; ++i)
        if (p[i] != value) {
            std::fprintf(stderr, "%s: [%d] = %d, want %d\n", what, i, p[i], value);
            return false;
        }
    return true;
}

static std::atomic<int> destroyed{0};
static void destroy_counter(void* p) {
    EXPECT_EQ(*static_cast<int*>(p), 42);
    destroyed.fetch_add(1);
}

// The destructor runs on a thread of its own: wait for it (no time limit but the test's).
static void wait_destroyed(int want) {
    while (destroyed.load() < want) std::this_thread::yield();
}

static hipMemAllocNodeParams alloc_params(size_t bytes) {
    hipMemAllocNodeParams p = {};
    p.poolProps.allocType = hipMemAllocationTypePinned;
    p.poolProps.location.type = hipMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    return p;
}

static uint64_t graph_mem(hipGraphMemAttributeType attr) {
    uint64_t v = ~0ull;
    CHECK(hipDeviceGetGraphMemAttribute(0, attr, &v));
    return v;
}

int main() {
    static_assert(sizeof(hipGraphNodeParams) == 256, "hipGraphNodeParams is 256 bytes");
    static_assert(sizeof(hipMemAllocNodeParams) == 120, "hipMemAllocNodeParams is 120 bytes");
    static_assert(sizeof(hipGraphInstantiateParams) == 32, "hipGraphInstantiateParams");
    static_assert(sizeof(HIP_MEMSET_NODE_PARAMS) == 40, "HIP_MEMSET_NODE_PARAMS");
    int *h, *a;
    CHECK(hipHostMalloc((void**)&h, N * sizeof(int), 0));
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    for (int i = 0; i < N; ++i) h[i] = 3;
    CHECK(hipMemcpy(a, h, N * sizeof(int), hipMemcpyHostToDevice));

    // --- Memory nodes: alloc -> memset(5) -> scale x2 into it... -> copy out -> free.
    {
        hipGraph_t g;
        CHECK(hipGraphCreate(&g, 0));
        hipMemAllocNodeParams ap = alloc_params(N * sizeof(int));
        hipGraphNode_t alloc, fill, k, out, free_node;
        CHECK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
        EXPECT_TRUE(ap.dptr != nullptr);
        int* m = static_cast<int*>(ap.dptr);
        hipGraphNodeType type;
        CHECK(hipGraphNodeGetType(alloc, &type));
        EXPECT_EQ(type, hipGraphNodeTypeMemAlloc);
        hipMemAllocNodeParams back = {};
        CHECK(hipGraphMemAllocNodeGetParams(alloc, &back));
        EXPECT_EQ(back.dptr, ap.dptr);
        EXPECT_EQ(back.bytesize, N * sizeof(int));
        EXPECT_EQ(back.poolProps.location.id, 0);
        hipMemsetParams mp = memset_params(m, 5);
        CHECK(hipGraphAddMemsetNode(&fill, g, &alloc, 1, &mp));
        k = add_scale(g, &fill, 1, m, m, 2);
        CHECK(hipGraphAddMemcpyNode1D(&out, g, &k, 1, h, m, N * sizeof(int),
                                      hipMemcpyDeviceToHost));
        CHECK(hipGraphAddMemFreeNode(&free_node, g, &out, 1, m));
        CHECK(hipGraphNodeGetType(free_node, &type));
        EXPECT_EQ(type, hipGraphNodeTypeMemFree);
        void* freed = nullptr;
        CHECK(hipGraphMemFreeNodeGetParams(free_node, &freed));
        EXPECT_EQ(freed, m);
        EXPECT_ERR(hipGraphAddMemFreeNode(&free_node, g, &out, 1, a), hipErrorInvalidValue);
        EXPECT_TRUE(graph_mem(hipGraphMemAttrReservedMemCurrent) >= N * sizeof(int));
        EXPECT_TRUE(graph_mem(hipGraphMemAttrUsedMemCurrent) >= N * sizeof(int));

        hipGraphExec_t e;
        CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
        for (int round = 0; round < 3; ++round) {
            for (int i = 0; i < N; ++i) h[i] = -1;
            CHECK(hipGraphLaunch(e, s));
            CHECK(hipStreamSynchronize(s));
            EXPECT_TRUE(all(h, 10, "alloc/free graph"));
        }
        CHECK(hipGraphExecDestroy(e));
        CHECK(hipGraphDestroy(g));
        uint64_t reserved = graph_mem(hipGraphMemAttrReservedMemCurrent);
        EXPECT_TRUE(reserved >= N * sizeof(int));
        EXPECT_EQ(graph_mem(hipGraphMemAttrUsedMemCurrent), 0);
        EXPECT_TRUE(graph_mem(hipGraphMemAttrUsedMemHigh) >= N * sizeof(int));
        uint64_t zero = 0, one = 1;
        CHECK(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, &zero));
        EXPECT_EQ(graph_mem(hipGraphMemAttrUsedMemHigh), 0);
        EXPECT_ERR(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, &one),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemCurrent, &zero),
                   hipErrorInvalidValue);
        CHECK(hipDeviceGraphMemTrim(0));
        EXPECT_EQ(graph_mem(hipGraphMemAttrReservedMemCurrent), 0);
    }

    // --- An allocation the graph does not free: the program frees it after each launch; a
    // second launch before that fails, unless the graph auto-frees.
    {
        hipGraph_t g;
        CHECK(hipGraphCreate(&g, 0));
        hipMemAllocNodeParams ap = alloc_params(N * sizeof(int));
        hipGraphNode_t alloc, k;
        CHECK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
        int* m = static_cast<int*>(ap.dptr);
        k = add_scale(g, &alloc, 1, a, m, 4);
        (void)k;
        hipGraphExec_t e;
        CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
        CHECK(hipGraphLaunch(e, s));
        EXPECT_ERR(hipGraphLaunch(e, s), hipErrorInvalidValue);
        CHECK(hipMemcpyAsync(h, m, N * sizeof(int), hipMemcpyDeviceToHost, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 12, "allocation outliving the launch"));
        CHECK(hipFree(m));
        EXPECT_ERR(hipFree(m), hipErrorInvalidValue);
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipFreeAsync(m, s));
        CHECK(hipStreamSynchronize(s));
        CHECK(hipGraphExecDestroy(e));

        unsigned long long flags = 0;
        CHECK(hipGraphInstantiateWithFlags(&e, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
        CHECK(hipGraphExecGetFlags(e, &flags));
        EXPECT_EQ(flags, hipGraphInstantiateFlagAutoFreeOnLaunch);
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        // Destroying the graphs leaves the allocation valid until it is freed.
        CHECK(hipGraphExecDestroy(e));
        CHECK(hipGraphDestroy(g));
        CHECK(hipMemcpy(h, m, N * sizeof(int), hipMemcpyDeviceToHost));
        EXPECT_TRUE(all(h, 12, "allocation after its graph is gone"));
        CHECK(hipFree(m));
    }

    // --- Copies to and from a __device__ variable, and the driver-style memset node.
    {
        hipGraph_t g;
        CHECK(hipGraphCreate(&g, 0));
        for (int i = 0; i < N; ++i) h[i] = 7;
        hipGraphNode_t to, k, from, fill;
        CHECK(hipGraphAddMemcpyNodeToSymbol(&to, g, nullptr, 0, HIP_SYMBOL(dev_table), h,
                                            N * sizeof(int), 0, hipMemcpyHostToDevice));
        hipGraphNodeType type;
        CHECK(hipGraphNodeGetType(to, &type));
        EXPECT_EQ(type, hipGraphNodeTypeMemcpy);
        int* table = nullptr;
        CHECK(hipGetSymbolAddress((void**)&table, HIP_SYMBOL(dev_table)));
        k = add_scale(g, &to, 1, table, a, 3);
        CHECK(hipGraphAddMemcpyNodeFromSymbol(&from, g, &k, 1, h, HIP_SYMBOL(dev_table),
                                              N * sizeof(int), 0, hipMemcpyDeviceToHost));
        HIP_MEMSET_NODE_PARAMS dp = {};
        dp.dst = a;
        dp.value = 9;
        dp.elementSize = 4;
        dp.width = N;
        dp.height = 1;
        CHECK(hipDrvGraphAddMemsetNode(&fill, g, &from, 1, &dp, nullptr));
        EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&to, g, nullptr, 0, HIP_SYMBOL(dev_table), h,
                                                 N * sizeof(int), 4, hipMemcpyHostToDevice),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&to, g, nullptr, 0, HIP_SYMBOL(dev_table), h,
                                                 4, 0, hipMemcpyDeviceToHost),
                   hipErrorInvalidMemcpyDirection);
        // AMD's further rules: no bytes, a symbol on the other side, host memory for a
        // device-to-device copy.
        hipGraphNode_t bad;
        EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad, g, nullptr, 0, HIP_SYMBOL(dev_table), h, 0,
                                                 0, hipMemcpyHostToDevice),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad, g, nullptr, 0, HIP_SYMBOL(dev_table),
                                                 HIP_SYMBOL(dev_table), 4, 0,
                                                 hipMemcpyDeviceToDevice),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad, g, nullptr, 0, HIP_SYMBOL(dev_table), h, 4,
                                                 0, hipMemcpyDeviceToDevice),
                   hipErrorInvalidValue);
        // 1D nodes: a source starting inside the destination is refused, a destination inside
        // the source allowed; the destination must hold the bytes.
        {
            char* m = nullptr;
            CHECK(hipMalloc(&m, 256));
            EXPECT_ERR(hipGraphAddMemcpyNode1D(&bad, g, nullptr, 0, m, m + 8, 64,
                                               hipMemcpyDeviceToDevice),
                       hipErrorInvalidValue);
            EXPECT_ERR(hipGraphAddMemcpyNode1D(&bad, g, nullptr, 0, m, m, 64,
                                               hipMemcpyDeviceToDevice),
                       hipErrorInvalidValue);
            CHECK(hipGraphAddMemcpyNode1D(&bad, g, nullptr, 0, m + 8, m, 64,
                                          hipMemcpyDeviceToDevice));
            CHECK(hipGraphDestroyNode(bad));
            EXPECT_ERR(hipGraphAddMemcpyNode1D(&bad, g, nullptr, 0, m + 200, h, 64,
                                               hipMemcpyHostToDevice),
                       hipErrorInvalidValue);
            CHECK(hipFree(m));
        }
        hipGraphExec_t e;
        CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 7, "copied back from the symbol"));
        int* check = new int[N];
        CHECK(hipMemcpy(check, a, N * sizeof(int), hipMemcpyDeviceToHost));
        EXPECT_TRUE(all(check, 9, "driver memset"));

        // The executable graph's copies change: from h2 into the symbol, at an offset.
        int* h2;
        CHECK(hipHostMalloc((void**)&h2, N * sizeof(int), 0));
        for (int i = 0; i < N; ++i) h2[i] = 11;
        CHECK(hipGraphExecMemcpyNodeSetParamsToSymbol(e, to, HIP_SYMBOL(dev_table), h2,
                                                      N * sizeof(int), 0,
                                                      hipMemcpyHostToDevice));
        dp.value = 1;
        CHECK(hipDrvGraphExecMemsetNodeSetParams(e, fill, &dp, nullptr));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 11, "copied back after the exec update"));
        CHECK(hipMemcpy(check, a, N * sizeof(int), hipMemcpyDeviceToHost));
        EXPECT_TRUE(all(check, 1, "driver memset after the exec update"));
        CHECK(hipGraphMemcpyNodeSetParamsFromSymbol(from, h2, HIP_SYMBOL(dev_table),
                                                    N * sizeof(int), 0, hipMemcpyDefault));
        CHECK(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(dev_table), h,
                                                  N * sizeof(int), 0, hipMemcpyDefault));
        CHECK(hipGraphExecMemcpyNodeSetParamsFromSymbol(e, from, h, HIP_SYMBOL(dev_table),
                                                        N * sizeof(int), 0,
                                                        hipMemcpyDeviceToHost));
        CHECK(hipGraphExecDestroy(e));
        CHECK(hipGraphDestroy(g));
        CHECK(hipHostFree(h2));
        delete[] check;
    }

    // --- Disabled nodes; the generic node calls; kernel node attributes.
    {
        hipGraph_t g;
        CHECK(hipGraphCreate(&g, 0));
        int* b;
        CHECK(hipMalloc((void**)&b, N * sizeof(int)));
        hipGraphNodeParams np = {};
        np.type = hipGraphNodeTypeMemset;
        np.memset = memset_params(b, 4);
        hipGraphNode_t fill, k, out, host, empty;
        CHECK(hipGraphAddNode(&fill, g, nullptr, 0, &np));
        k = add_scale(g, &fill, 1, b, a, 5);
        std::atomic<int> calls{0};
        hipGraphNodeParams hp = {};
        hp.type = hipGraphNodeTypeHost;
        hp.host.fn = count_call;
        hp.host.userData = &calls;
        CHECK(hipGraphAddNode(&host, g, &k, 1, &hp));
        hipGraphNodeParams ep = {};
        ep.type = hipGraphNodeTypeEmpty;
        CHECK(hipGraphAddNode(&empty, g, &host, 1, &ep));
        CHECK(hipGraphAddMemcpyNode1D(&out, g, &empty, 1, h, a, N * sizeof(int),
                                      hipMemcpyDeviceToHost));
        hipGraphNodeType type;
        CHECK(hipGraphNodeGetType(host, &type));
        EXPECT_EQ(type, hipGraphNodeTypeHost);
        hipGraphNodeParams bad = {};
        bad.type = (hipGraphNodeType)99;
        EXPECT_ERR(hipGraphAddNode(&empty, g, nullptr, 0, &bad), hipErrorInvalidValue);

        // Attributes: stored, read back, copied; cooperative launches cooperatively.
        hipKernelNodeAttrValue v = {};
        CHECK(hipGraphKernelNodeGetAttribute(k, hipKernelNodeAttributeCooperative, &v));
        EXPECT_EQ(v.cooperative, 0);
        v.cooperative = 1;
        CHECK(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeCooperative, &v));
        hipKernelNodeAttrValue w = {};
        w.accessPolicyWindow.base_ptr = a;
        w.accessPolicyWindow.num_bytes = 64;
        w.accessPolicyWindow.hitRatio = 0.5f;
        w.accessPolicyWindow.hitProp = hipAccessPropertyPersisting;
        CHECK(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &w));
        w.accessPolicyWindow.hitRatio = 2.0f;
        EXPECT_ERR(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow,
                                                  &w),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipGraphKernelNodeSetAttribute(fill, hipKernelNodeAttributeCooperative, &v),
                   hipErrorInvalidValue);
        hipGraphNode_t k2 = add_scale(g, nullptr, 0, a, b, 1);
        CHECK(hipGraphKernelNodeCopyAttributes(k, k2));
        hipKernelNodeAttrValue r = {};
        CHECK(hipGraphKernelNodeGetAttribute(k2, hipKernelNodeAttributeAccessPolicyWindow, &r));
        EXPECT_EQ(r.accessPolicyWindow.base_ptr, a);
        EXPECT_EQ(r.accessPolicyWindow.num_bytes, 64);
        CHECK(hipGraphKernelNodeGetAttribute(k2, hipKernelNodeAttributeCooperative, &r));
        EXPECT_EQ(r.cooperative, 1);
        CHECK(hipGraphDestroyNode(k2));

        hipGraphInstantiateParams ip = {};
        ip.flags = hipGraphInstantiateFlagUpload;
        ip.uploadStream = s;
        ip.result_out = hipGraphInstantiateError;
        hipGraphExec_t e;
        CHECK(hipGraphInstantiateWithParams(&e, g, &ip));
        EXPECT_EQ(ip.result_out, hipGraphInstantiateSuccess);
        unsigned long long flags = 0;
        CHECK(hipGraphExecGetFlags(e, &flags));
        EXPECT_EQ(flags, hipGraphInstantiateFlagUpload);

        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 20, "all enabled"));
        EXPECT_EQ(calls.load(), 1);

        unsigned enabled = 7;
        CHECK(hipGraphNodeGetEnabled(e, k, &enabled));
        EXPECT_EQ(enabled, 1);
        CHECK(hipGraphNodeSetEnabled(e, k, 0));
        CHECK(hipGraphNodeGetEnabled(e, k, &enabled));
        EXPECT_EQ(enabled, 0);
        EXPECT_ERR(hipGraphNodeSetEnabled(e, host, 0), hipErrorInvalidValue);
        EXPECT_ERR(hipGraphNodeSetEnabled(e, empty, 0), hipErrorInvalidValue);
        // The kernel does nothing; the memset (now 6, through the generic exec setter) and the
        // nodes after the kernel still run in order.
        CHECK(hipMemset(a, 0, N * sizeof(int)));
        np.memset = memset_params(b, 6);
        CHECK(hipGraphExecNodeSetParams(e, fill, &np));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 0, "kernel disabled"));
        EXPECT_EQ(calls.load(), 2);
        CHECK(hipGraphNodeSetEnabled(e, k, 1));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 30, "kernel enabled again"));

        // The graph's own node changes through the generic setter; the kernel keeps its
        // attributes.
        np.memset = memset_params(b, 2);
        CHECK(hipGraphNodeSetParams(fill, &np));
        EXPECT_ERR(hipGraphNodeSetParams(host, &np), hipErrorInvalidValue);
        CHECK(hipGraphExecDestroy(e));
        CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 10, "after hipGraphNodeSetParams"));
        CHECK(hipGraphKernelNodeGetAttribute(k, hipKernelNodeAttributeCooperative, &r));
        EXPECT_EQ(r.cooperative, 1);
        CHECK(hipGraphExecDestroy(e));

        CHECK(hipGraphDestroy(g));
        CHECK(hipFree(b));
    }

    // --- A generic alloc node; replacing an executable graph's child graph.
    {
        hipGraph_t g, child, child2;
        CHECK(hipGraphCreate(&g, 0));
        CHECK(hipGraphCreate(&child, 0));
        CHECK(hipGraphCreate(&child2, 0));
        hipGraphNodeParams np = {};
        np.type = hipGraphNodeTypeMemAlloc;
        np.alloc = alloc_params(N * sizeof(int));
        hipGraphNode_t alloc, cn, free_node, c1, c2;
        CHECK(hipGraphAddNode(&alloc, g, nullptr, 0, &np));
        int* m = static_cast<int*>(np.alloc.dptr);
        EXPECT_TRUE(m != nullptr);
        hipMemsetParams p1 = memset_params(m, 8), p2 = memset_params(m, 9);
        CHECK(hipGraphAddMemsetNode(&c1, child, nullptr, 0, &p1));
        CHECK(hipGraphAddMemsetNode(&c2, child2, nullptr, 0, &p2));
        CHECK(hipGraphAddChildGraphNode(&cn, g, &alloc, 1, child));
        hipGraphNode_t out;
        CHECK(hipGraphAddMemcpyNode1D(&out, g, &cn, 1, h, m, N * sizeof(int),
                                      hipMemcpyDeviceToHost));
        hipGraphNodeParams fp = {};
        fp.type = hipGraphNodeTypeMemFree;
        fp.free.dptr = m;
        CHECK(hipGraphAddNode(&free_node, g, &out, 1, &fp));
        hipGraphExec_t e;
        CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 8, "child graph"));
        CHECK(hipGraphExecChildGraphNodeSetParams(e, cn, child2));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        EXPECT_TRUE(all(h, 9, "replaced child graph"));
        hipGraphNode_t extra;
        CHECK(hipGraphAddEmptyNode(&extra, child2, nullptr, 0));
        EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(e, cn, child2), hipErrorInvalidValue);
        EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(e, out, child), hipErrorInvalidValue);
        CHECK(hipGraphExecDestroy(e));
        for (hipGraph_t x : {g, child, child2}) CHECK(hipGraphDestroy(x));
    }

    // --- User objects.
    {
        int payload = 42;
        hipUserObject_t obj;
        CHECK(hipUserObjectCreate(&obj, &payload, destroy_counter, 2,
                                  hipUserObjectNoDestructorSync));
        EXPECT_ERR(hipUserObjectCreate(&obj, &payload, nullptr, 1, hipUserObjectNoDestructorSync),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipUserObjectCreate(&obj, &payload, destroy_counter, 0,
                                       hipUserObjectNoDestructorSync),
                   hipErrorInvalidValue);
        hipGraph_t g, clone;
        CHECK(hipGraphCreate(&g, 0));
        hipGraphNode_t empty;
        CHECK(hipGraphAddEmptyNode(&empty, g, nullptr, 0));
        // The program's two references: one moved to the graph, one more added to it, one
        // released; the graph holds two.
        CHECK(hipGraphRetainUserObject(g, obj, 1, hipGraphUserObjectMove));
        CHECK(hipGraphRetainUserObject(g, obj, 1, 0));
        EXPECT_ERR(hipGraphRetainUserObject(g, obj, 1, 5), hipErrorInvalidValue);
        CHECK(hipUserObjectRelease(obj, 1));
        EXPECT_ERR(hipGraphReleaseUserObject(g, obj, 3), hipErrorInvalidValue);
        CHECK(hipGraphReleaseUserObject(g, obj, 1));
        CHECK(hipGraphClone(&clone, g));
        hipGraphExec_t e;
        CHECK(hipGraphInstantiate(&e, clone, nullptr, nullptr, 0));
        CHECK(hipGraphDestroy(g));
        CHECK(hipGraphDestroy(clone));
        CHECK(hipGraphLaunch(e, s));
        CHECK(hipStreamSynchronize(s));
        // Only the executable graph holds it now.
        EXPECT_EQ(destroyed.load(), 0);
        CHECK(hipGraphExecDestroy(e));
        wait_destroyed(1);
        EXPECT_ERR(hipUserObjectRetain(obj, 1), hipErrorInvalidValue);

        // The program's own references only.
        CHECK(hipUserObjectCreate(&obj, &payload, destroy_counter, 1,
                                  hipUserObjectNoDestructorSync));
        CHECK(hipUserObjectRetain(obj, 2));
        CHECK(hipUserObjectRelease(obj, 2));
        EXPECT_EQ(destroyed.load(), 1);
        EXPECT_ERR(hipUserObjectRelease(obj, 2), hipErrorInvalidValue);
        CHECK(hipUserObjectRelease(obj));
        wait_destroyed(2);
        EXPECT_EQ(destroyed.load(), 2);
    }

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(a));
    CHECK(hipHostFree(h));
    return finish("graph nodes");
}
