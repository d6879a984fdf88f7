// atomics: global atomics from many work-items - int and unsigned add, float
// and double add, a float max built from a CAS loop, int max/min, 64-bit add,
// exchange, and/or/xor, inc - checked against the host.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                         hipGetErrorName(err_));                                       \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)
__device__ float atomic_max_float(float* addr, float v) {
    // The classic CAS loop: retry until no other work-item changed the word.
    int* p = (int*)addr;
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(p, assumed, __float_as_int(v));
    } while (old != assumed);
    return __int_as_float(old);
}

struct Totals {
    int isum;
    unsigned usum;
    float fsum;
    double dsum;
    float fmax;
    int imax;
    int imin;
    unsigned long long u64sum;
    unsigned andv, orv, xorv;
    unsigned inc;
    int exch_seen;
};

__global__ void hammer(Totals* t, int* slots, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&t->isum, (i % 7) - 3);
    atomicAdd(&t->usum, (unsigned)i);
    atomicAdd(&t->fsum, 0.5f);
    atomicAdd(&t->dsum, 0.25);
    atomic_max_float(&t->fmax, (float)((i * 7919) % 10007) * 0.5f);
    atomicMax(&t->imax, (i * 31) % 9973 - 5000);
    atomicMin(&t->imin, (i * 31) % 9973 - 5000);
    atomicAdd(&t->u64sum, 1ull << 33);
    atomicAnd(&t->andv, ~(1u << (i % 32)) | (i < 32 ? 0u : ~0u));
    atomicOr(&t->orv, 1u << (i % 29));
    atomicXor(&t->xorv, (unsigned)i);
    atomicInc(&t->inc, 1000u);
    // Exchange: each slot ends with exactly one writer's value; the old values
    // form a chain that the host checks by counting.
    int old = atomicExch(&slots[i % 16], i);
    atomicAdd(&t->exch_seen, old >= 0 ? 1 : 0);
    atomicSub(&t->isum, 0);
}

int main() {
    const int n = 20000;
    Totals init{};
    init.fmax = -1.0f;
    init.imax = -1000000;
    init.imin = 1000000;
    init.andv = ~0u;
    Totals* dt;
    int* slots;
    CHECK(hipMalloc(&dt, sizeof(Totals)));
    CHECK(hipMalloc(&slots, 16 * sizeof(int)));
    CHECK(hipMemcpy(dt, &init, sizeof init, hipMemcpyHostToDevice));
    CHECK(hipMemset(slots, 0xff, 16 * sizeof(int)));
    hipLaunchKernelGGL(hammer, dim3((n + 255) / 256), dim3(256), 0, 0, dt, slots, n);
    CHECK(hipDeviceSynchronize());
    Totals got;
    CHECK(hipMemcpy(&got, dt, sizeof got, hipMemcpyDeviceToHost));
    int hslots[16];
    CHECK(hipMemcpy(hslots, slots, sizeof hslots, hipMemcpyDeviceToHost));

    Totals want = init;
    for (int i = 0; i < n; ++i) {
        want.isum += (i % 7) - 3;
        want.usum += (unsigned)i;
        float m = (float)((i * 7919) % 10007) * 0.5f;
        if (m > want.fmax) want.fmax = m;
        int v = (i * 31) % 9973 - 5000;
        if (v > want.imax) want.imax = v;
        if (v < want.imin) want.imin = v;
        want.andv &= ~(1u << (i % 32)) | (i < 32 ? 0u : ~0u);
        want.orv |= 1u << (i % 29);
        want.xorv ^= (unsigned)i;
        want.inc = want.inc >= 1000u ? 0 : want.inc + 1;
    }
    want.fsum = 0.5f * n;
    want.dsum = 0.25 * n;
    want.u64sum = (unsigned long long)n << 33;
    int bad = 0;
#define EXPECT(field, fmt)                                                              \
    if (!(got.field == want.field)) {                                                   \
        ++bad;                                                                          \
        std::fprintf(stderr, #field ": got " fmt ", want " fmt "\n", got.field, want.field); \
    }
    EXPECT(isum, "%d");
    EXPECT(usum, "%u");
    EXPECT(fsum, "%g");
    EXPECT(dsum, "%g");
    EXPECT(fmax, "%g");
    EXPECT(imax, "%d");
    EXPECT(imin, "%d");
    EXPECT(u64sum, "%llu");
    EXPECT(andv, "%#x");
    EXPECT(orv, "%#x");
    EXPECT(xorv, "%#x");
    EXPECT(inc, "%u");
    // 16 slots started at -1: n - 16 exchanges saw a previous writer's value.
    if (got.exch_seen != n - 16) {
        ++bad;
        std::fprintf(stderr, "exchange: %d saw a value, want %d\n", got.exch_seen, n - 16);
    }
    for (int s = 0; s < 16; ++s)
        if (hslots[s] < 0 || hslots[s] >= n || hslots[s] % 16 != s) {
            ++bad;
            std::fprintf(stderr, "slot %d holds %d\n", s, hslots[s]);
        }
    CHECK(hipFree(dt));
    CHECK(hipFree(slots));
    if (bad) {
        std::fprintf(stderr, "atomics: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("atomics: PASSED\n");
    return 0;
}
