// hipshim-test: targets=gfx942 env=HIPSHIM_QUEUE_POLICY=dedicated
// A known sequence of calls for tests/trace.rs: 2 streams, 3 kernels, 2 copies, 1 event.
// Stream s1 fills `a`; s2 copies `b` in from pinned memory, waits for s1 through the event,
// scales and adds, and copies the result out. Prints the calls it made so a trace can be
// checked against them.
#include "../check.h"

#include <cstdio>
#include <cstdlib>

__global__ void fill_kernel(int* p, int value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}

__global__ void scale_kernel(int* p, int factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= factor;
}

__global__ void add_kernel(int* out, const int* a, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

int main() {
    const int n = 1024;
    const size_t bytes = n * sizeof(int);
    int *a = nullptr, *b = nullptr, *host = nullptr;
    CHECK(hipMalloc(&a, bytes));
    CHECK(hipMalloc(&b, bytes));
    CHECK(hipHostMalloc(reinterpret_cast<void**>(&host), bytes, 0));
    for (int i = 0; i < n; ++i) host[i] = 2;
    hipStream_t s1, s2;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreate(&s2));
    hipEvent_t done_filling;
    CHECK(hipEventCreate(&done_filling));

    fill_kernel<<<n / 256, 256, 0, s1>>>(a, 3, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpyAsync(b, host, bytes, hipMemcpyHostToDevice, s2));
    CHECK(hipEventRecord(done_filling, s1));
    CHECK(hipStreamWaitEvent(s2, done_filling, 0));
    scale_kernel<<<n / 256, 256, 0, s2>>>(a, 5, n);
    add_kernel<<<n / 256, 256, 0, s2>>>(a, a, b, n);
    CHECK(hipMemcpyAsync(host, a, bytes, hipMemcpyDeviceToHost, s2));
    CHECK(hipStreamSynchronize(s2));

    for (int i = 0; i < n; ++i) {
        if (host[i] != 3 * 5 + 2) {
            std::fprintf(stderr, "host[%d] = %d, expected 17\n", i, host[i]);
            return 1;
        }
    }
    CHECK(hipEventDestroy(done_filling));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipStreamDestroy(s2));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipHostFree(host));
    std::printf("known: PASSED\n");
    return 0;
}
