// What the c_tests/mempool programs share: kernels that fill and read blocks, one that waits
// for a host flag (to keep a stream busy for as long as a test needs, with no timing), and
// pool attribute helpers.
#ifndef C_TESTS_MEMPOOL_H
#define C_TESTS_MEMPOOL_H

#include "../check.h"

#include <cstdint>

__global__ void fill(int* p, int value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value + i;
}

// out[i] = in[i] + add
__global__ void add_into(const int* in, int* out, int add, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + add;
}

// Spins until the host sets *flag (pinned host memory). No timeout: every test sets the flag
// before it waits for the stream.
__global__ void wait_flag(const volatile int* flag) {
    while (*flag == 0) {
    }
}

static uint64_t attr_u64(hipMemPool_t pool, hipMemPoolAttr a) {
    uint64_t v = 0;
    CHECK(hipMemPoolGetAttribute(pool, a, &v));
    return v;
}

static int attr_int(hipMemPool_t pool, hipMemPoolAttr a) {
    int v = -1;
    CHECK(hipMemPoolGetAttribute(pool, a, &v));
    return v;
}

static void set_int(hipMemPool_t pool, hipMemPoolAttr a, int v) {
    CHECK(hipMemPoolSetAttribute(pool, a, &v));
}

static void set_u64(hipMemPool_t pool, hipMemPoolAttr a, uint64_t v) {
    CHECK(hipMemPoolSetAttribute(pool, a, &v));
}

// Checks that n ints at device pointer p read value + i.
static bool holds(const int* p, int value, int n) {
    int host[256];
    if (n > 256) n = 256;
    CHECK(hipMemcpy(host, p, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        if (host[i] != value + i) {
            std::fprintf(stderr, "element %d: %d, expected %d\n", i, host[i], value + i);
            return false;
        }
    }
    return true;
}

#endif // C_TESTS_MEMPOOL_H
