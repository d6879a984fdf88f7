// vector_add: c[i] = a[i] + b[i] over a little over a million floats, launched
// as many 256-thread blocks with a partial last block. Every element is
// checked on the host; mismatches are printed and the exit status is 1.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,    \
                         #call, hipGetErrorName(err_), static_cast<int>(err_));        \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

__global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

int main() {
    const unsigned n = (1u << 20) + 123; // ragged tail: the last block is partly idle
    const unsigned block = 256;
    const unsigned grid = (n + block - 1) / block;
    const size_t bytes = size_t(n) * sizeof(float);

    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (unsigned i = 0; i < n; ++i) {
        a[i] = float(i % 1000) * 0.5f;
        b[i] = float(i % 7) - 3.0f;
    }

    float *da = nullptr, *db = nullptr, *dc = nullptr;
    CHECK(hipMalloc(&da, bytes));
    CHECK(hipMalloc(&db, bytes));
    CHECK(hipMalloc(&dc, bytes));
    CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(dc, 0xff, bytes)); // NaNs: an element the kernel skips cannot pass

    hipLaunchKernelGGL(vector_add, dim3(grid), dim3(block), 0, 0, da, db, dc, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));

    unsigned bad = 0;
    for (unsigned i = 0; i < n; ++i) {
        const float want = a[i] + b[i];
        if (!(c[i] == want)) {
            if (bad < 10) {
                std::fprintf(stderr, "mismatch at %u: expected %g, got %g\n", i, want, c[i]);
            }
            ++bad;
        }
    }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));

    if (bad != 0) {
        std::fprintf(stderr, "vector_add: FAILED, %u of %u elements wrong\n", bad, n);
        return 1;
    }
    std::printf("vector_add: PASSED, %u elements in %u blocks of %u threads\n", n, grid, block);
    return 0;
}
