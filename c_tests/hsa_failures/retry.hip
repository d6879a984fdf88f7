// retry: the work of a program that meets failing HSA calls (HSASIM_FAIL) and retries
// each HIP call until it succeeds. Every failure must be a HIP error (printed as
// "retry: CALL -> NAME"); once the failures stop, every call succeeds and the results are
// right. Exits 0 when the results are right, 2 when a call never succeeded, 3 on a wrong
// result (success with wrong data).
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static int failures = 0;

// Calls `call` until it succeeds (at most 50 tries); false if it never did.
#define RETRY(call)                                                                      \
    [&]() {                                                                              \
        for (int try_ = 0; try_ < 50; ++try_) {                                          \
            hipError_t err_ = (call);                                                    \
            if (err_ == hipSuccess) return true;                                         \
            ++failures;                                                                  \
            std::fprintf(stderr, "retry: %s -> %s\n", #call, hipGetErrorName(err_));     \
            (void)hipGetLastError();                                                     \
        }                                                                                \
        return false;                                                                    \
    }()

__global__ void scale_add(const int* x, int* y, int a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    const int n = 4096;
    const size_t bytes = n * sizeof(int);
    std::vector<int> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
        x[i] = i % 97;
        y[i] = i % 13;
    }
    int *dx = nullptr, *dy = nullptr;
    hipStream_t stream = nullptr;
    if (!RETRY(hipMalloc(&dx, bytes)) || !RETRY(hipMalloc(&dy, bytes)) ||
        !RETRY(hipStreamCreate(&stream)) ||
        !RETRY(hipMemcpy(dx, x.data(), bytes, hipMemcpyHostToDevice)) ||
        !RETRY(hipMemcpy(dy, y.data(), bytes, hipMemcpyHostToDevice)))
        return 2;
    // Three rounds on a stream of its own: each adds 3*x to y.
    for (int round = 0; round < 3; ++round) {
        if (!RETRY((scale_add<<<n / 256, 256, 0, stream>>>(dx, dy, 3, n), hipGetLastError())))
            return 2;
        if (!RETRY(hipStreamSynchronize(stream))) return 2;
    }
    if (!RETRY(hipMemcpy(out.data(), dy, bytes, hipMemcpyDeviceToHost))) return 2;
    for (int i = 0; i < n; ++i) {
        int want = y[i] + 9 * x[i];
        if (out[i] != want) {
            std::fprintf(stderr, "retry: wrong result at %d: %d, expected %d\n", i, out[i], want);
            return 3;
        }
    }
    if (!RETRY(hipStreamDestroy(stream)) || !RETRY(hipFree(dx)) || !RETRY(hipFree(dy)))
        return 2;
    std::printf("retry: results right after %d failed calls\n", failures);
    return 0;
}
