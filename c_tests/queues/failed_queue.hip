// hipshim-test: targets=gfx942 env=HIPSHIM_QUEUE_POLICY=single env=HSASIM_MAX_QUEUES=2 expect-stderr=0xdead0000
//
// failed_queue: a queue that failed is never given to another stream. Streams A and B share
// a queue; a kernel on A faults and an event on A reports it (so no stream has retired the
// queue yet). A stream D created afterwards must not get the failed queue:
// - if another queue can be made (HSASIM_MAX_QUEUES >= 2), D's kernel runs;
// - if not (HSASIM_MAX_QUEUES=1: the failed queue still holds the only slot), D's launch
//   returns hipErrorOutOfMemory at once rather than being accepted and never run.
// Once every user of the failed queue has seen the error and let it go, a new stream works.
// The runner also runs this with HSASIM_MAX_QUEUES=1 and under other policies.
#include <cstdlib>
#include <hip/hip_runtime.h>

#include <cstdio>

#include "../check.h"

__global__ void bump(unsigned* slots, int slot) { atomicAdd(&slots[slot], 1u); }

__global__ void store_to_nowhere(int value) {
    int* nowhere = reinterpret_cast<int*>(0xdead0000ull);
    nowhere[threadIdx.x] = value;
}

int main() {
    const char* limit = std::getenv("HSASIM_MAX_QUEUES");
    const bool room_for_another = !limit || std::atoi(limit) >= 2;
    unsigned* slots = nullptr;
    EXPECT_OK(hipMalloc(&slots, 4 * sizeof(unsigned)));
    hipStream_t a = nullptr, b = nullptr, d = nullptr, f = nullptr;
    EXPECT_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    EXPECT_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    EXPECT_OK(hipMemsetAsync(slots, 0, 4 * sizeof(unsigned), a));
    bump<<<1, 1, 0, a>>>(slots, 0);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipStreamSynchronize(a));
    bump<<<1, 1, 0, b>>>(slots, 1);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipStreamSynchronize(b));

    hipEvent_t fault = nullptr;
    EXPECT_OK(hipEventCreate(&fault));
    store_to_nowhere<<<1, 1, 0, a>>>(7);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipEventRecord(fault, a));
    EXPECT_ERR(hipEventSynchronize(fault), hipErrorIllegalAddress);

    EXPECT_OK(hipStreamCreateWithFlags(&d, hipStreamNonBlocking));
    bump<<<1, 1, 0, d>>>(slots, 2);
    if (room_for_another) {
        EXPECT_OK(hipGetLastError());
        EXPECT_OK(hipStreamSynchronize(d));
    } else {
        EXPECT_ERR(hipGetLastError(), hipErrorOutOfMemory);
        EXPECT_OK(hipStreamSynchronize(d));
    }

    // Every user of the failed queue lets it go: A reports the fault, B and the event go.
    EXPECT_ERR(hipStreamSynchronize(a), hipErrorIllegalAddress);
    (void)hipStreamSynchronize(b);
    EXPECT_OK(hipEventDestroy(fault));
    EXPECT_OK(hipStreamDestroy(a));
    EXPECT_OK(hipStreamDestroy(b));
    (void)hipGetLastError();

    EXPECT_OK(hipStreamCreateWithFlags(&f, hipStreamNonBlocking));
    bump<<<1, 1, 0, f>>>(slots, 3);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipStreamSynchronize(f));

    unsigned ran[4] = {};
    EXPECT_OK(hipMemcpyAsync(ran, slots, sizeof ran, hipMemcpyDeviceToHost, f));
    EXPECT_OK(hipStreamSynchronize(f));
    EXPECT_EQ(ran[0], 1);
    EXPECT_EQ(ran[1], 1);
    EXPECT_EQ(ran[2], room_for_another ? 1 : 0);
    EXPECT_EQ(ran[3], 1);
    std::printf("D's kernel %s\n", ran[2] ? "ran" : "was refused");
    EXPECT_OK(hipStreamDestroy(d));
    EXPECT_OK(hipStreamDestroy(f));
    // The fault is still owed once to a device-wide call (README, Faults and errors).
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
    EXPECT_OK(hipFree(slots));
    return finish("failed_queue");
}
