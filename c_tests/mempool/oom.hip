// hipMemPoolReuseAllowInternalDependencies: when the device has no memory for a new block,
// hipMallocAsync takes a block whose free on another stream is still pending and makes the
// allocating stream wait for that free on the device; with the policy off it is out of memory.
// hipshim-test: env=HSASIM_MEM_GB=1
#include "mempool.h"

static const size_t BIG = 600u << 20;

int main() {
    hipMemPool_t pool;
    CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
    set_u64(pool, hipMemPoolAttrReleaseThreshold, UINT64_MAX);
    hipStream_t a, b;
    CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    int* flags;
    CHECK(hipHostMalloc((void**)&flags, 2 * sizeof(int), 0));
    flags[0] = flags[1] = 0;

    // Policy off: the pending block cannot be taken, and there is no room for another.
    set_int(pool, hipMemPoolReuseAllowInternalDependencies, 0);
    wait_flag<<<1, 1, 0, a>>>(&flags[0]);
    int *p, *q;
    CHECK(hipMallocAsync((void**)&p, BIG, a));
    fill<<<1, 64, 0, a>>>(p, 1, 64);
    CHECK(hipFreeAsync(p, a));
    EXPECT_ERR(hipMallocAsync((void**)&q, BIG, b), hipErrorOutOfMemory);
    flags[0] = 1;
    CHECK(hipStreamSynchronize(a));

    // Policy on: b waits for a's free and gets the block.
    set_int(pool, hipMemPoolReuseAllowInternalDependencies, 1);
    wait_flag<<<1, 1, 0, a>>>(&flags[1]);
    CHECK(hipMallocAsync((void**)&p, BIG, a));
    fill<<<1, 64, 0, a>>>(p, 1, 64);
    CHECK(hipFreeAsync(p, a));
    // A new block does not fit beside the pending one (1 GiB device).
    CHECK(hipMallocAsync((void**)&q, BIG, b));
    EXPECT_TRUE(q == p);
    // b's kernel runs after a's free, so after a's fill: b's values are what is left.
    fill<<<1, 64, 0, b>>>(q, 20, 64);
    flags[1] = 1;
    CHECK(hipStreamSynchronize(b));
    EXPECT_TRUE(holds(q, 20, 64));
    CHECK(hipFreeAsync(q, b));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemPoolTrimTo(pool, 0));
    EXPECT_EQ(attr_u64(pool, hipMemPoolAttrReservedMemCurrent), 0);

    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    CHECK(hipHostFree(flags));
    return finish("mempool oom");
}
