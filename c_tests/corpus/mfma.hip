// hipshim-test: targets=gfx942
// mfma: one wave per shape multiplies a small matrix pair with gfx942's
// matrix instructions (f32, f16, bf16, i8 inputs; f32/i32 accumulation in
// AGPRs or VGPRs as the compiler chooses): D = A*B + C with C nonzero, and a
// second MFMA chained on the first result. Operands are placed in lanes as
// the CDNA3 ISA lays them out: A (MxK) row i = lane % M, k-group = lane / M;
// B (KxN) column j = lane % N; D register r of lane l holds row
// 4*(l/N) + (r%4) + (256/N)*(r/4), column l % N. Inputs are small integers,
// so every sum is exact and must match the host bit for bit.
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
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
typedef int int4 __attribute__((ext_vector_type(4)));

__device__ inline int d_row(int lane, int r, int n) { return 4 * (lane / n) + (r % 4) + (256 / n) * (r / 4); }

__device__ inline short to_bf16(float f) { return (short)(__float_as_uint(f) >> 16); }

// Shape ids, also the output slot.
enum { S_F16_32, S_F16_16, S_BF16_16, S_I8_16, S_F32_16, S_F32_32, NS };
struct Shape { int m, n, k; };
__host__ __device__ constexpr Shape shape_of(int s) {
    return s == S_F16_32 ? Shape{32, 32, 8}
         : s == S_F16_16 ? Shape{16, 16, 16}
         : s == S_BF16_16 ? Shape{16, 16, 16}
         : s == S_I8_16 ? Shape{16, 16, 32}
         : s == S_F32_16 ? Shape{16, 16, 4}
                         : Shape{32, 32, 2};
}

// a: MxK, b: KxN, c: MxN row-major floats (small integers); d: MxN result of
// (A*B + C) then A*B + that (two chained MFMAs).
__global__ void mfma(const float* a, const float* b, const float* c, float* d) {
    const int s = blockIdx.x, lane = threadIdx.x;
    const Shape sh = shape_of(s);
    const int m = sh.m, n = sh.n, k = sh.k;
    a += s * 1024; b += s * 1024; c += s * 1024; d += s * 1024;
    const int row = lane % m, col = lane % n;
    if (s == S_F16_32 || s == S_F16_16 || s == S_BF16_16) {
        half4 ah, bh;
        short4 ab, bb;
        for (int j = 0; j < 4; ++j) {
            int kk = 4 * (lane / m) + j;
            ah[j] = (_Float16)a[row * k + kk];
            bh[j] = (_Float16)b[kk * n + col];
            ab[j] = to_bf16(a[row * k + kk]);
            bb[j] = to_bf16(b[kk * n + col]);
        }
        if (s == S_F16_32) {
            float16 acc;
            for (int r = 0; r < 16; ++r) acc[r] = c[d_row(lane, r, 32) * n + col];
            acc = __builtin_amdgcn_mfma_f32_32x32x8f16(ah, bh, acc, 0, 0, 0);
            acc = __builtin_amdgcn_mfma_f32_32x32x8f16(ah, bh, acc, 0, 0, 0);
            for (int r = 0; r < 16; ++r) d[d_row(lane, r, 32) * n + col] = acc[r];
        } else {
            float4 acc;
            for (int r = 0; r < 4; ++r) acc[r] = c[d_row(lane, r, 16) * n + col];
            if (s == S_F16_16) {
                acc = __builtin_amdgcn_mfma_f32_16x16x16f16(ah, bh, acc, 0, 0, 0);
                acc = __builtin_amdgcn_mfma_f32_16x16x16f16(ah, bh, acc, 0, 0, 0);
            } else {
                acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(ab, bb, acc, 0, 0, 0);
                acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(ab, bb, acc, 0, 0, 0);
            }
            for (int r = 0; r < 4; ++r) d[d_row(lane, r, 16) * n + col] = acc[r];
        }
    } else if (s == S_I8_16) {
        long ai = 0, bi = 0;
        for (int j = 0; j < 8; ++j) {
            int kk = 8 * (lane / m) + j;
            ai |= (long)(unsigned char)(signed char)a[row * k + kk] << (8 * j);
            bi |= (long)(unsigned char)(signed char)b[kk * n + col] << (8 * j);
        }
        int4 acc;
        for (int r = 0; r < 4; ++r) acc[r] = (int)c[d_row(lane, r, 16) * n + col];
        acc = __builtin_amdgcn_mfma_i32_16x16x32_i8(ai, bi, acc, 0, 0, 0);
        acc = __builtin_amdgcn_mfma_i32_16x16x32_i8(ai, bi, acc, 0, 0, 0);
        for (int r = 0; r < 4; ++r) d[d_row(lane, r, 16) * n + col] = (float)acc[r];
    } else {
        float av = a[row * k + lane / m], bv = b[(lane / n) * n + col];
        if (s == S_F32_16) {
            float4 acc;
            for (int r = 0; r < 4; ++r) acc[r] = c[d_row(lane, r, 16) * n + col];
            acc = __builtin_amdgcn_mfma_f32_16x16x4f32(av, bv, acc, 0, 0, 0);
            acc = __builtin_amdgcn_mfma_f32_16x16x4f32(av, bv, acc, 0, 0, 0);
            for (int r = 0; r < 4; ++r) d[d_row(lane, r, 16) * n + col] = acc[r];
        } else {
            float16 acc;
            for (int r = 0; r < 16; ++r) acc[r] = c[d_row(lane, r, 32) * n + col];
            acc = __builtin_amdgcn_mfma_f32_32x32x2f32(av, bv, acc, 0, 0, 0);
            acc = __builtin_amdgcn_mfma_f32_32x32x2f32(av, bv, acc, 0, 0, 0);
            for (int r = 0; r < 16; ++r) d[d_row(lane, r, 32) * n + col] = acc[r];
        }
    }
}

