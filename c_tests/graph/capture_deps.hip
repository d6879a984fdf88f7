// Stream capture's dependency calls and capture into an existing graph: a fork/join pipeline
// over two streams checked through hipStreamGetCaptureInfo_v2 (status, id, graph, the
// dependency set) and steered with hipStreamUpdateCaptureDependencies (add, set);
// hipStreamBeginCaptureToGraph after given nodes; captured hipMallocAsync / hipFreeAsync
// becoming memory alloc and free nodes; the errors (wrong thread, unjoined, isolation, the
// null stream, unsupported calls), each leaving the capture invalidated.
#include "graph.h"

#include <thread>
#include <vector>

static std::vector<hipGraphNode_t> capture_deps(hipStream_t s, hipGraph_t* graph = nullptr) {
    hipStreamCaptureStatus st;
    unsigned long long id = 0;
    hipGraph_t g = nullptr;
    const hipGraphNode_t* deps = nullptr;
    size_t n = 99;
    CHECK(hipStreamGetCaptureInfo_v2(s, &st, &id, &g, &deps, &n));
    EXPECT_EQ(st, hipStreamCaptureStatusActive);
    EXPECT_TRUE(id != 0 && g != nullptr);
    if (graph) *graph = g;
    return std::vector<hipGraphNode_t>(deps, deps + n);
}

static size_t node_count(hipGraph_t g) {
    size_t n = 0;
    CHECK(hipGraphGetNodes(g, nullptr, &n));
    return n;
}

static bool has_edge(hipGraph_t g, hipGraphNode_t from, hipGraphNode_t to) {
    size_t n = 0;
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &n));
    std::vector<hipGraphNode_t> f(n), t(n);
    CHECK(hipGraphGetEdges(g, f.data(), t.data(), &n));
    for (size_t i = 0; i < n; ++i)
        if (f[i] == from && t[i] == to) return true;
    return false;
}

static bool all(const int* p, int value, const char* what) {
    for (int i = 0; i < N; ++i)
        if (p[i] != value) {
            std::fprintf(stderr, "%s: [%d] = %d, want %d\n", what, i, p[i], value);
            return false;
        }
    return true;
}

