// hipshim-test: env=HIPSHIM_LOG=hipshim::api=debug expect-stderr=hipMemcpy_spt expect-stderr=hipMemset_spt expect-stderr=hipMemcpy2D_spt expect-stderr=hipMemset2D_spt expect-stderr=hipMemcpyToSymbol_spt expect-stderr=hipMemcpyFromSymbol_spt expect-stderr=hipMemcpyToSymbolAsync_spt expect-stderr=hipStreamSynchronize_spt
//
// per_thread_default: a program built in per-thread-default-stream mode (as with clang's
// -fgpu-default-stream=per-thread) reaches the `_spt` entry points through the headers, and
// they work: copies, fills, 2D, symbol copies and synchronisation, with correct results.
// The runner checks (from the API log) that the `_spt` forms were the ones called.
#define HIP_API_PER_THREAD_DEFAULT_STREAM 1
#include "../check.h"

__device__ int table[64];

__global__ void double_table() { table[threadIdx.x] *= 2; }

int main() {
    int host[64], back[64];
    for (int i = 0; i < 64; ++i) host[i] = i;
    int* dev = nullptr;
    EXPECT_TRUE(hipMalloc(&dev, sizeof host) == hipSuccess);
    EXPECT_TRUE(hipMemset(dev, 0x7f, sizeof host) == hipSuccess);
    EXPECT_TRUE(hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost) == hipSuccess &&
                back[5] == 0x7f7f7f7f);
    EXPECT_TRUE(hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice) == hipSuccess);

    // 2D: 8 rows of 8 ints, pitch 32 ints on the device.
    int* pitched = nullptr;
    EXPECT_TRUE(hipMalloc(&pitched, 8 * 32 * sizeof(int)) == hipSuccess);
    EXPECT_TRUE(hipMemset2D(pitched, 32 * sizeof(int), 0, 8 * sizeof(int), 8) == hipSuccess);
    EXPECT_TRUE(hipMemcpy2D(pitched, 32 * sizeof(int), host, 8 * sizeof(int), 8 * sizeof(int), 8,
                            hipMemcpyHostToDevice) == hipSuccess);
    int row3[8];
    EXPECT_TRUE(hipMemcpy(row3, pitched + 3 * 32, sizeof row3, hipMemcpyDeviceToHost) ==
                    hipSuccess &&
                row3[0] == 24 && row3[7] == 31);

    EXPECT_TRUE(hipMemcpyToSymbol(table, host, sizeof host) == hipSuccess);
    double_table<<<1, 64>>>();
    EXPECT_TRUE(hipStreamSynchronize(0) == hipSuccess);
    EXPECT_TRUE(hipMemcpyFromSymbol(back, table, sizeof back) == hipSuccess && back[63] == 126);
    EXPECT_TRUE(hipMemcpyToSymbolAsync(table, host, sizeof host, 0, hipMemcpyHostToDevice, 0) ==
                    hipSuccess &&
                hipStreamSynchronize(0) == hipSuccess);
    EXPECT_TRUE(hipMemcpyFromSymbol(back, table, sizeof back) == hipSuccess && back[63] == 63);
    hipFree(pitched);
    hipFree(dev);
    return finish("per_thread_default");
}
