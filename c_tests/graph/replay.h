// Replays of executable graphs whose kernel nodes are published as prebuilt AQL packets
// (runtime/graph/exec): fork/join graphs replayed back to back, kernel node parameters and
// hipGraphExecUpdate changed while earlier launches still wait in the stream, graphs mixing
// kernel nodes with copies, fills and host calls, a graph longer than the queue's ring, and
// eager work, events and the null stream after a graph launch. Shared by `replay` (the
// stream's queue only) and `replay_spread` (branches over several queues).
#include "graph.h"

#include <vector>

__global__ void inc(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

__global__ void fill(int* out, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}

// w[i] += y[i] + z[i]
__global__ void accumulate(const int* y, const int* z, int* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] += y[i] + z[i];
}

static hipKernelNodeParams kernel_params(void* func, void** args) {
    hipKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(N / 64);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    return p;
}

static hipGraphNode_t add_kernel(hipGraph_t g, std::initializer_list<hipGraphNode_t> deps,
                                 void* func, void** args) {
    hipKernelNodeParams p = kernel_params(func, args);
    hipGraphNode_t node;
    CHECK(hipGraphAddKernelNode(&node, g, deps.begin(), deps.size(), &p));
    return node;
}

static hipGraphNode_t add_inc(hipGraph_t g, std::initializer_list<hipGraphNode_t> deps, int* x) {
    int n = N;
    void* args[] = {&x, &n};
    return add_kernel(g, deps, reinterpret_cast<void*>(&inc), args);
}

static hipGraphNode_t add_fill(hipGraph_t g, std::initializer_list<hipGraphNode_t> deps,
                               int* out, int v) {
    int n = N;
    void* args[] = {&out, &v, &n};
    return add_kernel(g, deps, reinterpret_cast<void*>(&fill), args);
}

static bool all_equal(const int* d, int want, const char* what) {
    std::vector<int> h(N);
    CHECK(hipMemcpy(h.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i)
        if (h[i] != want) {
            std::fprintf(stderr, "%s[%d] = %d, want %d\n", what, i, h[i], want);
            return false;
        }
    return true;
}

static int* device_zeros(int count = N) {
    int* p;
    CHECK(hipMalloc((void**)&p, count * sizeof(int)));
    CHECK(hipMemset(p, 0, count * sizeof(int)));
    return p;
}

// Keeps `s` busy until *flag is set: what follows in the stream is enqueued, not run.
static void block_stream(hipStream_t s, int* flag) {
    *flag = 0;
    hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, s, flag);
    CHECK(hipGetLastError());
}

