// hipshim-test: env=HSASIM_TIME=virtual
//
// Virtual time, a fault behind finished work: a long kernel and an event recorded after it
// are done before the kernel behind them faults, on the same stream. The event completed,
// so waiting for it succeeds, whenever the host learns of the fault; only the stream reports
// the fault. On the virtual time line the event's completion may still lie in the host's
// future when the simulator has already found the fault: had the fault reached the host
// then, the event would have looked like work the fault stopped.
#include "../check.h"
#include <unistd.h>

__global__ void busy(float* x, int rounds) {
    float v = x[threadIdx.x];
    for (int i = 0; i < rounds; ++i) v = v * 1.0001f + 0.5f;
    x[threadIdx.x] = v;
}

__global__ void store_to_nowhere() {
    *reinterpret_cast<volatile int*>(0xdead0000ull) = 1;
}

int main() {
    float* x = nullptr;
    CHECK(hipMalloc((void**)&x, 64 * sizeof(float)));
    CHECK(hipMemset(x, 0, 64 * sizeof(float)));
    for (int round = 0; round < 3; ++round) {
        hipStream_t s;
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
        hipEvent_t done;
        CHECK(hipEventCreate(&done));
        hipLaunchKernelGGL(busy, dim3(1), dim3(64), 0, s, x, 20000);
        CHECK(hipEventRecord(done, s));
        hipLaunchKernelGGL(store_to_nowhere, dim3(1), dim3(1), 0, s);
        // Let the simulator run all of it (host time) before asking.
        usleep(100000);
        // A query says "not yet" (the host's clock has not reached the event) or "done",
        // never the fault.
        hipError_t query = hipEventQuery(done);
        EXPECT_TRUE(query == hipSuccess || query == hipErrorNotReady);
        CHECK(hipEventSynchronize(done));
        EXPECT_ERR(hipStreamSynchronize(s), hipErrorIllegalAddress);
        // The device-wide report, once; then the device goes on.
        EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
        CHECK(hipDeviceSynchronize());
        CHECK(hipEventDestroy(done));
        CHECK(hipStreamDestroy(s));
    }
    CHECK(hipFree(x));
    return finish("fault_order");
}
