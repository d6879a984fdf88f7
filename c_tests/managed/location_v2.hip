// location_v2: hipMemAdvise_v2 and hipMemPrefetchAsync_v2 take the location as a
// hipMemLocation: a device by ordinal, or the host (hipMemLocationTypeHost, HostNuma,
// HostNumaCurrent: hsasim's host is one NUMA node); they do what hipMemAdvise and
// hipMemPrefetchAsync do with that device, as hipMemRangeGetAttribute reads back.
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

static hipMemLocation at(hipMemLocationType type, int id) {
    hipMemLocation l;
    l.type = type;
    l.id = id;
    return l;
}

int main() {
    const int n = 4096;
    const size_t size = n * sizeof(int);
    int* m = nullptr;
    CHECK(hipMallocManaged(&m, size));
    for (int i = 0; i < n; ++i) m[i] = i;

    // Advice.
    EXPECT_OK(hipMemAdvise_v2(m, size, hipMemAdviseSetPreferredLocation,
                              at(hipMemLocationTypeDevice, 1)));
    EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), 1);
    const hipMemLocationType hosts[] = {hipMemLocationTypeHost, hipMemLocationTypeHostNuma,
                                        hipMemLocationTypeHostNumaCurrent};
    for (hipMemLocationType host : hosts) {
        EXPECT_OK(hipMemAdvise_v2(m, size, hipMemAdviseUnsetPreferredLocation,
                                  at(hipMemLocationTypeDevice, 0)));
        EXPECT_OK(hipMemAdvise_v2(m, size, hipMemAdviseSetPreferredLocation, at(host, 0)));
        EXPECT_EQ(attr(hipMemRangeAttributePreferredLocation, m, size), hipCpuDeviceId);
    }
    EXPECT_OK(hipMemAdvise_v2(m, size, hipMemAdviseSetReadMostly, at(hipMemLocationTypeDevice, 0)));
    EXPECT_EQ(attr(hipMemRangeAttributeReadMostly, m, size), 1);

    // Prefetch, in stream order.
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    EXPECT_OK(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeDevice, 1), 0, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, size), 1);
    EXPECT_OK(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeHostNumaCurrent, 0), 0, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, size), hipCpuDeviceId);
    EXPECT_OK(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeDevice, 0), 0, s));
    add_one<<<n / 256, 256, 0, s>>>(m, n);
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr(hipMemRangeAttributeLastPrefetchLocation, m, size), 0);
    bool right = true;
    for (int i = 0; i < n; ++i) right = right && m[i] == i + 1;
    EXPECT_TRUE(right);

    // Bad input.
    EXPECT_ERR(hipMemAdvise_v2(m, size, hipMemAdviseSetReadMostly, at(hipMemLocationTypeInvalid, 0)),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemAdvise_v2(m, size, hipMemAdviseSetReadMostly,
                               at(static_cast<hipMemLocationType>(9), 0)),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeDevice, 0), 1, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeInvalid, 0), 0, s),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPrefetchAsync_v2(m, size, at(hipMemLocationTypeDevice, 7), 0, s),
               hipErrorInvalidDevice);
    EXPECT_ERR(hipMemPrefetchAsync_v2(nullptr, size, at(hipMemLocationTypeDevice, 0), 0, s),
               hipErrorInvalidValue);

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(m));
    return finish("location_v2");
}
