// Virtual time (HSASIM_TIME=virtual): what a program sees of the modelled GPU's clock.
// Prints the times it measured; tests/c_tests_vtime.rs runs it several ways and requires the
// same output from every run (threaded and deterministic, several workers or one).
#include "../check.h"

#include <cstdint>
#include <vector>

__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// A loop of dependent multiply-adds: time that grows with `steps` and no memory traffic.
__global__ void chain(float* out, int steps, long long* cycles) {
    long long t0 = clock64();
    float v = threadIdx.x;
    for (int s = 0; s < steps; ++s) v = v * 0.999f + 1.0f;
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
    if (threadIdx.x == 0 && blockIdx.x == 0) *cycles = t1 - t0;
}

static float timed_saxpy(int n, float* x, float* y, hipStream_t s) {
    hipEvent_t a, b;
    CHECK(hipEventCreate(&a));
    CHECK(hipEventCreate(&b));
    CHECK(hipEventRecord(a, s));
    saxpy<<<(n + 255) / 256, 256, 0, s>>>(2.0f, x, y, n);
    CHECK(hipEventRecord(b, s));
    CHECK(hipEventSynchronize(b));
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, a, b));
    CHECK(hipEventDestroy(a));
    CHECK(hipEventDestroy(b));
    return ms;
}

int main() {
    const int big = 1 << 22;
    float *x, *y, *out;
    long long* cycles;
    CHECK(hipMalloc(&x, big * sizeof(float)));
    CHECK(hipMalloc(&y, big * sizeof(float)));
    CHECK(hipMalloc(&out, 64 * 256 * sizeof(float)));
    CHECK(hipMalloc(&cycles, sizeof(long long)));
    std::vector<float> host(big, 1.0f);
    CHECK(hipMemcpy(x, host.data(), big * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(y, host.data(), big * sizeof(float), hipMemcpyHostToDevice));

    // Durations follow the work: four times the elements take longer (a GPU's bandwidth, not
    // the interpreter's speed, decides by how much).
    float small_ms = timed_saxpy(1 << 20, x, y, 0);
    float big_ms = timed_saxpy(big, x, y, 0);
    std::printf("saxpy 1M: %.6f ms\nsaxpy 4M: %.6f ms\n", small_ms, big_ms);
    EXPECT_TRUE(small_ms > 0.0f);
    EXPECT_TRUE(big_ms > 1.5f * small_ms);

    // The results are the functional simulation's, as without virtual time.
    CHECK(hipMemcpy(host.data(), y, big * sizeof(float), hipMemcpyDeviceToHost));
    EXPECT_EQ(host[0], 5.0f);
    EXPECT_EQ(host[(1 << 20) + 1], 3.0f);

    // A query right after a launch sees the kernel still running: on the virtual clock the
    // host has not waited yet, however fast the simulation finished it.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    chain<<<64, 256, 0, s>>>(out, 20000, cycles);
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    CHECK(hipStreamSynchronize(s));
    EXPECT_ERR(hipStreamQuery(s), hipSuccess);
    long long kernel_cycles = 0;
    CHECK(hipMemcpy(&kernel_cycles, cycles, sizeof(long long), hipMemcpyDeviceToHost));
    std::printf("chain clock64 delta: %lld\n", kernel_cycles);
    // 20,000 dependent multiply-adds cost at least 4 cycles each on a SIMD.
    EXPECT_TRUE(kernel_cycles >= 80000);

    // Two streams run side by side on the device's compute units: together they take less
    // than one after the other.
    hipStream_t s2;
    CHECK(hipStreamCreate(&s2));
    hipEvent_t start, end1, end2;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&end1));
    CHECK(hipEventCreate(&end2));
    CHECK(hipEventRecord(start, 0));
    CHECK(hipStreamWaitEvent(s, start, 0));
    CHECK(hipStreamWaitEvent(s2, start, 0));
    chain<<<16, 256, 0, s>>>(out, 20000, cycles);
    chain<<<16, 256, 0, s2>>>(out + 16 * 256, 20000, cycles);
    CHECK(hipEventRecord(end1, s));
    CHECK(hipEventRecord(end2, s2));
    CHECK(hipDeviceSynchronize());
    float ms1 = 0, ms2 = 0;
    CHECK(hipEventElapsedTime(&ms1, start, end1));
    CHECK(hipEventElapsedTime(&ms2, start, end2));
    float alone = 0;
    {
        hipEvent_t a, b;
        CHECK(hipEventCreate(&a));
        CHECK(hipEventCreate(&b));
        CHECK(hipEventRecord(a, s));
        chain<<<16, 256, 0, s>>>(out, 20000, cycles);
        CHECK(hipEventRecord(b, s));
        CHECK(hipEventSynchronize(b));
        CHECK(hipEventElapsedTime(&alone, a, b));
    }
    std::printf("chain alone: %.6f ms, two streams: %.6f ms and %.6f ms\n", alone, ms1, ms2);
    float both = ms1 > ms2 ? ms1 : ms2;
    EXPECT_TRUE(both < 1.5f * alone);

    CHECK(hipFree(x));
    CHECK(hipFree(y));
    CHECK(hipFree(out));
    CHECK(hipFree(cycles));
    return finish("virtual_clock");
}