int main() {
    int *h, *a, *b, *c;
    CHECK(hipHostMalloc((void**)&h, N * sizeof(int), 0));
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    CHECK(hipMalloc((void**)&b, N * sizeof(int)));
    CHECK(hipMalloc((void**)&c, N * sizeof(int)));
    hipStream_t s1, s2;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreate(&s2));
    hipEvent_t fork, join;
    CHECK(hipEventCreate(&fork));
    CHECK(hipEventCreate(&join));

    // Not capturing: status none, no dependencies.
    {
        hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
        size_t n = 5;
        CHECK(hipStreamGetCaptureInfo_v2(s1, &st, nullptr, nullptr, nullptr, &n));
        EXPECT_EQ(st, hipStreamCaptureStatusNone);
        EXPECT_EQ(n, 0);
        hipGraphNode_t none = nullptr;
        EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, &none, 0, 0), hipErrorIllegalState);
    }

    // --- Fork/join: s1 memset a; fork s2: memset b; s1: memset c; join; s1: a + b -> c.
    hipGraph_t g = nullptr;
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_EQ(capture_deps(s1).size(), 0);
    CHECK(hipMemsetD32Async(a, 1, N, s1));
    std::vector<hipGraphNode_t> d = capture_deps(s1, &g);
    EXPECT_EQ(d.size(), 1);
    hipGraphNode_t fill_a = d[0];
    hipGraphNodeType type;
    CHECK(hipGraphNodeGetType(fill_a, &type));
    EXPECT_EQ(type, hipGraphNodeTypeMemset);
    CHECK(hipEventRecord(fork, s1));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    d = capture_deps(s2);
    EXPECT_TRUE(d.size() == 1 && d[0] == fill_a);
    CHECK(hipMemsetD32Async(b, 2, N, s2));
    hipGraphNode_t fill_b = capture_deps(s2)[0];
    CHECK(hipEventRecord(join, s2));
    CHECK(hipMemsetD32Async(c, 3, N, s1));
    hipGraphNode_t fill_c = capture_deps(s1)[0];
    CHECK(hipStreamWaitEvent(s1, join, 0));
    d = capture_deps(s1);
    EXPECT_EQ(d.size(), 2);
    // Set: only fill_b; then add fill_c back; a kernel after both.
    CHECK(hipStreamUpdateCaptureDependencies(s1, &fill_b, 1, hipStreamSetCaptureDependencies));
    d = capture_deps(s1);
    EXPECT_TRUE(d.size() == 1 && d[0] == fill_b);
    CHECK(hipStreamUpdateCaptureDependencies(s1, &fill_c, 1, hipStreamAddCaptureDependencies));
    EXPECT_EQ(capture_deps(s1).size(), 2);
    EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, &fill_c, 1, 7), hipErrorInvalidValue);
    hipGraph_t other;
    CHECK(hipGraphCreate(&other, 0));
    hipGraphNode_t foreign;
    CHECK(hipGraphAddEmptyNode(&foreign, other, nullptr, 0));
    EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, &foreign, 1, 0), hipErrorInvalidValue);
    // c = b + c (the memset of a stays before it through fill_b).
    add2<<<N / 64, 64, 0, s1>>>(b, c, a, N);
    hipGraphNode_t k = capture_deps(s1)[0];
    CHECK(hipMemcpyAsync(h, a, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    hipGraph_t ended = nullptr;
    CHECK(hipStreamEndCapture(s1, &ended));
    EXPECT_EQ(ended, g);
    EXPECT_EQ(node_count(g), 5);
    EXPECT_TRUE(has_edge(g, fill_a, fill_b));
    EXPECT_TRUE(has_edge(g, fill_a, fill_c));
    EXPECT_TRUE(has_edge(g, fill_b, k));
    EXPECT_TRUE(has_edge(g, fill_c, k));
    hipGraphExec_t e;
    CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < N; ++i) h[i] = -1;
        CHECK(hipGraphLaunch(e, s1));
        CHECK(hipStreamSynchronize(s1));
        EXPECT_TRUE(all(h, 5, "fork/join"));
    }
    CHECK(hipGraphExecDestroy(e));

    // --- Capture into the existing graph, after the copy out: a memset of a (to 4) and a
    // copy out again; the new nodes follow the given one.
    hipGraphNode_t copy_out = nullptr;
    {
        size_t n = 0;
        CHECK(hipGraphGetNodes(g, nullptr, &n));
        std::vector<hipGraphNode_t> nodes(n);
        CHECK(hipGraphGetNodes(g, nodes.data(), &n));
        copy_out = nodes[n - 1];
    }
    hipGraphEdgeData edge = {};
    CHECK(hipStreamBeginCaptureToGraph(s2, g, &copy_out, &edge, 1,
                                       hipStreamCaptureModeThreadLocal));
    d = capture_deps(s2);
    EXPECT_TRUE(d.size() == 1 && d[0] == copy_out);
    CHECK(hipMemsetD32Async(a, 4, N, s2));
    hipGraphNode_t fill_again = capture_deps(s2)[0];
    CHECK(hipMemcpyAsync(h + N / 2, a, N / 2 * sizeof(int), hipMemcpyDeviceToHost, s2));
    CHECK(hipStreamEndCapture(s2, &ended));
    EXPECT_EQ(ended, g);
    EXPECT_EQ(node_count(g), 7);
    EXPECT_TRUE(has_edge(g, copy_out, fill_again));
    CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
    CHECK(hipGraphLaunch(e, s1));
    CHECK(hipStreamSynchronize(s1));
    for (int i = 0; i < N; ++i)
        if (h[i] != (i < N / 2 ? 5 : 4)) {
            std::fprintf(stderr, "capture to graph: h[%d] = %d\n", i, h[i]);
            ++failures;
            break;
        }
    CHECK(hipGraphExecDestroy(e));
    // An invalidated capture into the program's graph leaves the graph to the program.
    CHECK(hipStreamBeginCaptureToGraph(s1, g, nullptr, nullptr, 0,
                                       hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipStreamSynchronize(s1), hipErrorStreamCaptureUnsupported);
    EXPECT_ERR(hipStreamEndCapture(s1, &ended), hipErrorStreamCaptureInvalidated);
    EXPECT_EQ(node_count(g), 7);
    edge.type = 1;
    EXPECT_ERR(hipStreamBeginCaptureToGraph(s1, g, &copy_out, &edge, 1,
                                            hipStreamCaptureModeGlobal),
               hipErrorInvalidValue);
    EXPECT_ERR(hipStreamBeginCaptureToGraph(s1, g, &foreign, nullptr, 1,
                                            hipStreamCaptureModeGlobal),
               hipErrorInvalidValue);
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphDestroy(other));

    // --- Captured stream-ordered allocation: alloc and free nodes; the graph runs twice.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    int* m = nullptr;
    CHECK(hipMallocAsync((void**)&m, N * sizeof(int), s1));
    EXPECT_TRUE(m != nullptr);
    CHECK(hipMemsetD32Async(m, 6, N, s1));
    CHECK(hipMemcpyAsync(h, m, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    CHECK(hipFreeAsync(m, s1));
    EXPECT_ERR(hipFreeAsync(a, s1), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    CHECK(hipMallocAsync((void**)&m, N * sizeof(int), s1));
    CHECK(hipMemsetD32Async(m, 6, N, s1));
    CHECK(hipMemcpyAsync(h, m, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    CHECK(hipFreeAsync(m, s1));
    CHECK(hipStreamEndCapture(s1, &g));
    {
        size_t n = 0;
        CHECK(hipGraphGetNodes(g, nullptr, &n));
        EXPECT_EQ(n, 4);
        std::vector<hipGraphNode_t> nodes(n);
        CHECK(hipGraphGetNodes(g, nodes.data(), &n));
        CHECK(hipGraphNodeGetType(nodes[0], &type));
        EXPECT_EQ(type, hipGraphNodeTypeMemAlloc);
        CHECK(hipGraphNodeGetType(nodes[3], &type));
        EXPECT_EQ(type, hipGraphNodeTypeMemFree);
    }
    CHECK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < N; ++i) h[i] = -1;
        CHECK(hipGraphLaunch(e, s1));
        CHECK(hipStreamSynchronize(s1));
        EXPECT_TRUE(all(h, 6, "captured allocation"));
    }
    CHECK(hipGraphExecDestroy(e));
    CHECK(hipGraphDestroy(g));

    // --- Errors, each invalidating the capture.
    // Ending a global-mode capture from another thread.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    hipError_t from_thread = hipSuccess;
    std::thread([&] { from_thread = hipStreamEndCapture(s1, &g); }).join();
    EXPECT_EQ(from_thread, hipErrorStreamCaptureWrongThread);
    // In relaxed mode any thread may end it.
    CHECK(hipStreamEndCapture(s1, &g));
    CHECK(hipGraphDestroy(g));
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
    std::thread([&] { from_thread = hipStreamEndCapture(s1, &g); }).join();
    EXPECT_EQ(from_thread, hipSuccess);
    CHECK(hipGraphDestroy(g));

    // A fork rejoined by a dependency update counts as joined.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    CHECK(hipEventRecord(fork, s1));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    CHECK(hipMemsetD32Async(b, 2, N, s2));
    hipGraphNode_t forked = capture_deps(s2)[0];
    CHECK(hipStreamUpdateCaptureDependencies(s1, &forked, 1, 0));
    CHECK(hipStreamEndCapture(s1, &g));
    CHECK(hipGraphDestroy(g));
    // ... and not rejoined, unjoined.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    CHECK(hipEventRecord(fork, s1));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    CHECK(hipMemsetD32Async(b, 2, N, s2));
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureUnjoined);

    // The null stream waiting on a captured event: an implicit synchronisation.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    CHECK(hipEventRecord(fork, s1));
    EXPECT_ERR(hipStreamWaitEvent(nullptr, fork, 0), hipErrorStreamCaptureImplicit);
    hipStreamCaptureStatus st;
    CHECK(hipStreamIsCapturing(s1, &st));
    EXPECT_EQ(st, hipStreamCaptureStatusInvalidated);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);

    // Waiting for an event recorded outside: isolation.
    CHECK(hipEventRecord(join, s2));
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipStreamWaitEvent(s1, join, 0), hipErrorStreamCaptureIsolation);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);

    // The streams work again.
    CHECK(hipMemsetD32Async(a, 9, N, s1));
    CHECK(hipMemcpyAsync(h, a, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    CHECK(hipStreamSynchronize(s1));
    EXPECT_TRUE(all(h, 9, "after the capture errors"));

    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    for (int* p : {a, b, c}) CHECK(hipFree(p));
    CHECK(hipHostFree(h));
    return finish("graph capture dependencies");
}
