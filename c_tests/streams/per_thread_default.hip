// hipshim-test: env=HIPSHIM_LOG=hipshim::api=debug expect-stderr=hipMemcpy_spt expect-stderr=hipMemset_spt expect-stderr=hipMemcpy2D_spt expect-stderr=hipMemset2D_spt expect-stderr=hipMemcpyToSymbol_spt expect-stderr=hipMemcpyFromSymbol_spt expect-stderr=hipMemcpyToSymbolAsync_spt expect-stderr=hipStreamSynchronize_spt
//
// per_thread_default: a program built in per-thread-default-stream mode (as with clang's
// -fgpu-default-stream=per-thread) reaches the `_spt` entry points through the headers, and
// they work: copies, fills, 2D, symbol copies and synchronisation, with correct results.
// The runner checks (from the API log) that the `_spt` forms were the ones called.
#define HIP_API_PER_THREAD_DEFAULT_STREAM 1
#include <hip/hip_runtime.h>

#include <cstdio>

__device__ int table[64];

__global__ void double_table() { table[threadIdx.x] *= 2; }

static int failures = 0;
static void check(const char* what, bool ok) {
    if (!ok) {
        std::fprintf(stderr, "FAIL %s\n", what);
        ++failures;
    } else {
        std::printf("ok   %s\n", what);
    }
}

int main() {
    int host[64], back[64];
    for (int i = 0; i < 64; ++i) host[i] = i;
    int* dev = nullptr;
    check("hipMalloc", hipMalloc(&dev, sizeof host) == hipSuccess);
    check("hipMemset", hipMemset(dev, 0x7f, sizeof host) == hipSuccess);
    check("hipMemcpy D2H after memset",
          hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost) == hipSuccess &&
              back[5] == 0x7f7f7f7f);
    check("hipMemcpy H2D", hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice) == hipSuccess);

    // 2D: 8 rows of 8 ints, pitch 32 ints on the device.
    int* pitched = nullptr;
    check("hipMalloc pitched", hipMalloc(&pitched, 8 * 32 * sizeof(int)) == hipSuccess);
    check("hipMemset2D", hipMemset2D(pitched, 32 * sizeof(int), 0, 8 * sizeof(int), 8) == hipSuccess);
    check("hipMemcpy2D", hipMemcpy2D(pitched, 32 * sizeof(int), host, 8 * sizeof(int),
                                     8 * sizeof(int), 8, hipMemcpyHostToDevice) == hipSuccess);
    int row3[8];
    check("hipMemcpy row back", hipMemcpy(row3, pitched + 3 * 32, sizeof row3,
                                          hipMemcpyDeviceToHost) == hipSuccess &&
                                    row3[0] == 24 && row3[7] == 31);

    check("hipMemcpyToSymbol", hipMemcpyToSymbol(table, host, sizeof host) == hipSuccess);
    double_table<<<1, 64>>>();
    check("hipStreamSynchronize(0)", hipStreamSynchronize(0) == hipSuccess);
    check("hipMemcpyFromSymbol", hipMemcpyFromSymbol(back, table, sizeof back) == hipSuccess &&
                                     back[63] == 126);
    check("hipMemcpyToSymbolAsync",
          hipMemcpyToSymbolAsync(table, host, sizeof host, 0, hipMemcpyHostToDevice, 0) == hipSuccess &&
              hipStreamSynchronize(0) == hipSuccess);
    check("hipMemcpyFromSymbol after async", hipMemcpyFromSymbol(back, table, sizeof back) == hipSuccess &&
                                                 back[63] == 63);
    hipFree(pitched);
    hipFree(dev);
    if (failures) return 1;
    std::printf("per_thread_default: PASSED\n");
    return 0;
}
