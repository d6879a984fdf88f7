// Managed memory advice: hipMemAdvise per byte range, read back by hipMemRangeGetAttribute(s)
// with CUDA's rules (a range answers a value only when every byte has it), prefetch locations,
// hipStreamAttachMemAsync, advice forgotten when the memory is freed, and bad input. Kernels
// still read and write the memory whatever it was told.
// hipshim-test: env=HSASIM_GPUS=2
#include "../check.h"

__global__ void add_one(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

static int attr(hipMemRangeAttribute a, const void* p, size_t n) {
    int v = 12345;
    CHECK(hipMemRangeGetAttribute(&v, sizeof v, a, p, n));
    return v;
}

int main() {
    int devices = 0;
    CHECK(hipGetDeviceCount(&devices));
    EXPECT_EQ(devices, 2);
    const size_t page = 4096, size = 4 * page;
    int* m = nullptr;
    CHECK(hipMallocManaged(&m, size));
    char* c = reinterpret_cast<char*>(m);

    // Nothing advised yet.
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, size), 0);
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), hipInvalidDeviceId);
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, size), hipInvalidDeviceId);
    EXPECT_EQ(attr(hipMemRangeAttributeCoherencyMode, m, size), hipMemRangeCoherencyModeFineGrain);

    // Read-mostly on the first two pages: the whole range answers only where all of it is.
    CHECK(hipMemAdvise(m, 2 * page, hipMemAdviseSetReadMostly, 0));
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, 2 * page), 1);
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, c + 100, 10), 1);
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, size), 0);
    CHECK(hipMemAdvise(c + page, page, hipMemAdviseUnsetReadMostly, 0));
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, page), 1);
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, 2 * page), 0);

    // Preferred location: a device, the host, or none where the range disagrees.
    CHECK(hipMemAdvise(m, size, hipMemAdviseSetPreferredLocation, 1));
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), 1);
    CHECK(hipMemAdvise(c + 3 * page, page, hipMemAdviseSetPreferredLocation, hipCpuDeviceId));
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, c + 3 * page, page), hipCpuDeviceId);
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), hipInvalidDeviceId);
    CHECK(hipMemAdvise(m, size, hipMemAdviseUnsetPreferredLocation, 0));
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), hipInvalidDeviceId);

    // Accessed-by: the devices with the advice over the whole range, then hipInvalidDeviceId.
    CHECK(hipMemAdvise(m, size, hipMemAdviseSetAccessedBy, 1));
    CHECK(hipMemAdvise(m, page, hipMemAdviseSetAccessedBy, 0));
    int ids[4] = {7, 7, 7, 7};
    CHECK(hipMemRangeGetAttribute(ids, sizeof ids, hipMemRangeAttributeAccessedBy, m, page));
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], 1);
    EXPECT_EQ(ids[2], hipInvalidDeviceId);
    EXPECT_EQ(ids[3], hipInvalidDeviceId);
    CHECK(hipMemRangeGetAttribute(ids, sizeof ids, hipMemRangeAttributeAccessedBy, m, size));
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(ids[1], hipInvalidDeviceId);
    CHECK(hipMemAdvise(m, size, hipMemAdviseUnsetAccessedBy, 1));
    CHECK(hipMemRangeGetAttribute(ids, sizeof ids, hipMemRangeAttributeAccessedBy, m, size));
    EXPECT_EQ(ids[0], hipInvalidDeviceId);

    // Coarse grain on part of the range: indeterminate over the whole.
    CHECK(hipMemAdvise(m, page, hipMemAdviseSetCoarseGrain, 0));
    EXPECT_EQ(attr(hipMemRangeAttributeCoherencyMode, m, page), hipMemRangeCoherencyModeCoarseGrain);
    EXPECT_EQ(attr(hipMemRangeAttributeCoherencyMode, m, size), hipMemRangeCoherencyModeIndeterminate);
    CHECK(hipMemAdvise(m, page, hipMemAdviseUnsetCoarseGrain, 0));

    // Prefetch to a device, then part of it to the host.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    for (size_t i = 0; i < size / sizeof(int); ++i) m[i] = int(i);
    CHECK(hipMemPrefetchAsync(m, size, 1, s));
    add_one<<<int(size / sizeof(int) / 64), 64, 0, s>>>(m, int(size / sizeof(int)));
    CHECK(hipMemPrefetchAsync(m, page, hipCpuDeviceId, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, c + page, 3 * page), 1);
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, page), hipCpuDeviceId);
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, size), hipInvalidDeviceId);
    int wrong = 0;
    for (size_t i = 0; i < size / sizeof(int); ++i) wrong += m[i] != int(i) + 1;
    EXPECT_EQ(wrong, 0);

    // Several attributes in one call.
    int rm = 9, pl = 9;
    void* data[2] = {&rm, &pl};
    size_t sizes[2] = {sizeof rm, sizeof pl};
    hipMemRangeAttribute which[2] = {hipMemRangeAttributeReadMostly, hipMemRangeAttributeLastPrefetchLocation};
    CHECK(hipMemRangeGetAttributes(data, sizes, which, 2, c + page, page));
    EXPECT_EQ(rm, 0);
    EXPECT_EQ(pl, 1);

    // Attaching to a stream: the whole allocation (its length, or 0), never a part of it.
    EXPECT_OK(hipStreamAttachMemAsync(s, m, 0, hipMemAttachSingle));
    EXPECT_OK(hipStreamAttachMemAsync(s, m, size, hipMemAttachGlobal));
    EXPECT_ERR(hipStreamAttachMemAsync(s, m, page, hipMemAttachGlobal), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamAttachMemAsync(s, m, size - 1, hipMemAttachGlobal), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamAttachMemAsync(s, c + page, 0, hipMemAttachHost), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamAttachMemAsync(s, m, 0, 3), hipErrorInvalidValue);

    // Bad input.
    EXPECT_ERR(hipMemAdvise(nullptr, size, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAdvise(m, 0, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAdvise(m, 3 * size, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAdvise(m, size, hipMemAdviseSetReadMostly, 99), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemAdvise(m, size, hipMemAdviseSetPreferredLocation, -12), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemAdvise(m, size, (hipMemoryAdvise)42, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchAsync(m, size, 5, s), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemPrefetchAsync(m, 3 * size, 0, s), hipErrorInvalidValue);
    int v = 0;
    EXPECT_ERR(hipMemRangeGetAttribute(&v, 3, hipMemRangeAttributeReadMostly, m, size), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRangeGetAttribute(&v, 8, hipMemRangeAttributeReadMostly, m, size), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRangeGetAttribute(nullptr, 4, hipMemRangeAttributeReadMostly, m, size), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRangeGetAttribute(&v, 4, (hipMemRangeAttribute)7, m, size), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, 0), hipErrorInvalidValue);
    // Device memory is not managed memory.
    int* d = nullptr;
    CHECK(hipMalloc(&d, page));
    EXPECT_ERR(hipMemAdvise(d, page, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, d, page), hipErrorInvalidValue);
    // Its coherency, though, is known (AMD answers it for any memory): device memory is
    // coarse-grained, hipHostMalloc memory fine-grained unless asked otherwise.
    v = -1;
    EXPECT_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeCoherencyMode, d, page));
    EXPECT_EQ(v, hipMemRangeCoherencyModeCoarseGrain);
    int* pinned = nullptr;
    CHECK(hipHostMalloc(&pinned, page, hipHostMallocCoherent));
    EXPECT_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeCoherencyMode, pinned, 8));
    EXPECT_EQ(v, hipMemRangeCoherencyModeFineGrain);
    CHECK(hipHostFree(pinned));
    CHECK(hipHostMalloc(&pinned, page, hipHostMallocNonCoherent));
    EXPECT_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeCoherencyMode, pinned, 8));
    EXPECT_EQ(v, hipMemRangeCoherencyModeCoarseGrain);
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(d));

    // Freed memory forgets its advice: a new allocation starts clean, even at the same address.
    CHECK(hipMemAdvise(m, size, hipMemAdviseSetReadMostly, 0));
    CHECK(hipFree(m));
    int* again = nullptr;
    CHECK(hipMallocManaged(&again, size));
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, again, size), 0);
    CHECK(hipFree(again));
    CHECK(hipStreamDestroy(s));
    return finish("advise");
}
