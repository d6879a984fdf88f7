// matmul_tiled: C = A*B with 16x16 shared-memory tiles and __syncthreads,
// sizes not multiples of the tile; checked against a host product (the
// inputs are small integers, so every sum is exact in float).
#include <hip/hip_runtime.h>

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

constexpr int T = 16;

__global__ void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float ta[T][T];
    __shared__ float tb[T][T + 1]; // padded: a column walk hits different banks
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < k; t += T) {
        ta[threadIdx.y][threadIdx.x] =
            (row < m && t + (int)threadIdx.x < k) ? a[row * k + t + threadIdx.x] : 0.0f;
        tb[threadIdx.y][threadIdx.x] =
            (col < n && t + (int)threadIdx.y < k) ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int q = 0; q < T; ++q) acc += ta[threadIdx.y][q] * tb[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

int main() {
    const int m = 70, n = 53, k = 45;
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (int i = 0; i < m * k; ++i) a[i] = float((i * 7) % 11) - 5.0f;
    for (int i = 0; i < k * n; ++i) b[i] = float((i * 5) % 13) - 6.0f;
    float *da, *db, *dc;
    CHECK(hipMalloc(&da, a.size() * 4));
    CHECK(hipMalloc(&db, b.size() * 4));
    CHECK(hipMalloc(&dc, c.size() * 4));
    CHECK(hipMemcpy(da, a.data(), a.size() * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), b.size() * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(matmul, dim3((n + T - 1) / T, (m + T - 1) / T), dim3(T, T), 0, 0, da, db,
                       dc, m, n, k);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(c.data(), dc, c.size() * 4, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            float want = 0;
            for (int q = 0; q < k; ++q) want += a[i * k + q] * b[q * n + j];
            if (c[i * n + j] != want && bad++ < 10)
                std::fprintf(stderr, "c[%d][%d] = %g want %g\n", i, j, c[i * n + j], want);
        }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    if (bad) {
        std::fprintf(stderr, "matmul_tiled: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("matmul_tiled: PASSED (%dx%dx%d)\n", m, n, k);
    return 0;
}
