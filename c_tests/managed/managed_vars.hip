// __managed__ variables: one address on the host and on every device, initialised from the
// program's initialiser before main, read and written by kernels and by host code between
// them, on each of two devices.
// hipshim-test: env=HSASIM_GPUS=2
#include "../check.h"

__managed__ int counter = 5;
__managed__ float table[64];
__managed__ long long big = 0x123456789abcLL;

__global__ void bump(int by) {
    atomicAdd(&counter, by);
}

__global__ void fill_table(float scale) {
    table[threadIdx.x] = scale * threadIdx.x + counter;
}

__global__ void read_big(long long* out) {
    *out = big;
}

int main() {
    // The initialiser is there before any HIP call.
    EXPECT_EQ(counter, 5);
    EXPECT_EQ(big, 0x123456789abcLL);
    hipPointerAttribute_t a;
    CHECK(hipPointerGetAttributes(&a, &counter));
    EXPECT_EQ(a.isManaged, 1);

    bump<<<1, 64>>>(1);
    CHECK(hipDeviceSynchronize());
    EXPECT_EQ(counter, 5 + 64);
    counter = 100;  // The host writes, the next kernel sees it.
    fill_table<<<1, 64>>>(2.0f);
    CHECK(hipDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += table[i] != 2.0f * i + 100;
    EXPECT_EQ(wrong, 0);

    // The second device's code object points at the same memory.
    CHECK(hipSetDevice(1));
    bump<<<2, 32>>>(2);
    CHECK(hipDeviceSynchronize());
    EXPECT_EQ(counter, 100 + 128);
    long long* out = nullptr;
    CHECK(hipMallocManaged(&out, sizeof *out));
    big = -7;
    read_big<<<1, 1>>>(out);
    CHECK(hipDeviceSynchronize());
    EXPECT_EQ(*out, -7);
    CHECK(hipFree(out));
    return finish("managed_vars");
}
