// When hipMallocAsync reuses memory freed with hipFreeAsync: at once on the same stream (data
// correct with kernels in between), on another stream only after the free is known complete
// (stream or event synchronize) or the stream waits for it through an event, and not while the
// free is pending behind a busy stream (a kernel waiting for a host flag keeps it busy).
#include "mempool.h"

static const int N = 256;
static const size_t BYTES = N * sizeof(int);

// Leaves the pool with no free block, so the next reuse can only be of the block a check
// frees.
static void empty(hipMemPool_t pool) {
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemPoolTrimTo(pool, 0));
}

int main() {
    hipMemPool_t pool;
    CHECK(hipDeviceGetDefaultMemPool(&pool, 0));
    // Keep freed blocks across synchronisations, so a reuse shows as the same address.
    set_u64(pool, hipMemPoolAttrReleaseThreshold, UINT64_MAX);

    hipStream_t a, b;
    CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    int* flags;
    CHECK(hipHostMalloc((void**)&flags, 4 * sizeof(int), 0));
    for (int i = 0; i < 4; ++i) flags[i] = 0;
    int *out1, *out2;
    CHECK(hipMalloc((void**)&out1, BYTES));
    CHECK(hipMalloc((void**)&out2, BYTES));

    // Same stream: the block comes back at once, no synchronisation, and holds what the
    // kernels after the reuse wrote.
    int* p;
    CHECK(hipMallocAsync((void**)&p, BYTES, a));
    fill<<<1, N, 0, a>>>(p, 7, N);
    add_into<<<1, N, 0, a>>>(p, out1, 0, N);
    CHECK(hipFreeAsync(p, a));
    int* q;
    CHECK(hipMallocAsync((void**)&q, BYTES, a));
    EXPECT_TRUE(q == p);
    fill<<<1, N, 0, a>>>(q, 100, N);
    add_into<<<1, N, 0, a>>>(q, out2, 1, N);
    CHECK(hipFreeAsync(q, a));
    CHECK(hipStreamSynchronize(a));
    EXPECT_TRUE(holds(out1, 7, N));
    EXPECT_TRUE(holds(out2, 101, N));

    empty(pool);
    // Another stream, while the free is pending behind a busy stream: a different block.
    wait_flag<<<1, 1, 0, a>>>(&flags[0]);
    CHECK(hipMallocAsync((void**)&p, BYTES, a));
    CHECK(hipFreeAsync(p, a));
    CHECK(hipMallocAsync((void**)&q, BYTES, b));
    EXPECT_TRUE(q != p);
    // After the free is known complete (the stream synchronised): the freed block.
    flags[0] = 1;
    CHECK(hipStreamSynchronize(a));
    int* r;
    CHECK(hipMallocAsync((void**)&r, BYTES, b));
    EXPECT_TRUE(r == p);
    fill<<<1, N, 0, b>>>(r, 5, N);
    CHECK(hipFreeAsync(q, b));
    CHECK(hipFreeAsync(r, b));
    CHECK(hipStreamSynchronize(b));

    empty(pool);
    // Through an event: b waits for a record after the free, so b may take the block while a
    // is still busy (hipMemPoolReuseFollowEventDependencies, on by default)...
    hipEvent_t e;
    CHECK(hipEventCreate(&e));
    EXPECT_EQ(attr_int(pool, hipMemPoolReuseFollowEventDependencies), 1);
    wait_flag<<<1, 1, 0, a>>>(&flags[1]);
    CHECK(hipMallocAsync((void**)&p, BYTES, a));
    fill<<<1, N, 0, a>>>(p, 40, N);
    CHECK(hipFreeAsync(p, a));
    CHECK(hipEventRecord(e, a));
    CHECK(hipStreamWaitEvent(b, e, 0));
    CHECK(hipMallocAsync((void**)&q, BYTES, b));
    EXPECT_TRUE(q == p);
    fill<<<1, N, 0, b>>>(q, 50, N);
    add_into<<<1, N, 0, b>>>(q, out1, 0, N);
    CHECK(hipFreeAsync(q, b));
    flags[1] = 1;
    CHECK(hipStreamSynchronize(b));
    CHECK(hipStreamSynchronize(a));
    // b's fill ran after a's (it waited for the event): b's values are what is left.
    EXPECT_TRUE(holds(out1, 50, N));

    // ... but not with the policy off.
    empty(pool);
    set_int(pool, hipMemPoolReuseFollowEventDependencies, 0);
    EXPECT_EQ(attr_int(pool, hipMemPoolReuseFollowEventDependencies), 0);
    wait_flag<<<1, 1, 0, a>>>(&flags[2]);
    CHECK(hipMallocAsync((void**)&p, BYTES, a));
    CHECK(hipFreeAsync(p, a));
    CHECK(hipEventRecord(e, a));
    CHECK(hipStreamWaitEvent(b, e, 0));
    CHECK(hipMallocAsync((void**)&q, BYTES, b));
    EXPECT_TRUE(q != p);
    flags[2] = 1;
    // Event synchronisation makes the free known complete: then any stream reuses it.
    CHECK(hipEventSynchronize(e));
    CHECK(hipMallocAsync((void**)&r, BYTES, b));
    EXPECT_TRUE(r == p);
    CHECK(hipFreeAsync(q, b));
    CHECK(hipFreeAsync(r, b));
    CHECK(hipDeviceSynchronize());
    set_int(pool, hipMemPoolReuseFollowEventDependencies, 1);

    // Opportunistic reuse: a free that completed (seen by hipEventQuery, not a
    // synchronisation) is reused by another stream only while the policy allows it. Only
    // checked where the query sees completion (hsasim's threaded mode; its deterministic mode
    // runs work only for a waiting host thread).
    empty(pool);
    set_int(pool, hipMemPoolReuseAllowOpportunistic, 0);
    CHECK(hipMallocAsync((void**)&p, BYTES, a));
    CHECK(hipFreeAsync(p, a));
    CHECK(hipEventRecord(e, a));
    hipError_t done = hipErrorNotReady;
    for (int i = 0; i < 20000 && done == hipErrorNotReady; ++i) done = hipEventQuery(e);
    if (done == hipSuccess) {
        CHECK(hipMallocAsync((void**)&q, BYTES, b));
        EXPECT_TRUE(q != p);
        set_int(pool, hipMemPoolReuseAllowOpportunistic, 1);
        CHECK(hipMallocAsync((void**)&r, BYTES, b));
        EXPECT_TRUE(r == p);
        CHECK(hipFreeAsync(q, b));
        CHECK(hipFreeAsync(r, b));
    } else {
        set_int(pool, hipMemPoolReuseAllowOpportunistic, 1);
        std::printf("opportunistic reuse not checked: the free did not complete without a wait\n");
    }
    CHECK(hipDeviceSynchronize());

    CHECK(hipEventDestroy(e));
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));
    CHECK(hipFree(out1));
    CHECK(hipFree(out2));
    CHECK(hipHostFree(flags));
    return finish("mempool reuse");
}
