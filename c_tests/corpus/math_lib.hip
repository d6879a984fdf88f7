// math_lib: device math library (ocml) against the host's libm, within the
// documented accuracy of HIP's math functions (in ulps of the result):
//   float:  sqrtf 1, expf 2, sinf 2, cosf 2, logf 1, powf 4, fabsf/floorf/fminf 0
//   double: sqrt 0, exp 1, sin 2, cos 2, log 1, pow 2
// One ulp is added for the host's own rounding of the reference. Also checks
// IEEE division over the whole float and double range (scaled operands near
// the limits of the exponent range, denormals) to be correctly rounded.
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
#include <cfloat>
#include <cstring>

enum { F_SQRT, F_EXP, F_SIN, F_COS, F_LOG, F_POW, F_FABS, F_FLOOR, F_FMIN, F_DIV, NF };
static const char* fname[NF] = {"sqrtf", "expf", "sinf", "cosf", "logf",
                                "powf", "fabsf", "floorf", "fminf", "div"};
static const int ftol[NF] = {1, 2, 2, 2, 1, 4, 0, 0, 0, 0};
static const int dtol[NF] = {0, 1, 2, 2, 1, 2, 0, 0, 0, 0};

__global__ void fmath(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    float* o = out + (size_t)i * NF;
    o[F_SQRT] = sqrtf(fabsf(a));
    o[F_EXP] = expf(a * 0.01f);
    o[F_SIN] = sinf(a);
    o[F_COS] = cosf(a);
    o[F_LOG] = logf(fabsf(a) + 1e-3f);
    o[F_POW] = powf(fabsf(b), a * 0.01f);
    o[F_FABS] = fabsf(a);
    o[F_FLOOR] = floorf(a);
    o[F_FMIN] = fminf(a, b);
    o[F_DIV] = a / b;
}

__global__ void dmath(const double* x, const double* y, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i], b = y[i];
    double* o = out + (size_t)i * NF;
    o[F_SQRT] = sqrt(fabs(a));
    o[F_EXP] = exp(a * 0.01);
    o[F_SIN] = sin(a);
    o[F_COS] = cos(a);
    o[F_LOG] = log(fabs(a) + 1e-3);
    o[F_POW] = pow(fabs(b), a * 0.01);
    o[F_FABS] = fabs(a);
    o[F_FLOOR] = floor(a);
    o[F_FMIN] = fmin(a, b);
    o[F_DIV] = a / b;
}

// Distance in representable values (ulps), sign-magnitude aware.
static long long ulps32(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1LL << 40;
    int ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    long long la = ia < 0 ? (long long)INT32_MIN - ia : ia;
    long long lb = ib < 0 ? (long long)INT32_MIN - ib : ib;
    return la > lb ? la - lb : lb - la;
}
static long long ulps64(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1LL << 60;
    long long ia, ib;
    std::memcpy(&ia, &a, 8);
    std::memcpy(&ib, &b, 8);
    __int128 la = ia < 0 ? (__int128)INT64_MIN - ia : ia;
    __int128 lb = ib < 0 ? (__int128)INT64_MIN - ib : ib;
    __int128 d = la > lb ? la - lb : lb - la;
    return d > (1LL << 60) ? 1LL << 60 : (long long)d;
}