// x += 1; y = x * 2 and z = x * 3 in parallel; w += y + z; then a wide fork of eight
// increments of v joined by one more increment of x. After R replays: x = 2R,
// w = sum over r of 5 * (2r - 1) = 5R^2, v[k] = R.
static void diamonds(hipStream_t s) {
    int *x = device_zeros(), *y = device_zeros(), *z = device_zeros(), *w = device_zeros();
    int* v = device_zeros(8 * N);
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t a = add_inc(g, {}, x);
    hipGraphNode_t b = add_scale(g, &a, 1, x, y, 2);
    hipGraphNode_t c = add_scale(g, &a, 1, x, z, 3);
    hipGraphNode_t d;
    {
        int n = N;
        void* args[] = {&y, &z, &w, &n};
        d = add_kernel(g, {b, c}, reinterpret_cast<void*>(&accumulate), args);
    }
    std::vector<hipGraphNode_t> fork;
    for (int k = 0; k < 8; ++k) fork.push_back(add_inc(g, {d}, v + k * N));
    hipGraphNode_t join;
    {
        int n = N;
        void* args[] = {&x, &n};
        hipKernelNodeParams p = kernel_params(reinterpret_cast<void*>(&inc), args);
        CHECK(hipGraphAddKernelNode(&join, g, fork.data(), fork.size(), &p));
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    const int R = 40;
    for (int r = 0; r < R; ++r) CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(all_equal(x, 2 * R, "x"));
    EXPECT_TRUE(all_equal(w, 5 * R * R, "w"));
    for (int k = 0; k < 8; ++k) EXPECT_TRUE(all_equal(v + k * N, R, "v"));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
    for (int* p : {x, y, z, w, v}) CHECK(hipFree(p));
}

// A kernel node's parameters changed before each launch while every earlier launch still
// waits behind a blocked stream: each launch runs with its own.
static void updates_while_queued(hipStream_t s, int* flag) {
    const int L = 8;
    int* out = device_zeros(L * N);
    int* other = device_zeros();
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t before = add_inc(g, {}, other);
    hipGraphNode_t node = add_fill(g, {before}, out, -1);
    add_inc(g, {node}, other);
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    block_stream(s, flag);
    for (int r = 0; r < L; ++r) {
        int* slot = out + r * N;
        int v = 100 + r, n = N;
        void* args[] = {&slot, &v, &n};
        hipKernelNodeParams p = kernel_params(reinterpret_cast<void*>(&fill), args);
        CHECK(hipGraphExecKernelNodeSetParams(exec, node, &p));
        CHECK(hipGraphLaunch(exec, s));
    }
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    *flag = 1;
    CHECK(hipStreamSynchronize(s));
    for (int r = 0; r < L; ++r) EXPECT_TRUE(all_equal(out + r * N, 100 + r, "slot"));
    EXPECT_TRUE(all_equal(other, 2 * L, "other"));

    // hipGraphExecUpdate between queued launches: from a graph whose fill writes 7 to slot 0,
    // then back from one writing 9 to slot 1.
    block_stream(s, flag);
    int values[2] = {7, 9};
    for (int r = 0; r < 2; ++r) {
        hipGraph_t h;
        CHECK(hipGraphCreate(&h, 0));
        hipGraphNode_t hb = add_inc(h, {}, other);
        hipGraphNode_t hn = add_fill(h, {hb}, out + r * N, values[r]);
        add_inc(h, {hn}, other);
        hipGraphNode_t error_node = nullptr;
        hipGraphExecUpdateResult result = hipGraphExecUpdateError;
        CHECK(hipGraphExecUpdate(exec, h, &error_node, &result));
        EXPECT_EQ(result, hipGraphExecUpdateSuccess);
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipGraphDestroy(h));
    }
    *flag = 1;
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(all_equal(out, 7, "slot 0 after update"));
    EXPECT_TRUE(all_equal(out + N, 9, "slot 1 after update"));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
    CHECK(hipFree(out));
    CHECK(hipFree(other));
}

// Kernel nodes between a fill, copies and a host call: the host call sees what the kernels
// before it wrote, and the kernels after it run after it.
struct Seen {
    const int* host;
    std::atomic<int> calls{0};
    std::atomic<int> wrong{0};
    int want = 0;
};

static void check_host_copy(void* arg) {
    auto* seen = static_cast<Seen*>(arg);
    for (int i = 0; i < N; ++i)
        if (seen->host[i] != seen->want) {
            seen->wrong.fetch_add(1);
            break;
        }
    seen->calls.fetch_add(1);
}

static void mixed(hipStream_t s) {
    int* x = device_zeros();
    int* y = device_zeros();
    int *h_mid, *h_end;
    CHECK(hipHostMalloc((void**)&h_mid, N * sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&h_end, N * sizeof(int), 0));
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipMemsetParams mp = memset_params(x, 5);
    hipGraphNode_t set, copy_mid, host, copy_end;
    CHECK(hipGraphAddMemsetNode(&set, g, nullptr, 0, &mp));
    hipGraphNode_t k1 = add_inc(g, {set}, x);
    hipGraphNode_t k2 = add_inc(g, {k1}, x);
    CHECK(hipGraphAddMemcpyNode1D(&copy_mid, g, &k2, 1, h_mid, x, N * sizeof(int),
                                  hipMemcpyDeviceToHost));
    Seen seen;
    seen.host = h_mid;
    seen.want = 7;
    hipHostNodeParams hp = {check_host_copy, &seen};
    CHECK(hipGraphAddHostNode(&host, g, &copy_mid, 1, &hp));
    hipGraphNode_t k3 = add_inc(g, {host}, x);
    hipGraphNode_t k4 = add_inc(g, {k3}, x);
    hipGraphNode_t k5 = add_inc(g, {k3}, y); // a fork, joined by the copy
    hipGraphNode_t deps[] = {k4, k5};
    CHECK(hipGraphAddMemcpyNode1D(&copy_end, g, deps, 2, h_end, x, N * sizeof(int),
                                  hipMemcpyDeviceToHost));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    for (int r = 0; r < 5; ++r) {
        std::memset(h_end, 0, N * sizeof(int));
        CHECK(hipGraphLaunch(exec, s));
        CHECK(hipStreamSynchronize(s));
        bool ok = true;
        for (int i = 0; i < N; ++i) ok = ok && h_end[i] == 9;
        EXPECT_TRUE(ok);
    }
    EXPECT_TRUE(all_equal(y, 5, "y"));
    EXPECT_EQ(seen.calls.load(), 5);
    EXPECT_EQ(seen.wrong.load(), 0);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    CHECK(hipHostFree(h_mid));
    CHECK(hipHostFree(h_end));
}

