// hipFree of stream-ordered memory (hipMallocAsync, hipMallocFromPoolAsync), per ROCm ABI:
// up to ROCm 6 it waits for the device's work first, as for any memory; ROCm 7 does not wait
// ("HIP API 7.0 changes": the block returns to its pool ordered on the null stream).
#include "../check.h"
#include "abi.h"

__global__ void use(int* buf, int* done) {
    buf[0] = 7;
    *done = 1;
}

// Runs until *go becomes non-zero, then uses the buffer.
__global__ void use_when(volatile int* go, int* buf, int* done) {
    while (*go == 0) {
    }
    buf[0] = 7;
    *done = 1;
}

int main() {
    const int abi = expected_abi();
    std::printf("free_pool: expecting ROCm %d behaviour\n", abi);
    int *go = nullptr, *done = nullptr;
    CHECK(hipHostMalloc((void**)&go, sizeof(int), 0));
    CHECK(hipHostMalloc((void**)&done, sizeof(int), 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipMemPool_t pool;
    CHECK(hipDeviceGetDefaultMemPool(&pool, 0));

    for (int from_pool = 0; from_pool < 2; ++from_pool) {
        int* buf = nullptr;
        if (from_pool) {
            CHECK(hipMallocFromPoolAsync((void**)&buf, 256, pool, s));
        } else {
            CHECK(hipMallocAsync((void**)&buf, 256, s));
        }
        *go = 0;
        *done = 0;
        if (abi >= 7) {
            // hipFree returns while the kernel still waits for the host.
            hipLaunchKernelGGL(use_when, dim3(1), dim3(1), 0, s, go, buf, done);
            CHECK(hipGetLastError());
            EXPECT_OK(hipFree(buf));
            EXPECT_EQ(*done, 0);
            *go = 1;
            CHECK(hipDeviceSynchronize());
            EXPECT_EQ(*done, 1);
        } else {
            // hipFree returns after the kernel.
            hipLaunchKernelGGL(use, dim3(1), dim3(1), 0, s, buf, done);
            CHECK(hipGetLastError());
            EXPECT_OK(hipFree(buf));
            EXPECT_EQ(*done, 1);
        }
        EXPECT_ERR(hipFree(buf), hipErrorInvalidValue); // freed once
    }

    // The freed blocks serve later allocations.
    int* again = nullptr;
    CHECK(hipMallocAsync((void**)&again, 256, s));
    hipLaunchKernelGGL(use, dim3(1), dim3(1), 0, s, again, done);
    CHECK(hipFreeAsync(again, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(go));
    CHECK(hipHostFree(done));
    return finish("free_pool");
}
