// packed_int_dot: packed 16-bit integer math (vector-of-short arithmetic the compiler
// turns into v_pk_* ops: add, sub, mul, mad, shifts, min/max) and the dot-product
// builtins (sdot2/udot2, sdot4/udot4, sdot8/udot8, fdot2, with and without clamp),
// checked bit for bit against the host.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

typedef short s2 __attribute__((ext_vector_type(2)));
typedef unsigned short u2 __attribute__((ext_vector_type(2)));
typedef _Float16 h2 __attribute__((ext_vector_type(2)));

constexpr int NO = 20; // outputs per element

__device__ __host__ inline uint32_t pk(s2 v) {
    return (uint16_t)v.x | (uint32_t)(uint16_t)v.y << 16;
}
__device__ __host__ inline uint32_t pku(u2 v) { return v.x | (uint32_t)v.y << 16; }

__global__ void packed(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out,
                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t x = a[i], y = b[i], z = c[i];
    s2 sx, sy, sz;
    u2 ux, uy, uz;
    __builtin_memcpy(&sx, &x, 4);
    __builtin_memcpy(&sy, &y, 4);
    __builtin_memcpy(&sz, &z, 4);
    __builtin_memcpy(&ux, &x, 4);
    __builtin_memcpy(&uy, &y, 4);
    __builtin_memcpy(&uz, &z, 4);
    uint32_t* o = out + i * NO;
    o[0] = pk(sx + sy);
    o[1] = pk(sx - sy);
    o[2] = pku(ux * uy);
    o[3] = pku(ux * uy + uz);
    o[4] = pk(sx * sy + sz);
    o[5] = pku(uy << (ux & (u2)15));
    o[6] = pku(uy >> (ux & (u2)15));
    o[7] = pk(sy >> (sx & (s2)15));
    s2 smax = sx > sy ? sx : sy;
    s2 smin = sx < sy ? sx : sy;
    u2 umax = ux > uy ? ux : uy;
    u2 umin = ux < uy ? ux : uy;
    o[8] = pk(smax);
    o[9] = pk(smin);
    o[10] = pku(umax) ^ pku(umin);
    o[11] = (uint32_t)__builtin_amdgcn_sdot2(sx, sy, (int)z, false);
    o[12] = (uint32_t)__builtin_amdgcn_sdot2(sx, sy, (int)z, true);
    o[13] = __builtin_amdgcn_udot2(ux, uy, z, false);
    o[14] = __builtin_amdgcn_udot2(ux, uy, z, true);
    o[15] = (uint32_t)__builtin_amdgcn_sdot4((int)x, (int)y, (int)z, true);
    o[16] = __builtin_amdgcn_udot4(x, y, z, false);
    o[17] = (uint32_t)__builtin_amdgcn_sdot8((int)x, (int)y, (int)z, false);
    o[18] = __builtin_amdgcn_udot8(x, y, z, true);
    h2 hx, hy;
    __builtin_memcpy(&hx, &x, 4);
    __builtin_memcpy(&hy, &y, 4);
    float f = __builtin_amdgcn_fdot2(hx, hy, (float)(int)(z & 0xffff) * 0.25f, false);
    __builtin_memcpy(&o[19], &f, 4);
}

