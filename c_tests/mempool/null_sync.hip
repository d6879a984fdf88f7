// hipStreamSynchronize(0) waits for the null stream and the blocking streams, never for a
// non-blocking one: a block that a busy non-blocking stream freed with hipFreeAsync is still
// pending after it, so the pool keeps it (release threshold 0 gives back only completed
// frees) and the kernel queued before the free reads valid memory when it runs.
#include "mempool.h"

static const int N = 256;
static const size_t BYTES = N * sizeof(int);

int main() {
    hipMemPool_t pool;
    CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
    // Every completed free goes back to the HSA runtime at the next synchronisation.
    set_u64(pool, hipMemPoolAttrReleaseThreshold, 0);

    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int* flag;
    CHECK(hipHostMalloc((void**)&flag, sizeof(int), 0));
    *flag = 0;
    int* out;
    CHECK(hipMalloc((void**)&out, BYTES));

    int* p;
    CHECK(hipMallocAsync((void**)&p, BYTES, s));
    fill<<<1, N, 0, s>>>(p, 40, N);
    wait_flag<<<1, 1, 0, s>>>(flag);
    // Reads the block after the stream is let go, which is after the null stream's sync.
    add_into<<<1, N, 0, s>>>(p, out, 2, N);
    CHECK(hipFreeAsync(p, s));
    EXPECT_TRUE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) >= BYTES);

    CHECK(hipStreamSynchronize(0));
    // The free is behind the waiting kernel: the block stays reserved.
    EXPECT_TRUE(attr_u64(pool, hipMemPoolAttrReservedMemCurrent) >= BYTES);

    *flag = 1;
    EXPECT_OK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds(out, 42, N));
    // Now the free is known complete, and the block goes back.
    EXPECT_EQ(attr_u64(pool, hipMemPoolAttrReservedMemCurrent), (uint64_t)0);

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(out));
    CHECK(hipHostFree(flag));
    return finish("mempool null_sync");
}
