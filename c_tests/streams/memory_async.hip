// memory_async: stream-ordered copies of every kind (pageable, device, pinned when
// hipHostMalloc exists), hipMemcpyDefault, the driver-style names, 2D copies, fills of
// 8/16/32-bit patterns at unaligned addresses, ordering against kernels in the same
// stream, _spt forms, and the errors for bad arguments.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>


#include "../check.h"
#include "timing.h"


// Declared here in case the memory headers do not declare them yet; same signatures.
extern "C" hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags);
extern "C" hipError_t hipHostFree(void* ptr);

// out[i] = in[i] * 2 + 1 for i < n: a kernel whose output shows which data it saw.
__global__ void transform(const int* in, int* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2 + 1;
}

static void copies_every_kind() {
    const unsigned n = 3000;
    const size_t bytes = n * sizeof(int);
    std::vector<int> host(n), back(n, -1);
    for (unsigned i = 0; i < n; ++i) host[i] = int(i * 7 + 3);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int *a, *b;
    CHECK(hipMalloc(&a, bytes));
    CHECK(hipMalloc(&b, bytes));

    CHECK(hipMemcpyAsync(a, host.data(), bytes, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(b, a, bytes, hipMemcpyDeviceToDevice, s));
    CHECK(hipMemcpyAsync(back.data(), b, bytes, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(back == host);

    // hipMemcpyDefault infers the direction from where the pointers live.
    std::vector<int> other(n, 0), again(n, 0);
    CHECK(hipMemcpyAsync(b, host.data() , bytes, hipMemcpyDefault, s));
    CHECK(hipMemcpyAsync(a, b, bytes, hipMemcpyDefault, s));
    CHECK(hipMemcpyAsync(other.data(), a, bytes, hipMemcpyDefault, s));
    CHECK(hipMemcpyAsync(again.data(), other.data(), bytes, hipMemcpyDefault, s));
    CHECK(hipMemcpyAsync(again.data(), again.data(), bytes, hipMemcpyHostToHost, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(other == host && again == host);

    // The driver-style names.
    std::fill(back.begin(), back.end(), 0);
    CHECK(hipMemcpyHtoDAsync(a, host.data(), bytes, s));
    CHECK(hipMemcpyDtoDAsync(b, a, bytes, s));
    CHECK(hipMemcpyDtoHAsync(back.data(), b, bytes, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(back == host);

    // hipMemcpyWithStream returns when the copy is done; the _spt form uses the
    // per-thread stream.
    std::fill(back.begin(), back.end(), 0);
    CHECK(hipMemcpyWithStream(back.data(), a, bytes, hipMemcpyDeviceToHost, s));
    EXPECT_TRUE(back == host);
    std::fill(back.begin(), back.end(), 0);
    CHECK(hipMemcpyAsync_spt(back.data(), b, bytes, hipMemcpyDeviceToHost, 0));
    CHECK(hipStreamSynchronize_spt(0));
    EXPECT_TRUE(back == host);

    // Size 0 is a no-op; bad arguments are refused.
    CHECK(hipMemcpyAsync(a, host.data(), 0, hipMemcpyHostToDevice, s));
    EXPECT_ERR(hipMemcpyAsync(nullptr, host.data(), 4, hipMemcpyHostToDevice, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyAsync(a, nullptr, 4, hipMemcpyHostToDevice, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyAsync(back.data(), host.data(), 4, hipMemcpyHostToDevice, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyAsync(back.data(), host.data(), 4, hipMemcpyDeviceToDevice, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyAsync(a, host.data(), 4, static_cast<hipMemcpyKind>(9), s),
               hipErrorInvalidMemcpyDirection);
    EXPECT_ERR(hipMemcpyAsync(a, host.data(), 4, hipMemcpyHostToDevice,
                              reinterpret_cast<hipStream_t>(0x1234560)),
               hipErrorInvalidHandle);
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipStreamDestroy(s));
}

// Copies and kernels in one stream stay in order: a copy waits for the kernel before it,
// and a kernel waits for the copy before it (the copy engine is not the kernel queue).
static void copies_and_kernels_in_order() {
    const unsigned n = 1 << 20; // 4 MiB of ints: long enough to overlap if unordered
    const size_t bytes = n * sizeof(int);
    std::vector<int> host(n), back(n, 0);
    for (unsigned i = 0; i < n; ++i) host[i] = int(i ^ 0x5a5a);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    int *a, *b, *c, *gate;
    CHECK(hipMalloc(&a, bytes));
    CHECK(hipMalloc(&b, bytes));
    CHECK(hipMalloc(&c, bytes));
    CHECK(hipMalloc(&gate, sizeof(int)));
    CHECK(hipMemcpy(a, host.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(b, 0, bytes));

    // kernel (slow start) -> D2D copy of its output -> kernel reading the copy.
    spin_then_write<<<1, 1, 0, s>>>(100 * TICKS_PER_MS, gate, 1, nullptr);
    transform<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
    CHECK(hipMemcpyAsync(c, b, bytes, hipMemcpyDeviceToDevice, s));
    transform<<<(n + 255) / 256, 256, 0, s>>>(c, a, n);
    CHECK(hipMemcpyAsync(back.data(), a, bytes, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    unsigned bad = 0;
    for (unsigned i = 0; i < n; ++i) {
        int want = (host[i] * 2 + 1) * 2 + 1;
        if (back[i] != want && bad++ < 5) {
            std::fprintf(stderr, "element %u: expected %d, got %d\n", i, want, back[i]);
        }
    }
    EXPECT_TRUE(bad == 0);
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    CHECK(hipFree(gate));
    CHECK(hipStreamDestroy(s));
}

static void copies_2d() {
    const size_t width = 24, height = 7, hpitch = 40, dpitch = 64;
    std::vector<unsigned char> host(hpitch * height), back(hpitch * height, 0xee);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (unsigned char)(i * 13 + 1);
    unsigned char* dev;
    CHECK(hipMalloc(&dev, dpitch * height));
    CHECK(hipMemset(dev, 0, dpitch * height));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpy2DAsync(dev, dpitch, host.data(), hpitch, width, height, hipMemcpyHostToDevice, s));
    unsigned char* dev2;
    CHECK(hipMalloc(&dev2, dpitch * height));
    CHECK(hipMemcpy2DAsync(dev2, dpitch, dev, dpitch, width, height, hipMemcpyDeviceToDevice, s));
    CHECK(hipMemcpy2DAsync(back.data(), hpitch, dev2, dpitch, width, height, hipMemcpyDefault, s));
    CHECK(hipStreamSynchronize(s));
    for (size_t r = 0; r < height; ++r) {
        for (size_t x = 0; x < hpitch; ++x) {
            unsigned char want = x < width ? host[r * hpitch + x] : 0xee;
            if (back[r * hpitch + x] != want) {
                std::fprintf(stderr, "2D row %zu col %zu: expected %u got %u\n", r, x, want,
                             back[r * hpitch + x]);
                std::exit(1);
            }
        }
    }
    EXPECT_ERR(hipMemcpy2DAsync(dev, 16, host.data(), hpitch, width, height,
                                hipMemcpyHostToDevice, s),
               hipErrorInvalidPitchValue);
    CHECK(hipMemcpy2DAsync_spt(dev, dpitch, host.data(), hpitch, width, 0, hipMemcpyHostToDevice, 0));
    CHECK(hipFree(dev));
    CHECK(hipFree(dev2));
    CHECK(hipStreamDestroy(s));
}

static void fills() {
    const size_t bytes = 64;
    unsigned char* dev;
    CHECK(hipMalloc(&dev, bytes));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    std::vector<unsigned char> want(bytes, 0x11);
    CHECK(hipMemsetAsync(dev, 0x11, bytes, s));
    // Unaligned starts and odd lengths: the 4-byte-aligned middle and the edges.
    CHECK(hipMemsetD8Async(dev + 1, 0xab, 13, s));
    for (size_t i = 1; i < 14; ++i) want[i] = 0xab;
    CHECK(hipMemsetD16Async(dev + 18, 0x1234, 5, s));
    for (size_t i = 0; i < 5; ++i) {
        want[18 + 2 * i] = 0x34;
        want[18 + 2 * i + 1] = 0x12;
    }
    CHECK(hipMemsetD32Async(dev + 32, (int)0xdeadbeef, 3, s));
    for (size_t i = 0; i < 3; ++i) {
        want[32 + 4 * i] = 0xef;
        want[33 + 4 * i] = 0xbe;
        want[34 + 4 * i] = 0xad;
        want[35 + 4 * i] = 0xde;
    }
    CHECK(hipMemsetAsync_spt(dev + 47, 0x77, 3, s));
    for (size_t i = 47; i < 50; ++i) want[i] = 0x77;
    std::vector<unsigned char> back(bytes, 0);
    CHECK(hipMemcpyAsync(back.data(), dev, bytes, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (size_t i = 0; i < bytes; ++i) {
        if (back[i] != want[i]) {
            std::fprintf(stderr, "fill byte %zu: expected %#x got %#x\n", i, want[i], back[i]);
            std::exit(1);
        }
    }
    // A fill is ordered after a kernel writing the same memory, and before a later one.
    int* words;
    const unsigned n = 1 << 16;
    CHECK(hipMalloc(&words, n * sizeof(int)));
    spin_then_write<<<1, 1, 0, s>>>(100 * TICKS_PER_MS, words, 12345, nullptr);
    CHECK(hipMemsetD32Async(words, 9, n, s));
    transform<<<n / 256, 256, 0, s>>>(words, words, n);
    std::vector<int> out(n, 0);
    CHECK(hipMemcpyAsync(out.data(), words, n * sizeof(int), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (unsigned i = 0; i < n; ++i) {
        if (out[i] != 19) {
            std::fprintf(stderr, "ordered fill: word %u is %d, expected 19\n", i, out[i]);
            std::exit(1);
        }
    }
    // Errors: misaligned elements, pageable memory, null.
    EXPECT_ERR(hipMemsetD16Async(dev + 1, 1, 2, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemsetD32Async(dev + 2, 1, 2, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemsetAsync(back.data(), 0, 4, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemsetAsync(nullptr, 0, 4, s), hipErrorInvalidValue);
    CHECK(hipMemsetAsync(dev, 0, 0, s));
    CHECK(hipFree(words));
    CHECK(hipFree(dev));
    CHECK(hipStreamDestroy(s));
}

// Pinned host memory is copied by the copy engines without the host waiting.
static void pinned_memory() {
    const size_t n = 1 << 16, bytes = n * sizeof(int);
    int *pinned_in = nullptr, *pinned_out = nullptr;
    hipError_t e = hipHostMalloc(reinterpret_cast<void**>(&pinned_in), bytes, 0);
    if (e == hipErrorNotSupported) {
        std::printf("memory_async: hipHostMalloc not available; pinned copies not tested\n");
        return;
    }
    CHECK(e);
    CHECK(hipHostMalloc(reinterpret_cast<void**>(&pinned_out), bytes, 0));
    for (size_t i = 0; i < n; ++i) {
        pinned_in[i] = int(i * 3);
        pinned_out[i] = -1;
    }
    int* dev;
    CHECK(hipMalloc(&dev, bytes));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    spin_then_write<<<1, 1, 0, s>>>(200 * TICKS_PER_MS, dev, -7, nullptr);
    CHECK(hipMemcpyAsync(dev, pinned_in, bytes, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(pinned_out, dev, bytes, hipMemcpyDeviceToHost, s));
    // The host was not held: the kernel in front is still running.
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    CHECK(hipStreamSynchronize(s));
    for (size_t i = 0; i < n; ++i) {
        if (pinned_out[i] != int(i * 3)) {
            std::fprintf(stderr, "pinned element %zu: %d\n", i, pinned_out[i]);
            std::exit(1);
        }
    }
    CHECK(hipMemsetD32Async(pinned_out, 5, n, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(pinned_out[0] == 5 && pinned_out[n - 1] == 5);
    CHECK(hipFree(dev));
    CHECK(hipHostFree(pinned_in));
    CHECK(hipHostFree(pinned_out));
    CHECK(hipStreamDestroy(s));
}

int main() {
    copies_every_kind();
    copies_and_kernels_in_order();
    copies_2d();
    fills();
    pinned_memory();
    return finish("memory_async");
}
