// Stream capture: a fork/join pipeline over two streams (memcpy, memset, kernels, a host
// function) captured into a graph, checked node by node and edge by edge, then instantiated
// and launched several times; the capture queries; the documented errors (an unjoined fork,
// the null stream, ending on the wrong stream, synchronising during a capture, waiting for an
// event from outside, an operation capture does not support).
#include "graph.h"

#include <vector>

static hipStreamCaptureStatus status_of(hipStream_t s) {
    hipStreamCaptureStatus st;
    CHECK(hipStreamIsCapturing(s, &st));
    return st;
}

// Whether `g` has the edge from -> to.
static bool has_edge(hipGraph_t g, hipGraphNode_t from, hipGraphNode_t to) {
    size_t n = 0;
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &n));
    std::vector<hipGraphNode_t> f(n), t(n);
    CHECK(hipGraphGetEdges(g, f.data(), t.data(), &n));
    for (size_t i = 0; i < n; ++i)
        if (f[i] == from && t[i] == to) return true;
    return false;
}

int main() {
    int *h_in, *h_out;
    CHECK(hipHostMalloc((void**)&h_in, N * sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&h_out, N * sizeof(int), 0));
    int *a, *b, *c, *d, *e;
    CHECK(hipMalloc((void**)&a, N * sizeof(int)));
    CHECK(hipMalloc((void**)&b, N * sizeof(int)));
    CHECK(hipMalloc((void**)&c, N * sizeof(int)));
    CHECK(hipMalloc((void**)&d, N * sizeof(int)));
    CHECK(hipMalloc((void**)&e, N * sizeof(int)));
    hipStream_t s1, s2;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreate(&s2));
    hipEvent_t fork, join;
    CHECK(hipEventCreate(&fork));
    CHECK(hipEventCreate(&join));
    for (int i = 0; i < N; ++i) h_out[i] = -1;
    std::atomic<int> calls{0};

    EXPECT_EQ(status_of(s1), hipStreamCaptureStatusNone);
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal), hipErrorIllegalState);
    // s1: copy in; fork to s2: memset b = 7, d = a + b; s1: c = a * 2; join: e = c + d;
    // copy out; host function.
    CHECK(hipMemcpyAsync(a, h_in, N * sizeof(int), hipMemcpyHostToDevice, s1));
    CHECK(hipEventRecord(fork, s1));
    EXPECT_EQ(status_of(s2), hipStreamCaptureStatusNone);
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    EXPECT_EQ(status_of(s2), hipStreamCaptureStatusActive);
    CHECK(hipMemsetD32Async(b, 7, N, s2));
    add2<<<N / 64, 64, 0, s2>>>(a, b, d, N);
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(join, s2));
    scale<<<N / 64, 64, 0, s1>>>(a, c, 2, N);
    CHECK(hipGetLastError());
    CHECK(hipStreamWaitEvent(s1, join, 0));
    add2<<<N / 64, 64, 0, s1>>>(c, d, e, N);
    CHECK(hipMemcpyAsync(h_out, e, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    CHECK(hipLaunchHostFunc(s1, count_call, &calls));

    hipStreamCaptureStatus st;
    unsigned long long id1 = 0, id2 = 0;
    CHECK(hipStreamGetCaptureInfo(s1, &st, &id1));
    EXPECT_EQ(st, hipStreamCaptureStatusActive);
    CHECK(hipStreamGetCaptureInfo(s2, &st, &id2));
    EXPECT_EQ(st, hipStreamCaptureStatusActive);
    EXPECT_TRUE(id1 != 0 && id1 == id2);
    // Ending on the forked stream is not ending the capture.
    hipGraph_t g = nullptr;
    EXPECT_ERR(hipStreamEndCapture(s2, &g), hipErrorStreamCaptureUnmatched);
    CHECK(hipStreamEndCapture(s1, &g));
    EXPECT_EQ(status_of(s1), hipStreamCaptureStatusNone);
    EXPECT_EQ(status_of(s2), hipStreamCaptureStatusNone);
    // Nothing ran while capturing.
    CHECK(hipDeviceSynchronize());
    EXPECT_EQ(h_out[0], -1);
    EXPECT_EQ(calls.load(), 0);

    // The graph: 7 nodes in capture order, 7 edges.
    size_t count = 0;
    CHECK(hipGraphGetNodes(g, nullptr, &count));
    EXPECT_EQ(count, 7);
    hipGraphNode_t n[7];
    CHECK(hipGraphGetNodes(g, n, &count));
    hipGraphNodeType want[7] = {hipGraphNodeTypeMemcpy, hipGraphNodeTypeMemset,
                                hipGraphNodeTypeKernel,   hipGraphNodeTypeKernel,
                                hipGraphNodeTypeKernel,   hipGraphNodeTypeMemcpy,
                                hipGraphNodeTypeHost};
    for (int i = 0; i < 7; ++i) {
        hipGraphNodeType type;
        CHECK(hipGraphNodeGetType(n[i], &type));
        EXPECT_EQ(type, want[i]);
    }
    CHECK(hipGraphGetEdges(g, nullptr, nullptr, &count));
    EXPECT_EQ(count, 7);
    // copy_in -> memset -> add2(d) ; copy_in -> scale ; scale, add2(d) -> add2(e) -> copy_out
    // -> host
    EXPECT_TRUE(has_edge(g, n[0], n[1]));
    EXPECT_TRUE(has_edge(g, n[1], n[2]));
    EXPECT_TRUE(has_edge(g, n[0], n[3]));
    EXPECT_TRUE(has_edge(g, n[3], n[4]));
    EXPECT_TRUE(has_edge(g, n[2], n[4]));
    EXPECT_TRUE(has_edge(g, n[4], n[5]));
    EXPECT_TRUE(has_edge(g, n[5], n[6]));
    CHECK(hipGraphGetRootNodes(g, nullptr, &count));
    EXPECT_EQ(count, 1);

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    for (int round = 1; round <= 3; ++round) {
        for (int i = 0; i < N; ++i) h_in[i] = i * round;
        CHECK(hipGraphLaunch(exec, s1));
        CHECK(hipStreamSynchronize(s1));
        for (int i = 0; i < N; ++i)
            if (h_out[i] != h_in[i] * 2 + h_in[i] + 7) {
                std::fprintf(stderr, "round %d: out[%d] = %d, want %d\n", round, i, h_out[i],
                             h_in[i] * 3 + 7);
                return 1;
            }
        EXPECT_EQ(calls.load(), round);
    }
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));

    // A fork that does not rejoin.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
    CHECK(hipEventRecord(fork, s1));
    CHECK(hipStreamWaitEvent(s2, fork, 0));
    scale<<<N / 64, 64, 0, s2>>>(a, c, 2, N);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureUnjoined);
    EXPECT_EQ(status_of(s2), hipStreamCaptureStatusNone);

    // Not capturing; the null stream.
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorIllegalState);
    EXPECT_ERR(hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal),
               hipErrorStreamCaptureUnsupported);
    EXPECT_ERR(hipStreamBeginCapture(s1, (hipStreamCaptureMode)7), hipErrorInvalidValue);

    // Synchronising a capturing stream, querying it, synchronising the device in global mode:
    // each fails and invalidates the capture, which then ends in an error.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    scale<<<N / 64, 64, 0, s1>>>(a, c, 2, N);
    EXPECT_ERR(hipStreamSynchronize(s1), hipErrorStreamCaptureUnsupported);
    EXPECT_EQ(status_of(s1), hipStreamCaptureStatusInvalidated);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);
    EXPECT_EQ(status_of(s1), hipStreamCaptureStatusNone);

    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeThreadLocal));
    EXPECT_ERR(hipStreamQuery(s1), hipErrorStreamCaptureUnsupported);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);

    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorStreamCaptureUnsupported);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);

    // Waiting for an event recorded outside the capture.
    hipEvent_t outside;
    CHECK(hipEventCreate(&outside));
    CHECK(hipEventRecord(outside, s2));
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipStreamWaitEvent(s1, outside, 0), hipErrorStreamCaptureIsolation);
    EXPECT_ERR(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureInvalidated);

    // An operation capture does not turn into a node fails rather than run.
    CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    EXPECT_ERR(hipMemcpy2DAsync(c, 64, a, 64, 64, 2, hipMemcpyDeviceToDevice, s1),
               hipErrorStreamCaptureUnsupported);
    CHECK(hipStreamEndCapture(s1, &g));
    CHECK(hipGraphGetNodes(g, nullptr, &count));
    EXPECT_EQ(count, 0);
    CHECK(hipGraphDestroy(g));

    // The thread's capture mode.
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    EXPECT_EQ(mode, hipStreamCaptureModeGlobal);
    CHECK(hipThreadExchangeStreamCaptureMode(&mode));
    EXPECT_EQ(mode, hipStreamCaptureModeRelaxed);

    // After all that, the streams run work again.
    CHECK(hipMemcpyAsync(a, h_in, N * sizeof(int), hipMemcpyHostToDevice, s1));
    scale<<<N / 64, 64, 0, s1>>>(a, c, 5, N);
    CHECK(hipMemcpyAsync(h_out, c, N * sizeof(int), hipMemcpyDeviceToHost, s1));
    CHECK(hipStreamSynchronize(s1));
    EXPECT_EQ(h_out[3], h_in[3] * 5);

    std::printf("PASSED\n");
    return 0;
}
