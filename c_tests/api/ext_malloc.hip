// ext_malloc: hipExtMallocWithFlags gives device memory of the current device for each of
// AMD's flags: kernels, copies and fills use it as hipMalloc's; fine-grained and uncached memory
// is also read and written by the host directly while the device works on it; signal memory is
// 8 zeroed bytes a stream can wait on. Unknown flags, signal memory of another size and a null
// out-pointer are hipErrorInvalidValue.
#include <hip/hip_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

#include "../check.h"

__global__ void fill(unsigned* out, unsigned n, unsigned base) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

__global__ void add_host_value(unsigned* data, unsigned* out) { *out = data[0] + data[1]; }

static const unsigned N = 1024;

static void device_memory(unsigned flags, bool host_reaches) {
    unsigned* p = nullptr;
    EXPECT_OK(hipExtMallocWithFlags(reinterpret_cast<void**>(&p), N * sizeof(unsigned), flags));
    if (p == nullptr) {
        std::fprintf(stderr, "FAIL flags %u: no memory\n", flags);
        ++failures;
        return;
    }
    hipPointerAttribute_t attrs = {};
    EXPECT_OK(hipPointerGetAttributes(&attrs, p));
    EXPECT_EQ(static_cast<int>(attrs.type), static_cast<int>(hipMemoryTypeDevice));
    EXPECT_EQ(attrs.device, 0);

    fill<<<(N + 255) / 256, 256>>>(p, N, 1000 * (flags + 1));
    CHECK(hipDeviceSynchronize());
    static unsigned got[N];
    CHECK(hipMemcpy(got, p, sizeof(got), hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++) {
        if (got[i] != 1000 * (flags + 1) + i) {
            std::fprintf(stderr, "FAIL flags %u: element %u is %u\n", flags, i, got[i]);
            ++failures;
            break;
        }
    }
    CHECK(hipMemset(p, 0x11, 16));
    CHECK(hipMemcpy(got, p, 16, hipMemcpyDeviceToHost));
    EXPECT_EQ(got[3], 0x11111111u);

    if (host_reaches) {
        // The host reads the kernel's writes and writes what the next kernel reads, with no
        // copy between them.
        fill<<<1, 4>>>(p, 4, 70);
        CHECK(hipDeviceSynchronize());
        auto* atomic = reinterpret_cast<std::atomic<unsigned>*>(p);
        EXPECT_EQ(atomic[3].load(), 73u);
        atomic[0].store(5);
        atomic[1].store(6);
        add_host_value<<<1, 1>>>(p, p + 2);
        CHECK(hipDeviceSynchronize());
        EXPECT_EQ(atomic[2].load(), 11u);
    }
    EXPECT_OK(hipFree(p));
}

static void signal_memory() {
    uint64_t* signal = nullptr;
    EXPECT_OK(hipExtMallocWithFlags(reinterpret_cast<void**>(&signal), 8, hipMallocSignalMemory));
    if (signal == nullptr) {
        ++failures;
        return;
    }
    auto* value = reinterpret_cast<std::atomic<uint64_t>*>(signal);
    EXPECT_TRUE(value->load() == 0);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    unsigned* out;
    CHECK(hipMalloc(&out, sizeof(unsigned)));
    CHECK(hipMemset(out, 0, sizeof(unsigned)));
    EXPECT_OK(hipStreamWaitValue64(s, signal, 3, hipStreamWaitValueEq));
    fill<<<1, 1, 0, s>>>(out, 1, 42);
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    value->store(3);
    CHECK(hipStreamSynchronize(s));
    unsigned got = 0;
    CHECK(hipMemcpy(&got, out, sizeof(got), hipMemcpyDeviceToHost));
    EXPECT_EQ(got, 42u);
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
    EXPECT_OK(hipFree(signal));
}

int main() {
    device_memory(hipDeviceMallocDefault, false);
    device_memory(hipDeviceMallocFinegrained, true);
    device_memory(hipDeviceMallocUncached, true);
    device_memory(hipDeviceMallocContiguous, false);
    signal_memory();

    void* p = reinterpret_cast<void*>(0x1);
    EXPECT_ERR(hipExtMallocWithFlags(&p, 64, 5), hipErrorInvalidValue);
    EXPECT_ERR(hipExtMallocWithFlags(&p, 64, 0xffffffffu), hipErrorInvalidValue);
    EXPECT_ERR(hipExtMallocWithFlags(&p, 16, hipMallocSignalMemory), hipErrorInvalidValue);
    EXPECT_ERR(hipExtMallocWithFlags(&p, 4, hipMallocSignalMemory), hipErrorInvalidValue);
    EXPECT_TRUE(p == reinterpret_cast<void*>(0x1));
    EXPECT_ERR(hipExtMallocWithFlags(nullptr, 64, hipDeviceMallocFinegrained),
               hipErrorInvalidValue);
    // Zero bytes: success and a null pointer, as hipMalloc answers.
    EXPECT_OK(hipExtMallocWithFlags(&p, 0, hipDeviceMallocFinegrained));
    EXPECT_TRUE(p == nullptr);
    return finish("ext_malloc");
}