int main() {
    std::vector<float> a(NS * 1024), b(NS * 1024), c(NS * 1024), d(NS * 1024, -12345.0f);
    for (int s = 0; s < NS; ++s) {
        Shape sh = shape_of(s);
        for (int i = 0; i < sh.m * sh.k; ++i) a[s * 1024 + i] = (float)((i * 7 + s) % 9 - 4);
        for (int i = 0; i < sh.k * sh.n; ++i) b[s * 1024 + i] = (float)((i * 5 + 2 * s) % 7 - 3);
        for (int i = 0; i < sh.m * sh.n; ++i) c[s * 1024 + i] = (float)(i % 23 - 11);
    }
    float *da, *db, *dc, *dd;
    size_t bytes = NS * 1024 * sizeof(float);
    CHECK(hipMalloc(&da, bytes));
    CHECK(hipMalloc(&db, bytes));
    CHECK(hipMalloc(&dc, bytes));
    CHECK(hipMalloc(&dd, bytes));
    CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dc, c.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dd, d.data(), bytes, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(mfma, dim3(NS), dim3(64), 0, 0, da, db, dc, dd);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(d.data(), dd, bytes, hipMemcpyDeviceToHost));
    static const char* names[NS] = {"f32_32x32x8f16", "f32_16x16x16f16", "f32_16x16x16bf16_1k",
                                    "i32_16x16x32_i8", "f32_16x16x4f32", "f32_32x32x2f32"};
    int bad = 0;
    for (int s = 0; s < NS; ++s) {
        Shape sh = shape_of(s);
        int wrong = 0;
        for (int i = 0; i < sh.m; ++i)
            for (int j = 0; j < sh.n; ++j) {
                float ab = 0;
                for (int q = 0; q < sh.k; ++q) ab += a[s * 1024 + i * sh.k + q] * b[s * 1024 + q * sh.n + j];
                float want = 2 * ab + c[s * 1024 + i * sh.n + j];
                float got = d[s * 1024 + i * sh.n + j];
                if (got != want && wrong++ < 4)
                    std::fprintf(stderr, "%s: D[%d][%d] = %g want %g\n", names[s], i, j, got, want);
            }
        if (wrong) std::fprintf(stderr, "%s: %d of %d wrong\n", names[s], wrong, sh.m * sh.n);
        bad += wrong;
    }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    CHECK(hipFree(dd));
    if (bad) {
        std::fprintf(stderr, "mfma: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("mfma: PASSED (%d shapes)\n", (int)NS);
    return 0;
}
