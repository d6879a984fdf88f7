// int_divmod: 32- and 64-bit signed and unsigned division and modulo with
// run-time divisors (the compiler expands them into reciprocal sequences),
// including INT_MIN, negative operands and divisors of 1 and powers of two.
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
#include <climits>

__global__ void divmod(const long long* a, const long long* b, long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = a[i], y = b[i];
    long long* o = out + i * 8;
    int x32 = (int)x, y32 = (int)y;
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    o[0] = x32 / y32;
    o[1] = x32 % y32;
    o[2] = ux / uy;
    o[3] = ux % uy;
    o[4] = x / y;
    o[5] = x % y;
    o[6] = (long long)((unsigned long long)x / (unsigned long long)y);
    o[7] = (long long)((unsigned long long)x % (unsigned long long)y);
}

int main() {
    const int n = 4096;
    std::vector<long long> a(n), b(n), out(n * 8);
    unsigned long long s = 88172645463325252ull;
    auto next = [&] { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; };
    for (int i = 0; i < n; ++i) {
        long long x = (long long)next(), y = (long long)next();
        switch (i % 8) {
        case 0: y >>= 40; break;          // small divisors
        case 1: y = 1; break;
        case 2: y = -1; x = x | 1; break; // avoid INT_MIN / -1 (undefined)
        case 3: y = 1LL << (i % 62); break;
        case 4: x = (long long)INT_MIN; y = (i & 1) ? 7 : -3; break;
        case 5: y = (long long)(unsigned)next(); break;
        default: break;
        }
        if (y == 0) y = 3;
        // 32-bit views must not divide by zero or overflow either.
        if ((int)y == 0) y |= 5;
        if ((int)y == -1 && (int)x == INT_MIN) x += 1;
        if (y == -1 && x == LLONG_MIN) x += 1;
        a[i] = x;
        b[i] = y;
    }
    long long *da, *db, *dout;
    CHECK(hipMalloc(&da, n * 8));
    CHECK(hipMalloc(&db, n * 8));
    CHECK(hipMalloc(&dout, n * 64));
    CHECK(hipMemcpy(da, a.data(), n * 8, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), n * 8, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(divmod, dim3(n / 256), dim3(256), 0, 0, da, db, dout, n);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out.data(), dout, n * 64, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        long long x = a[i], y = b[i];
        int x32 = (int)x, y32 = (int)y;
        unsigned ux = (unsigned)x, uy = (unsigned)y;
        long long want[8] = {x32 / y32, x32 % y32, ux / uy, ux % uy, x / y, x % y,
                             (long long)((unsigned long long)x / (unsigned long long)y),
                             (long long)((unsigned long long)x % (unsigned long long)y)};
        for (int k = 0; k < 8; ++k)
            if (out[i * 8 + k] != want[k] && bad++ < 12)
                std::fprintf(stderr, "op %d (%lld, %lld): %lld want %lld\n", k, x, y, out[i * 8 + k], want[k]);
    }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dout));
    if (bad) {
        std::fprintf(stderr, "int_divmod: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("int_divmod: PASSED\n");
    return 0;
}
