// hipshim-test: env=HSASIM_DISPATCH_TIMEOUT=1 env=HSASIM_MAX_WAVE_INSTRUCTIONS=1000000000000000
// hipshim-test: expect-stderr=HSASIM_DISPATCH_TIMEOUT
//
// watchdog: a kernel that never ends is stopped by hsasim's dispatch timeout (1 s here),
// all its waves; the synchronising call reports hipErrorLaunchFailure, stderr names the
// limit, and the device runs later work.
#include "../check.h"

__global__ void endless(volatile int* flag) {
    while (*flag == 0) {
    }
}

__global__ void add_one(int* data) { data[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

int main() {
    int* flag = nullptr;
    EXPECT_OK(hipMalloc(&flag, 256 * sizeof(int)));
    EXPECT_OK(hipMemset(flag, 0, 256 * sizeof(int)));
    endless<<<4, 64>>>(flag);
    EXPECT_OK(hipGetLastError());
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorLaunchFailure);

    add_one<<<4, 64>>>(flag);
    EXPECT_OK(hipDeviceSynchronize());
    int host[256];
    EXPECT_OK(hipMemcpy(host, flag, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host[0], 1);
    EXPECT_EQ(host[255], 1);
    EXPECT_OK(hipFree(flag));
    return finish("watchdog");
}
