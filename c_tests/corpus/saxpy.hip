// saxpy: y = a*x + y over ~1M floats with a grid-stride loop and a ragged
// tail; every element is checked against the host's fused a*x+y.
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

__global__ void saxpy(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

int main() {
    const int n = (1 << 20) + 77;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
        x[i] = float(i % 1013) * 0.25f - 100.0f;
        y[i] = float(i % 17) * 1.5f;
    }
    float *dx, *dy;
    CHECK(hipMalloc(&dx, n * sizeof(float)));
    CHECK(hipMalloc(&dy, n * sizeof(float)));
    CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
    const float a = 1.75f;
    // Fewer blocks than elements: the grid-stride loop runs several rounds.
    hipLaunchKernelGGL(saxpy, dim3(1000), dim3(256), 0, 0, a, dx, dy, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float want = std::fma(a, x[i], y[i]);
        if (out[i] != want) {
            if (bad++ < 10) std::fprintf(stderr, "y[%d] = %g, want %g\n", i, out[i], want);
        }
    }
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    if (bad) {
        std::fprintf(stderr, "saxpy: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("saxpy: PASSED (%d elements)\n", n);
    return 0;
}