int main() {
    const int n = 4096;
    std::vector<float> fx(n), fy(n);
    std::vector<double> dx(n), dy(n);
    unsigned s = 7;
    auto rnd = [&] { s = s * 1103515245u + 12345u; return (s >> 8) / 16777216.0; };
    for (int i = 0; i < n; ++i) {
        double u = rnd() * 200.0 - 100.0, v = rnd() * 50.0 + 0.001;
        if (i % 8 == 7) {
            // Division across the range: huge/tiny operands and denormal results.
            int e = (int)(rnd() * 250) - 125;
            u = std::ldexp(1.0 + rnd(), e);
            v = std::ldexp(1.0 + rnd(), -e / 2 + ((i & 16) ? 60 : -60));
        }
        fx[i] = (float)u;
        fy[i] = (float)v;
        dx[i] = u;
        dy[i] = v;
        if (i % 8 == 7) {
            dx[i] = std::ldexp(1.0 + rnd(), (int)(rnd() * 2000) - 1000);
            dy[i] = std::ldexp(1.0 + rnd(), (int)(rnd() * 2000) - 1000);
        }
    }
    float *dfx, *dfy, *dfo;
    double *ddx, *ddy, *ddo;
    CHECK(hipMalloc(&dfx, n * 4));
    CHECK(hipMalloc(&dfy, n * 4));
    CHECK(hipMalloc(&dfo, n * 4 * NF));
    CHECK(hipMalloc(&ddx, n * 8));
    CHECK(hipMalloc(&ddy, n * 8));
    CHECK(hipMalloc(&ddo, n * 8 * NF));
    CHECK(hipMemcpy(dfx, fx.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dfy, fy.data(), n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(ddx, dx.data(), n * 8, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(ddy, dy.data(), n * 8, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(fmath, dim3(n / 256), dim3(256), 0, 0, dfx, dfy, dfo, n);
    hipLaunchKernelGGL(dmath, dim3(n / 256), dim3(256), 0, 0, ddx, ddy, ddo, n);
    CHECK(hipDeviceSynchronize());
    std::vector<float> fo(n * NF);
    std::vector<double> dout(n * NF);
    CHECK(hipMemcpy(fo.data(), dfo, n * 4 * NF, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(dout.data(), ddo, n * 8 * NF, hipMemcpyDeviceToHost));
    long long worst_f[NF] = {}, worst_d[NF] = {};
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        double a = fx[i], b = fy[i];
        // Float references computed in double, rounded once.
        float fref[NF] = {(float)std::sqrt(std::fabs(a)), (float)std::exp((double)(fx[i] * 0.01f)),
                          (float)std::sin(a), (float)std::cos(a),
                          (float)std::log((double)(std::fabs(fx[i]) + 1e-3f)),
                          (float)std::pow(std::fabs(b), (double)(fx[i] * 0.01f)),
                          std::fabs(fx[i]), std::floor(fx[i]), std::fmin(fx[i], fy[i]),
                          (float)(a / b)};
        long double la = dx[i], lb = dy[i];
        double dref[NF] = {std::sqrt(std::fabs(dx[i])), (double)std::exp((long double)(dx[i] * 0.01)),
                           (double)std::sin(la), (double)std::cos(la),
                           (double)std::log((long double)(std::fabs(dx[i]) + 1e-3)),
                           (double)std::pow(std::fabs(lb), (long double)(dx[i] * 0.01)),
                           std::fabs(dx[i]), std::floor(dx[i]), std::fmin(dx[i], dy[i]),
                           dx[i] / dy[i]};
        for (int f = 0; f < NF; ++f) {
            long long ef = ulps32(fo[i * NF + f], fref[f]);
            long long ed = ulps64(dout[i * NF + f], dref[f]);
            if (ef > worst_f[f]) worst_f[f] = ef;
            if (ed > worst_d[f]) worst_d[f] = ed;
            if (ef > ftol[f] + (ftol[f] ? 1 : 0) && bad++ < 12)
                std::fprintf(stderr, "%s(%a, %a) = %a, want %a (%lld ulp)\n", fname[f], fx[i],
                             fy[i], fo[i * NF + f], fref[f], ef);
            if (ed > dtol[f] + (dtol[f] ? 1 : 0) && bad++ < 12)
                std::fprintf(stderr, "double %s(%a, %a) = %a, want %a (%lld ulp)\n", fname[f],
                             dx[i], dy[i], dout[i * NF + f], dref[f], ed);
        }
    }
    for (int f = 0; f < NF; ++f)
        std::printf("%-7s worst %lld ulp (float), %lld ulp (double)\n", fname[f], worst_f[f], worst_d[f]);
    if (bad) {
        std::fprintf(stderr, "math_lib: FAILED, %d results out of tolerance\n", bad);
        return 1;
    }
    std::printf("math_lib: PASSED\n");
    return 0;
}
