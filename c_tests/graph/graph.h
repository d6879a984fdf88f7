// What the c_tests/graph programs share: small kernels, a host function that counts its calls,
// a kernel that waits for a host flag (to keep a stream busy with no timing), and helpers
// that add nodes.
#ifndef C_TESTS_GRAPH_H
#define C_TESTS_GRAPH_H

#include "../check.h"

#include <atomic>
#include <cstring>
#include <initializer_list>

static const int N = 256;

// out[i] = in[i] * mul
__global__ void scale(const int* in, int* out, int mul, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * mul;
}

// out[i] = x[i] + y[i]
__global__ void add2(const int* x, const int* y, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}

// Spins until the host sets *flag (pinned host memory).
__global__ void wait_flag(const volatile int* flag) {
    while (*flag == 0) {
    }
}

// A host node's function: adds 1 to the counter its argument points to.
static void count_call(void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

static hipGraphNode_t add_scale(hipGraph_t g, const hipGraphNode_t* deps, size_t ndeps,
                                const int* in, int* out, int mul) {
    int n = N;
    void* args[] = {&in, &out, &mul, &n};
    hipKernelNodeParams p = {};
    p.func = reinterpret_cast<void*>(&scale);
    p.gridDim = dim3(N / 64);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    hipGraphNode_t node;
    CHECK(hipGraphAddKernelNode(&node, g, deps, ndeps, &p));
    return node;
}

static hipKernelNodeParams add2_params(const int*& x, const int*& y, int*& out, int& n,
                                       void** args) {
    args[0] = &x;
    args[1] = &y;
    args[2] = &out;
    args[3] = &n;
    hipKernelNodeParams p = {};
    p.func = reinterpret_cast<void*>(&add2);
    p.gridDim = dim3(N / 64);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    return p;
}

static hipMemsetParams memset_params(void* dst, unsigned value) {
    hipMemsetParams p = {};
    p.dst = dst;
    p.elementSize = 4;
    p.value = value;
    p.width = N;
    p.height = 1;
    return p;
}

#endif // C_TESTS_GRAPH_H
