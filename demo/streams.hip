// The demo program: four streams, each copying its own slice of data to the GPU, running a
// kernel on it and copying the result back, all enqueued before anything is waited for.
// Which HSA queue serves each stream is hipshim's queue policy: run it under two policies
// and the stats show different queues, packets and doorbells for the same program.
// Every element is checked on the host; the exit status is 1 on any mismatch or error.
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

// y = a * x + y, then a second pass so each stream has two dependent kernels in order.
__global__ void saxpy(float a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    constexpr int kStreams = 4;
    constexpr unsigned kPerStream = 16384;
    constexpr unsigned kThreads = 256;
    constexpr unsigned kBlocks = (kPerStream + kThreads - 1) / kThreads;

    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    std::printf("device 0: %s (%s), %d compute units\n", props.name, props.gcnArchName,
                props.multiProcessorCount);

    std::vector<float> x(kStreams * kPerStream), y(kStreams * kPerStream);
    for (unsigned i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(i % 1000);
        y[i] = 1.0f;
    }
    float *dx = nullptr, *dy = nullptr;
    CHECK(hipMalloc(&dx, x.size() * sizeof(float)));
    CHECK(hipMalloc(&dy, y.size() * sizeof(float)));
    float *hx = nullptr, *hy = nullptr;  // pinned, so the copies are truly asynchronous
    CHECK(hipHostMalloc(&hx, x.size() * sizeof(float)));
    CHECK(hipHostMalloc(&hy, y.size() * sizeof(float)));
    std::copy(x.begin(), x.end(), hx);
    std::copy(y.begin(), y.end(), hy);

    hipStream_t streams[kStreams];
    hipEvent_t done[kStreams];
    for (int s = 0; s < kStreams; ++s) {
        CHECK(hipStreamCreate(&streams[s]));
        CHECK(hipEventCreate(&done[s]));
    }
    for (int s = 0; s < kStreams; ++s) {
        size_t off = static_cast<size_t>(s) * kPerStream;
        size_t bytes = kPerStream * sizeof(float);
        CHECK(hipMemcpyAsync(dx + off, hx + off, bytes, hipMemcpyHostToDevice, streams[s]));
        CHECK(hipMemcpyAsync(dy + off, hy + off, bytes, hipMemcpyHostToDevice, streams[s]));
        saxpy<<<kBlocks, kThreads, 0, streams[s]>>>(2.0f, dx + off, dy + off, kPerStream);
        saxpy<<<kBlocks, kThreads, 0, streams[s]>>>(0.5f, dx + off, dy + off, kPerStream);
        CHECK(hipGetLastError());
        CHECK(hipMemcpyAsync(hy + off, dy + off, bytes, hipMemcpyDeviceToHost, streams[s]));
        CHECK(hipEventRecord(done[s], streams[s]));
    }
    for (int s = 0; s < kStreams; ++s) CHECK(hipEventSynchronize(done[s]));

    unsigned bad = 0;
    for (unsigned i = 0; i < y.size(); ++i) {
        float want = 2.5f * x[i] + 1.0f;
        if (hy[i] != want && bad++ < 5)
            std::fprintf(stderr, "element %u: got %g, want %g\n", i, hy[i], want);
    }
    for (int s = 0; s < kStreams; ++s) {
        CHECK(hipEventDestroy(done[s]));
        CHECK(hipStreamDestroy(streams[s]));
    }
    CHECK(hipHostFree(hx));
    CHECK(hipHostFree(hy));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    if (bad) {
        std::fprintf(stderr, "streams demo: %u of %zu elements wrong\n", bad, y.size());
        return 1;
    }
    std::printf("%d streams x (2 copies in, 2 kernels, 1 copy out): all %zu elements right\n",
                kStreams, y.size());
    return 0;
}
