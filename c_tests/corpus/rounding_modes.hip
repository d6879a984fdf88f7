// rounding_modes: MODE.FP_ROUND set from the kernel (s_setreg of MODE bits 3:0) for
// each of the four IEEE directions, f32 and f64 add/mul/fma and f64->f32, i32->f32
// conversions on ties, near-halfway values, negative values and overflow (infinity vs
// the largest finite value). The host computes the same operations under fesetround and
// the results must agree bit for bit.
#include <hip/hip_runtime.h>

#include <cfenv>
#include <cmath>
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

// Results per input case.
constexpr int NF = 4; // f32: add, mul, fma, i32->f32
constexpr int ND = 4; // f64: add, mul, fma, f64->f32 (stored as double)

// hwreg(HW_REG_MODE, 0, 4): id 1, offset 0, size 4 (encoded size - 1 at bit 11).
constexpr int MODE_ROUND = 1 | (0 << 6) | (3 << 11);

__global__ void rounded(const float* fa, const float* fb, const float* fc, const int* iv,
                        const double* da, const double* db, const double* dc, float* fo,
                        double* dout, int n, int mode) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    // The same direction for f32 (bits 1:0) and f64/f16 (bits 3:2).
    __builtin_amdgcn_s_setreg(MODE_ROUND, mode | (mode << 2));
    float x = fa[i], y = fb[i], z = fc[i];
    double p = da[i], q = db[i], r = dc[i];
    fo[i * NF + 0] = x + y;
    fo[i * NF + 1] = x * y;
    fo[i * NF + 2] = __builtin_fmaf(x, y, z);
    fo[i * NF + 3] = (float)iv[i];
    dout[i * ND + 0] = p + q;
    dout[i * ND + 1] = p * q;
    dout[i * ND + 2] = __builtin_fma(p, q, r);
    dout[i * ND + 3] = (double)(float)p;
    __builtin_amdgcn_s_setreg(MODE_ROUND, 0);
}

int main() {
    // Hand-picked edge cases, then a deterministic spread.
    std::vector<float> fa = {1.0f, 1.0f, -1.0f, 3.4e38f, -3.4e38f, 1.0f, 16777216.0f, 1.5f,
                             1e-38f, -2.5f};
    std::vector<float> fb = {0x1p-24f, 0x1.8p-24f, -0x1p-24f, 3.4e38f, -3.4e38f, -1.0f,
                             1.0f, 1.0f + 0x1p-23f, 1e-5f, 0x1.000002p0f};
    std::vector<float> fc = {0.0f, -1.0f, 0.0f, -3.4e38f, 0.0f, 1.0f, -0.5f, 1e-30f,
                             -1e-43f, 0.25f};
    std::vector<int> iv = {16777217, -16777217, 2147483647, -2147483647, 33554435,
                           123456789, -123456789, 1, 0, 16777219};
    std::vector<double> da = {1.0, -1.0, 1.7e308, -1.7e308, 1.0 + 0x1p-52, 0.1, 1e-310,
                              3.0, 0x1.000001p0, -0x1.000003p0};
    std::vector<double> db = {0x1p-53, -0x1.8p-53, 1.7e308, 1.7e308, 1.0 + 0x1p-52, 0.2,
                              0.75, -3.0, 1.0, 1.0};
    std::vector<double> dc = {0.0, 0.0, -1.7e308, 0.0, -1.0, -0.02, 1e-320, 9.0, 1e-30,
                              -1e-300};
    for (int k = 0; k < 246; ++k) {
        float u = (float)(k * 7919 % 1000 - 500) / 37.0f;
        float v = (float)(k * 104729 % 997 + 1) / 101.0f;
        fa.push_back(u);
        fb.push_back(v);
        fc.push_back(-u * v);
        iv.push_back((k * 2654435761u) >> 1);
        da.push_back((double)u / 3.0);
        db.push_back((double)v / 7.0);
        dc.push_back(-(double)u / 21.0 * (double)v);
    }
    const int n = (int)fa.size();
    float *dfa, *dfb, *dfc, *dfo;
    double *dda, *ddb, *ddc, *ddo;
    int* div;
    CHECK(hipMalloc(&dfa, n * 4));
    CHECK(hipMalloc(&dfb, n * 4));
    CHECK(hipMalloc(&dfc, n * 4));
    CHECK(hipMalloc(&div, n * 4));
    CHECK(hipMalloc(&dfo, n * NF * 4));
    CHECK(hipMalloc(&dda, n * 8));
    CHECK(hipMalloc(&ddb, n * 8));
    CHECK(hipMalloc(&ddc, n * 8));
    CHECK(hipMalloc(&ddo, n * ND * 8));
    CHECK(hipMemcpy(dfa, fa.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dfb, fb.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dfc, fc.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(div, iv.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dda, da.data(), n * 8, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(ddb, db.data(), n * 8, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(ddc, dc.data(), n * 8, hipMemcpyHostToDevice));
    // Hardware encoding: 0 nearest even, 1 toward +inf, 2 toward -inf, 3 toward zero.
    const int host_modes[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    int bad = 0;
    for (int mode = 0; mode < 4; ++mode) {
        hipLaunchKernelGGL(rounded, dim3((n + 63) / 64), dim3(64), 0, 0, dfa, dfb, dfc, div,
                           dda, ddb, ddc, dfo, ddo, n, mode);
        CHECK(hipGetLastError());
        std::vector<float> fo(n * NF);
        std::vector<double> dout(n * ND);
        CHECK(hipMemcpy(fo.data(), dfo, n * NF * 4, hipMemcpyDeviceToHost));
        CHECK(hipMemcpy(dout.data(), ddo, n * ND * 8, hipMemcpyDeviceToHost));
        std::fesetround(host_modes[mode]);
        for (int i = 0; i < n; ++i) {
            volatile float x = fa[i], y = fb[i], z = fc[i];
            volatile double p = da[i], q = db[i], r = dc[i];
            volatile int iw = iv[i];
            float fw[NF] = {x + y, x * y, std::fmaf(x, y, z), (float)iw};
            double dw[ND] = {p + q, p * q, std::fma(p, q, r), (double)(float)p};
            for (int k = 0; k < NF; ++k) {
                if (std::memcmp(&fw[k], &fo[i * NF + k], 4) != 0 && bad++ < 20)
                    std::printf("mode %d f32 case %d op %d: got %a want %a\n", mode, i, k,
                                fo[i * NF + k], fw[k]);
            }
            for (int k = 0; k < ND; ++k) {
                if (std::memcmp(&dw[k], &dout[i * ND + k], 8) != 0 && bad++ < 20)
                    std::printf("mode %d f64 case %d op %d: got %a want %a\n", mode, i, k,
                                dout[i * ND + k], dw[k]);
            }
        }
        std::fesetround(FE_TONEAREST);
    }
    if (bad) {
        std::printf("FAILED: %d mismatches\n", bad);
        return 1;
    }
    std::printf("rounding_modes: %d cases x 4 modes agree bit for bit\n", n);
    return 0;
}
