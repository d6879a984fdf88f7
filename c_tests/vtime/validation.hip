// Virtual time checked end to end: the published figures of docs/guide/virtual-time-models.md
// measured through HIP on the modelled device, with real compiled kernels (their own
// instruction mix, not the model's assumptions about it). tests/c_tests_vtime.rs runs it under
// a trace on MI300X and MI308X, reads the kernels' and copies' times from the trace, and
// compares them with the published figures; the program prints what it measured through HIP
// (hipEventElapsedTime) beside them.
#include "../check.h"

#include <vector>

__global__ void empty_kernel() {}

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// 16 bytes a lane, as STREAM's Quad (one 16-byte load and store per lane).
struct alignas(16) Quad {
    float x, y, z, w;
};

// STREAM's copy: one quad read and one written per thread.
__global__ void stream_copy(const Quad* in, Quad* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

static float elapsed_ms(hipEvent_t a, hipEvent_t b) {
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, a, b));
    return ms;
}

int main() {
    hipEvent_t a, b;
    CHECK(hipEventCreate(&a));
    CHECK(hipEventCreate(&b));

    // An empty kernel of 256 x 256 threads between two events (TransferBench's EvtMin).
    empty_kernel<<<256, 256>>>();
    CHECK(hipDeviceSynchronize());
    CHECK(hipEventRecord(a, 0));
    empty_kernel<<<256, 256>>>();
    CHECK(hipEventRecord(b, 0));
    CHECK(hipEventSynchronize(b));
    std::printf("empty kernel, event to event: %.3f us\n", 1000 * elapsed_ms(a, b));

    // vectorAdd of 1 M floats.
    const int n = 1 << 20;
    float *x, *y, *z;
    CHECK(hipMalloc(&x, n * sizeof(float)));
    CHECK(hipMalloc(&y, n * sizeof(float)));
    CHECK(hipMalloc(&z, n * sizeof(float)));
    CHECK(hipMemset(x, 0, n * sizeof(float)));
    CHECK(hipMemset(y, 0, n * sizeof(float)));
    CHECK(hipEventRecord(a, 0));
    vector_add<<<n / 256, 256>>>(x, y, z, n);
    CHECK(hipEventRecord(b, 0));
    CHECK(hipEventSynchronize(b));
    std::printf("vector_add 1M, event to event: %.3f us\n", 1000 * elapsed_ms(a, b));

    // STREAM copy of 256 MiB (128 MiB read, 128 MiB written).
    const int vectors = (128 << 20) / sizeof(Quad);
    Quad *in, *out;
    CHECK(hipMalloc(&in, vectors * sizeof(Quad)));
    CHECK(hipMalloc(&out, vectors * sizeof(Quad)));
    CHECK(hipEventRecord(a, 0));
    stream_copy<<<vectors / 256, 256>>>(in, out, vectors);
    CHECK(hipEventRecord(b, 0));
    CHECK(hipEventSynchronize(b));
    std::printf("stream copy 256 MiB, event to event: %.3f us\n", 1000 * elapsed_ms(a, b));

    // Host to device, 256 MiB from pinned memory in one copy.
    const size_t bytes = 256u << 20;
    void *pinned, *device;
    CHECK(hipHostMalloc(&pinned, bytes, 0));
    CHECK(hipMalloc(&device, bytes));
    CHECK(hipEventRecord(a, 0));
    CHECK(hipMemcpyAsync(device, pinned, bytes, hipMemcpyHostToDevice, 0));
    CHECK(hipEventRecord(b, 0));
    CHECK(hipEventSynchronize(b));
    std::printf("host to device 256 MiB, event to event: %.3f us\n", 1000 * elapsed_ms(a, b));

    CHECK(hipHostFree(pinned));
    CHECK(hipFree(device));
    CHECK(hipFree(in));
    CHECK(hipFree(out));
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    CHECK(hipFree(z));
    CHECK(hipEventDestroy(a));
    CHECK(hipEventDestroy(b));
    return finish("validation");
}