// A chain of 1500 kernel nodes, more than the 1024 packets of a queue's ring, launched twice
// back to back.
static void longer_than_the_ring(hipStream_t s) {
    const int K = 1500;
    int* x = device_zeros();
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t prev = add_inc(g, {}, x);
    for (int k = 1; k < K; ++k) prev = add_inc(g, {prev}, x);
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(all_equal(x, 2 * K, "x"));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
    CHECK(hipFree(x));
}

// Eager work, an event and the null stream after a graph launch, none of them synchronised
// with the host in between.
static void then_eager_work(hipStream_t s) {
    int* x = device_zeros();
    int* y = device_zeros();
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t a = add_inc(g, {}, x);
    add_inc(g, {a}, x);
    add_inc(g, {a}, y);
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    hipEvent_t done;
    CHECK(hipEventCreate(&done));
    CHECK(hipGraphLaunch(exec, s)); // x = 2
    hipLaunchKernelGGL(inc, dim3(N / 64), dim3(64), 0, s, x, N); // x = 3
    CHECK(hipEventRecord(done, s));
    CHECK(hipEventSynchronize(done));
    EXPECT_TRUE(all_equal(x, 3, "x after the event"));
    // The null stream waits for a blocking stream's graph launch.
    CHECK(hipGraphLaunch(exec, s)); // x = 5
    hipLaunchKernelGGL(inc, dim3(N / 64), dim3(64), 0, nullptr, x, N); // x = 6
    EXPECT_TRUE(all_equal(x, 6, "x after the null stream"));
    // And a graph launched on the null stream waits for the stream's work.
    hipLaunchKernelGGL(inc, dim3(N / 64), dim3(64), 0, s, x, N); // x = 7
    CHECK(hipGraphLaunch(exec, nullptr)); // x = 9
    CHECK(hipStreamSynchronize(nullptr));
    EXPECT_TRUE(all_equal(x, 9, "x after a null-stream graph launch"));
    CHECK(hipStreamSynchronize(s));
    EXPECT_ERR(hipStreamQuery(s), hipSuccess);
    // Another stream waits for the graph through an event.
    hipStream_t t;
    CHECK(hipStreamCreateWithFlags(&t, hipStreamNonBlocking));
    CHECK(hipGraphLaunch(exec, s)); // x = 11
    CHECK(hipEventRecord(done, s));
    CHECK(hipStreamWaitEvent(t, done, 0));
    hipLaunchKernelGGL(inc, dim3(N / 64), dim3(64), 0, t, x, N); // x = 12
    CHECK(hipStreamSynchronize(t));
    EXPECT_TRUE(all_equal(x, 12, "x after another stream's wait"));
    EXPECT_TRUE(all_equal(y, 4, "y"));
    CHECK(hipStreamDestroy(t));
    CHECK(hipEventDestroy(done));
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));
    CHECK(hipFree(x));
    CHECK(hipFree(y));
}

static int run_replays(const char* name) {
    int* flag;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    diamonds(s);
    updates_while_queued(s, flag);
    mixed(s);
    longer_than_the_ring(s);
    then_eager_work(s);
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(flag));
    return finish(name);
}
