// Virtual time checked end to end: the published figures of docs/guide/virtual-time-models.md
// measured through HIP on the modelled device, with real compiled kernels (their own
// instruction mix, not the model's assumptions about it). tests/c_tests_vtime.rs runs it under
// a trace on MI300X and MI308X, reads the kernels' and copies' times from the trace, and
// compares them with the published figures; the program prints what it measured through HIP
// (hipEventElapsedTime) beside them.
//
// `validation extra` also runs the MFMA peak and the CU-mask rows (MI300X only: their grids
// are sized for its 304 CUs, and the MFMA loop is costly to interpret, so the plain run, which
// `cargo bench --bench vtime_cost` times, leaves them out).
#include "../check.h"

#include <cstring>
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

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));

// The matrix cores' peak: four independent v_mfma_f32_32x32x8_f16 (16384 FLOPs each) per
// iteration, so a wave never waits for its own results. The sum keeps the work alive.
__global__ void mfma_peak(float* out, int iterations) {
    half4 a = {(_Float16)1, (_Float16)1, (_Float16)1, (_Float16)1};
    float16 c0 = {}, c1 = {}, c2 = {}, c3 = {};
    for (int i = 0; i < iterations; ++i) {
        c0 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, a, c0, 0, 0, 0);
        c1 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, a, c1, 0, 0, 0);
        c2 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, a, c2, 0, 0, 0);
        c3 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, a, c3, 0, 0, 0);
    }
    float s = 0;
    for (int k = 0; k < 16; ++k) s += c0[k] + c1[k] + c2[k] + c3[k];
    if (s == -1.0f) out[threadIdx.x] = s;
}

// Vector ALU work only: dependent FMAs, 8 per iteration.
__global__ void alu_busy(float* out, float b, int iterations) {
    float a = threadIdx.x;
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) a = __builtin_fmaf(a, b, 0.5f);
    }
    if (a == -1.0f) out[threadIdx.x] = a;
}

static float elapsed_ms(hipEvent_t a, hipEvent_t b) {
    float ms = 0;
    CHECK(hipEventElapsedTime(&ms, a, b));
    return ms;
}

// A kernel between two events on `stream`, in microseconds.
template <typename Launch>
static double timed_us(hipStream_t stream, hipEvent_t a, hipEvent_t b, Launch launch) {
    CHECK(hipEventRecord(a, stream));
    launch();
    CHECK(hipGetLastError());
    CHECK(hipEventRecord(b, stream));
    CHECK(hipEventSynchronize(b));
    return 1000.0 * elapsed_ms(a, b);
}

// MI300X: 304 CUs.
const int CUS = 304;

// The MFMA peak: 8 workgroups of 4 waves per CU (as many as fit: the kernel's 68 VGPRs leave
// 7 waves per SIMD), at 8 and at 16 iterations (32 and 64 MFMAs a wave). The test reads the
// rate between the two from the kernels' own times in the trace; printed here: the same from
// the events, and the longer run's FLOPs over its event-to-event time.
static void mfma(hipEvent_t a, hipEvent_t b, float* out) {
    const int workgroups = CUS * 8;
    const double flops_per_iteration = 4.0 * 16384 * 4 * workgroups;
    double us[2];
    const int iterations[2] = {8, 16};
    for (int r = 0; r < 2; ++r)
        us[r] = timed_us(0, a, b, [&] { mfma_peak<<<workgroups, 256>>>(out, iterations[r]); });
    double margin = flops_per_iteration * (iterations[1] - iterations[0]) / (us[1] - us[0]);
    std::printf("mfma 32x32x8 f16, events, rate between 32 and 64 MFMAs a wave: %.1f TFLOPS\n",
                margin * 1e-6);
    std::printf("mfma 32x32x8 f16, 64 MFMAs a wave, event to event: %.3f us (%.1f TFLOPS)\n",
                us[1], flops_per_iteration * iterations[1] / us[1] * 1e-6);
}

// The same VALU-bound kernel on the null stream and on a stream masked to half the CUs (every
// other byte of the mask: half the CUs of each XCD), with few workgroups (one per CU of the
// masked half at most) and with one workgroup of 4 waves per SIMD slot of the whole device
// (8 per CU: the masked half must run them in two turns).
static void cu_mask(hipEvent_t a, hipEvent_t b, float* out) {
    uint32_t half[(CUS + 31) / 32];
    for (uint32_t& w : half) w = 0x00ff00ff;
    hipStream_t masked;
    CHECK(hipExtStreamCreateWithCUMask(&masked, (CUS + 31) / 32, half));
    const int iterations = 256;
    for (int workgroups : {64, CUS * 8}) {
        double us[2];
        hipStream_t streams[2] = {0, masked};
        for (int s = 0; s < 2; ++s)
            us[s] = timed_us(streams[s], a, b, [&] {
                alu_busy<<<workgroups, 256, 0, streams[s]>>>(out, 1.0001f, iterations);
            });
        std::printf("cu mask, %d workgroups, event to event: all CUs %.3f us, half %.3f us\n",
                    workgroups, us[0], us[1]);
    }
    CHECK(hipStreamDestroy(masked));
}

int main(int argc, char** argv) {
    const bool extra = argc > 1 && std::strcmp(argv[1], "extra") == 0;
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

    if (extra) {
        float* out;
        CHECK(hipMalloc(&out, 1024 * sizeof(float)));
        mfma(a, b, out);
        cu_mask(a, b, out);
        CHECK(hipFree(out));
    }

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