static int64_t sat(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void host(uint32_t x, uint32_t y, uint32_t z, uint32_t* o) {
    auto lo = [](uint32_t v, int k) { return (uint16_t)(v >> (16 * k)); };
    auto s = [&](uint32_t v, int k) { return (int16_t)lo(v, k); };
    auto both = [&](auto f) {
        return (uint32_t)(uint16_t)f(0) | (uint32_t)(uint16_t)f(1) << 16;
    };
    o[0] = both([&](int k) { return s(x, k) + s(y, k); });
    o[1] = both([&](int k) { return s(x, k) - s(y, k); });
    o[2] = both([&](int k) { return (uint32_t)lo(x, k) * lo(y, k); });
    o[3] = both([&](int k) { return (uint32_t)lo(x, k) * lo(y, k) + lo(z, k); });
    o[4] = both([&](int k) { return s(x, k) * s(y, k) + s(z, k); });
    o[5] = both([&](int k) { return (uint32_t)lo(y, k) << (lo(x, k) & 15); });
    o[6] = both([&](int k) { return lo(y, k) >> (lo(x, k) & 15); });
    o[7] = both([&](int k) { return s(y, k) >> (s(x, k) & 15); });
    o[8] = both([&](int k) { return s(x, k) > s(y, k) ? s(x, k) : s(y, k); });
    o[9] = both([&](int k) { return s(x, k) < s(y, k) ? s(x, k) : s(y, k); });
    o[10] = both([&](int k) { return lo(x, k) > lo(y, k) ? lo(x, k) : lo(y, k); }) ^
            both([&](int k) { return lo(x, k) < lo(y, k) ? lo(x, k) : lo(y, k); });
    int64_t sd2 = (int64_t)s(x, 0) * s(y, 0) + (int64_t)s(x, 1) * s(y, 1) + (int32_t)z;
    o[11] = (uint32_t)sd2;
    o[12] = (uint32_t)(int32_t)sat(sd2, INT32_MIN, INT32_MAX);
    int64_t ud2 = (int64_t)lo(x, 0) * lo(y, 0) + (int64_t)lo(x, 1) * lo(y, 1) + z;
    o[13] = (uint32_t)ud2;
    o[14] = (uint32_t)sat(ud2, 0, UINT32_MAX);
    int64_t sd4 = (int32_t)z, ud4 = z, sd8 = (int32_t)z, ud8 = z;
    for (int k = 0; k < 4; ++k) {
        sd4 += (int64_t)(int8_t)(x >> (8 * k)) * (int8_t)(y >> (8 * k));
        ud4 += (int64_t)(uint8_t)(x >> (8 * k)) * (uint8_t)(y >> (8 * k));
    }
    for (int k = 0; k < 8; ++k) {
        auto s4 = [&](uint32_t v) { return (int64_t)((int32_t)(v << (28 - 4 * k)) >> 28); };
        auto u4 = [&](uint32_t v) { return (int64_t)((v >> (4 * k)) & 15); };
        sd8 += s4(x) * s4(y);
        ud8 += u4(x) * u4(y);
    }
    o[15] = (uint32_t)(int32_t)sat(sd4, INT32_MIN, INT32_MAX);
    o[16] = (uint32_t)ud4;
    o[17] = (uint32_t)sd8;
    o[18] = (uint32_t)sat(ud8, 0, UINT32_MAX);
    _Float16 hx0, hx1, hy0, hy1;
    uint16_t t;
    t = lo(x, 0); std::memcpy(&hx0, &t, 2);
    t = lo(x, 1); std::memcpy(&hx1, &t, 2);
    t = lo(y, 0); std::memcpy(&hy0, &t, 2);
    t = lo(y, 1); std::memcpy(&hy1, &t, 2);
    // f16 products are exact in double, and these inputs keep the sum exact too.
    double acc = (double)hx0 * (double)hy0 + (double)hx1 * (double)hy1 +
                 (double)((float)(int)(z & 0xffff) * 0.25f);
    float f = (float)acc;
    __builtin_memcpy(&o[19], &f, 4);
}

int main() {
    const int n = 1024;
    std::vector<uint32_t> a(n), b(n), c(n), out(n * NO), want(n * NO);
    uint32_t s = 12345;
    auto next = [&]() { s = s * 1664525u + 1013904223u; return s; };
    for (int i = 0; i < n; ++i) {
        a[i] = next();
        b[i] = next();
        c[i] = next();
        if (i % 8 == 1) { a[i] = 0x7fff7fff; b[i] = 0x7fff8000; c[i] = 0x7fffffff; }
        if (i % 8 == 2) { a[i] = 0xffffffff; b[i] = 0xffffffff; c[i] = 0xfffffff0; }
        // fdot2 inputs: finite halves of modest size (exponent field 10..20).
        for (uint32_t* v : {&a[i], &b[i]}) {
            uint32_t w = *v;
            uint16_t h0 = (uint16_t)((w & 0x83ff) | (((w >> 10) % 11 + 10) << 10));
            uint16_t h1 = (uint16_t)(((w >> 16) & 0x83ff) | (((w >> 26) % 11 + 10) << 10));
            if (i % 4 == 0) *v = h0 | (uint32_t)h1 << 16;
        }
    }
    uint32_t *da, *db, *dc, *dout;
    CHECK(hipMalloc(&da, n * 4));
    CHECK(hipMalloc(&db, n * 4));
    CHECK(hipMalloc(&dc, n * 4));
    CHECK(hipMalloc(&dout, n * NO * 4));
    CHECK(hipMemcpy(da, a.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dc, c.data(), n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(packed, dim3(n / 64), dim3(64), 0, 0, da, db, dc, dout, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, n * NO * 4, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        host(a[i], b[i], c[i], &want[i * NO]);
        for (int k = 0; k < NO; ++k) {
            // fdot2 only on the inputs whose halves were made finite and modest.
            if (k == 19 && i % 4 != 0) continue;
            if (out[i * NO + k] != want[i * NO + k] && bad++ < 20)
                std::printf("elem %d out %d: got %08x want %08x (a %08x b %08x c %08x)\n", i, k,
                            out[i * NO + k], want[i * NO + k], a[i], b[i], c[i]);
        }
    }
    if (bad) {
        std::printf("FAILED: %d mismatches\n", bad);
        return 1;
    }
    std::printf("packed_int_dot: %d elements x %d results agree\n", n, NO);
    return 0;
}
