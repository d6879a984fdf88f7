// hipshim-test: env=HSASIM_TIME=virtual env=HSASIM_DISPATCH_TIMEOUT=10
//
// Virtual time, a kernel that waits for the host: it spins until the host writes a flag, and
// the host only queries its stream before writing it. A query answers for the host's virtual
// time, so it must know whether the kernel ends before then; waiting for the kernel to end
// would wait for ever (here: until the 10 s dispatch timeout stops it). hsasim sees from the
// instructions the kernel's waves have run so far that it ends later than the host's time,
// and answers at once.
#include "../check.h"

__global__ void wait_for(volatile int* flag, int* seen) {
    while (*flag == 0) {
    }
    *seen = *flag;
}

int main() {
    int *flag = nullptr, *seen = nullptr;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&seen, sizeof(int), 0));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    for (int round = 1; round <= 3; ++round) {
        *flag = 0;
        *seen = 0;
        hipLaunchKernelGGL(wait_for, dim3(1), dim3(1), 0, s, flag, seen);
        CHECK(hipGetLastError());
        for (int i = 0; i < 3; ++i) EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
        *flag = round;
        CHECK(hipStreamSynchronize(s));
        EXPECT_EQ(*seen, round);
    }
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(flag));
    CHECK(hipHostFree(seen));
    return finish("host_handshake");
}
