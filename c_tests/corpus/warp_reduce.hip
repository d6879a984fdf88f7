// warp_reduce: wave-level sums with __shfl_down and __shfl_xor (whole wave
// and 16-lane segments via the width argument), plus __shfl broadcast,
// __shfl_up prefix sums and 64-bit/double shuffles; each lane's result is
// checked against the host.
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

__global__ void shuffles(const int* in, int* down, int* xr, int* seg, int* bcast, int* scan,
                         double* dsum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    // Tree sum with shfl_down: lane 0 of each wave ends with the wave's sum.
    int s = v;
    for (int off = warpSize / 2; off > 0; off >>= 1) s += __shfl_down(s, off);
    down[i] = s;
    // Butterfly with shfl_xor: every lane ends with the wave's sum.
    int x = v;
    for (int m = 1; m < warpSize; m <<= 1) x += __shfl_xor(x, m);
    xr[i] = x;
    // Sums within 16-lane segments.
    int g = v;
    for (int m = 1; m < 16; m <<= 1) g += __shfl_xor(g, m, 16);
    seg[i] = g;
    // Broadcast lane 5 of each 32-lane half.
    bcast[i] = __shfl(v, 5, 32);
    // Inclusive prefix sum over the wave with shfl_up.
    int p = v;
    for (int d = 1; d < warpSize; d <<= 1) {
        int o = __shfl_up(p, (unsigned)d);
        if ((int)__lane_id() >= d) p += o;
    }
    scan[i] = p;
    double dv = (double)v * 0.5;
    for (int off = warpSize / 2; off > 0; off >>= 1) dv += __shfl_down(dv, off);
    dsum[i] = dv;
}

int main() {
    const int waves = 40, n = waves * 64 - 13;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = (i * 37) % 101 - 50;
    auto val = [&](int i) { return i < n ? in[i] : 0; };
    int *din, *d[5];
    double* dd;
    CHECK(hipMalloc(&din, n * 4));
    for (auto& p : d) CHECK(hipMalloc(&p, waves * 64 * 4));
    CHECK(hipMalloc(&dd, waves * 64 * 8));
    CHECK(hipMemcpy(din, in.data(), n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(shuffles, dim3(waves / 4), dim3(256), 0, 0, din, d[0], d[1], d[2], d[3],
                       d[4], dd, n);
    CHECK(hipDeviceSynchronize());
    std::vector<int> out[5];
    for (int k = 0; k < 5; ++k) {
        out[k].resize(waves * 64);
        CHECK(hipMemcpy(out[k].data(), d[k], waves * 64 * 4, hipMemcpyDeviceToHost));
    }
    std::vector<double> dout(waves * 64);
    CHECK(hipMemcpy(dout.data(), dd, waves * 64 * 8, hipMemcpyDeviceToHost));
    int bad = 0;
    auto expect = [&](const char* what, int i, long long got, long long want) {
        if (got != want && bad++ < 12)
            std::fprintf(stderr, "%s[%d] = %lld, want %lld\n", what, i, got, want);
    };
    for (int w = 0; w < waves; ++w) {
        int sum = 0;
        for (int l = 0; l < 64; ++l) sum += val(w * 64 + l);
        expect("shfl_down", w * 64, out[0][w * 64], sum);
        if (dout[w * 64] != sum * 0.5 && bad++ < 12)
            std::fprintf(stderr, "double shfl_down wave %d: %g want %g\n", w, dout[w * 64], sum * 0.5);
        int prefix = 0;
        for (int l = 0; l < 64; ++l) {
            int i = w * 64 + l;
            expect("shfl_xor", i, out[1][i], sum);
            int s16 = 0;
            for (int q = 0; q < 16; ++q) s16 += val(w * 64 + (l & ~15) + q);
            expect("shfl_xor width 16", i, out[2][i], s16);
            expect("shfl width 32", i, out[3][i], val(w * 64 + (l & ~31) + 5));
            prefix += val(i);
            expect("shfl_up scan", i, out[4][i], prefix);
        }
    }
    if (bad) {
        std::fprintf(stderr, "warp_reduce: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("warp_reduce: PASSED (%d waves)\n", waves);
    return 0;
}
