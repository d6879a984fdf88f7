// prefetch_batch: hipMemPrefetchBatchAsync records each managed range's prefetch location as
// prefetchLocIdxs assigns it (read back as hipMemRangeAttributeLastPrefetchLocation); AMD's
// refusals (flags, the null stream, the location indices, a device that does not exist, memory
// that is not managed) are hipErrorInvalidValue and change nothing.
#include <hip/hip_runtime.h>

#include "../check.h"

static int last_prefetch(void* p, size_t n) {
    int at = -7;
    CHECK(hipMemRangeGetAttribute(&at, sizeof(at), hipMemRangeAttributeLastPrefetchLocation, p,
                                  n));
    return at;
}

int main() {
    const size_t N = 1 << 16;
    char *a, *b, *c;
    CHECK(hipMallocManaged(&a, N));
    CHECK(hipMallocManaged(&b, N));
    CHECK(hipMallocManaged(&c, N));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    hipMemLocation device0 = {hipMemLocationTypeDevice, 0};
    hipMemLocation host = {hipMemLocationTypeHost, 0};

    // One location for all three ranges.
    void* ptrs[3] = {a, b, c};
    size_t sizes[3] = {N, N / 2, N};
    hipMemLocation one[1] = {device0};
    size_t first[2] = {0, 0};
    EXPECT_OK(hipMemPrefetchBatchAsync(ptrs, sizes, 3, one, first, 1, 0, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(last_prefetch(a, N), 0);
    EXPECT_EQ(last_prefetch(b, N / 2), 0);
    EXPECT_EQ(last_prefetch(c, N), 0);

    // Range 0 to the host, ranges 1-2 to device 0.
    hipMemLocation two[2] = {host, device0};
    first[1] = 1;
    EXPECT_OK(hipMemPrefetchBatchAsync(ptrs, sizes, 3, two, first, 2, 0, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(last_prefetch(a, N), hipCpuDeviceId);
    EXPECT_EQ(last_prefetch(b, N / 2), 0);

    // Refusals leave every range as it was (a: host).
    hipMemLocation bad_device[1] = {{hipMemLocationTypeDevice, 99}};
    hipMemLocation to_device[1] = {device0};
    size_t zero[1] = {0};
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, to_device, zero, 1, 1, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, to_device, zero, 1, 0, nullptr),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, bad_device, zero, 1, 0, s),
               hipErrorInvalidValue);
    size_t not_zero[1] = {1};
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, to_device, not_zero, 1, 0, s),
               hipErrorInvalidValue);
    size_t falling[2] = {0, 0};
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, two, falling, 2, 0, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 1, two, first, 2, 0, s),
               hipErrorInvalidValue); // more locations than ranges
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 0, to_device, zero, 1, 0, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchBatchAsync(nullptr, sizes, 3, to_device, zero, 1, 0, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, sizes, 3, nullptr, zero, 1, 0, s),
               hipErrorInvalidValue);
    // A range that is not managed memory, after a good one.
    char* plain;
    CHECK(hipMalloc(&plain, N));
    void* mixed[2] = {a, plain};
    size_t mixed_sizes[2] = {N, N};
    EXPECT_ERR(hipMemPrefetchBatchAsync(mixed, mixed_sizes, 2, to_device, zero, 1, 0, s),
               hipErrorInvalidValue);
    // Past the end of its allocation.
    size_t too_long[3] = {N, N, N + 1};
    EXPECT_ERR(hipMemPrefetchBatchAsync(ptrs, too_long, 3, to_device, zero, 1, 0, s),
               hipErrorInvalidValue);
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(last_prefetch(a, N), hipCpuDeviceId);

    CHECK(hipFree(plain));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    return finish("prefetch_batch");
}
