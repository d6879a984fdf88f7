// hipshim-test: env=HSASIM_TIME=virtual
//
// Virtual time, a stream made to wait for lost work while its own copy is still in the
// host's virtual future: the host polls the stream (its packet count, and the copy's
// completion it must see before it may give the stream's work up) in turn. Loads that show
// nothing new count as polling across signals, so the host's clock moves on to the copy's
// completion and the call reports the fault instead of polling for ever.
#include "../check.h"

#include <vector>

__global__ void trap_kernel() { __builtin_trap(); }

int main() {
    const size_t n = 1 << 16;
    unsigned *pinned = nullptr, *device = nullptr, *other = nullptr;
    CHECK(hipHostMalloc((void**)&pinned, n * sizeof(unsigned), 0));
    CHECK(hipMalloc((void**)&device, n * sizeof(unsigned)));
    CHECK(hipMalloc((void**)&other, n * sizeof(unsigned)));
    std::vector<unsigned> pageable(n, 7);
    for (int round = 0; round < 3; ++round) {
        hipStream_t s;
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
        hipEvent_t behind_fault;
        CHECK(hipEventCreateWithFlags(&behind_fault, hipEventDisableTiming));
        // The stream's own work: a fill of pinned memory, then a copy from it on an engine.
        CHECK(hipMemsetD32Async(pinned, 0x1234 + round, n, s));
        CHECK(hipMemcpyAsync(device, pinned, n * sizeof(unsigned), hipMemcpyHostToDevice, s));
        // Then it waits for work of the null stream that faults.
        hipLaunchKernelGGL(trap_kernel, dim3(1), dim3(1), 0, 0);
        CHECK(hipEventRecord(behind_fault, 0));
        CHECK(hipStreamWaitEvent(s, behind_fault, 0));
        // A copy from pageable memory waits for the stream on the host: it reports the fault.
        EXPECT_ERR(hipMemcpyAsync(other, pageable.data(), n * sizeof(unsigned),
                                  hipMemcpyHostToDevice, s),
                   hipErrorLaunchFailure);
        CHECK(hipStreamSynchronize(s));
        EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);
        CHECK(hipDeviceSynchronize());
        // The stream's own copy ran before the fault.
        std::vector<unsigned> back(n);
        CHECK(hipMemcpy(back.data(), device, n * sizeof(unsigned), hipMemcpyDeviceToHost));
        EXPECT_EQ(back[0], 0x1234u + round);
        EXPECT_EQ(back[n - 1], 0x1234u + round);
        CHECK(hipEventDestroy(behind_fault));
        CHECK(hipStreamDestroy(s));
    }
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(device));
    CHECK(hipFree(other));
    return finish("poll_behind_fault");
}
