// memcpy_batch: hipMemcpyBatchAsync makes every copy of the batch on the stream (pinned,
// pageable and device memory, directions from the pointers), with or without attributes; a
// source read "during the API call" may be overwritten once the call returns; a bad copy
// refuses the whole batch, says which copy it was in failIdx, and nothing of the batch runs.
#include <cstdlib> // before <vector>: clang's HIP wrapper of <new> needs malloc declared

#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../check.h"

static const size_t N = 64 * 1024;

static void fill(std::vector<unsigned char>& v, unsigned char seed) {
    for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<unsigned char>(seed + i * 7);
}

static bool same(const void* a, const void* b, size_t n, const char* what) {
    if (std::memcmp(a, b, n) != 0) {
        std::fprintf(stderr, "FAIL %s: the bytes differ\n", what);
        ++failures;
        return false;
    }
    return true;
}

int main() {
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    unsigned char *pinned, *devA, *devB, *devC, *devD;
    CHECK(hipHostMalloc(&pinned, N, 0));
    CHECK(hipMalloc(&devA, N));
    CHECK(hipMalloc(&devB, N));
    CHECK(hipMalloc(&devC, N));
    CHECK(hipMalloc(&devD, N));
    std::vector<unsigned char> want_a(N), want_b(N), want_host(N), host(N, 0), pageable_src(N);
    fill(want_a, 1);
    fill(want_b, 2);
    fill(want_host, 3);
    std::memcpy(pinned, want_a.data(), N);
    CHECK(hipMemcpy(devC, want_b.data(), N, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(devD, want_host.data(), N, hipMemcpyHostToDevice));

    // Three independent copies, no attributes.
    {
        void* dsts[3] = {devA, devB, host.data()};
        void* srcs[3] = {pinned, devC, devD};
        size_t sizes[3] = {N, N, N};
        size_t fail = 7;
        EXPECT_OK(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, nullptr, 0, &fail, s));
        EXPECT_TRUE(fail == SIZE_MAX);
        CHECK(hipStreamSynchronize(s));
        std::vector<unsigned char> got(N);
        CHECK(hipMemcpy(got.data(), devA, N, hipMemcpyDeviceToHost));
        same(got.data(), want_a.data(), N, "pinned to device");
        CHECK(hipMemcpy(got.data(), devB, N, hipMemcpyDeviceToHost));
        same(got.data(), want_b.data(), N, "device to device");
        same(host.data(), want_host.data(), N, "device to pageable");
    }

    // Two attribute ranges: copies 0-1 in stream order, copy 2 read during the call, so its
    // pageable source may change as soon as the call returns.
    {
        fill(pageable_src, 9);
        std::vector<unsigned char> expected = pageable_src;
        CHECK(hipMemset(devA, 0, N));
        CHECK(hipMemset(devB, 0, N));
        void* dsts[3] = {devB, devD, devA};
        void* srcs[3] = {devC, pinned, pageable_src.data()};
        size_t sizes[3] = {N, N / 2, N};
        hipMemcpyAttributes attrs[2] = {};
        attrs[0].srcAccessOrder = hipMemcpySrcAccessOrderStream;
        attrs[1].srcAccessOrder = hipMemcpySrcAccessOrderDuringApiCall;
        attrs[1].flags = hipMemcpyFlagPreferOverlapWithCompute;
        size_t idxs[2] = {0, 2};
        size_t fail = 0;
        EXPECT_OK(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, &fail, s));
        EXPECT_TRUE(fail == SIZE_MAX);
        std::memset(pageable_src.data(), 0xee, N);
        CHECK(hipStreamSynchronize(s));
        std::vector<unsigned char> got(N);
        CHECK(hipMemcpy(got.data(), devA, N, hipMemcpyDeviceToHost));
        same(got.data(), expected.data(), N, "a source read during the call");
        CHECK(hipMemcpy(got.data(), devB, N, hipMemcpyDeviceToHost));
        same(got.data(), want_b.data(), N, "an attributed device copy");
        CHECK(hipMemcpy(got.data(), devD, N / 2, hipMemcpyDeviceToHost));
        same(got.data(), want_a.data(), N / 2, "an attributed pinned copy");
    }

    // Refusals: which copy, and nothing of the batch runs.
    {
        CHECK(hipMemset(devA, 0x5a, N));
        void* dsts[3] = {devA, devB, devC};
        void* srcs[3] = {pinned, devC, devD};
        size_t sizes[3] = {N, N + 1, N}; // copy 1 reads past devC's end
        size_t fail = 0;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_TRUE(fail == 1);
        srcs[2] = nullptr;
        sizes[1] = N;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_TRUE(fail == 2);
        CHECK(hipStreamSynchronize(s));
        unsigned char first = 0;
        CHECK(hipMemcpy(&first, devA, 1, hipMemcpyDeviceToHost));
        EXPECT_EQ(first, 0x5a);

        srcs[2] = devD;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 0, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_TRUE(fail == SIZE_MAX);
        EXPECT_ERR(hipMemcpyBatchAsync(nullptr, srcs, sizes, 3, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, nullptr, sizes, 3, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, nullptr, 3, nullptr, nullptr, 0, &fail, s),
                   hipErrorInvalidValue);
        hipMemcpyAttributes attr = {};
        attr.srcAccessOrder = hipMemcpySrcAccessOrderStream;
        size_t idx = 1; // must start at 0
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &idx, 1, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_TRUE(fail == SIZE_MAX);
        idx = 0;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, nullptr, &idx, 1, &fail, s),
                   hipErrorInvalidValue);
        attr.srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &idx, 1, &fail, s),
                   hipErrorInvalidValue);
        EXPECT_TRUE(fail == 0);
        attr.srcAccessOrder = hipMemcpySrcAccessOrderAny;
        attr.flags = hipMemcpyFlagExtOpSwap;
        EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &idx, 1, &fail, s),
                   hipErrorNotSupported);
        CHECK(hipStreamSynchronize(s));
        CHECK(hipMemcpy(&first, devA, 1, hipMemcpyDeviceToHost));
        EXPECT_EQ(first, 0x5a);
    }

    CHECK(hipStreamDestroy(s));
    void* d[1] = {devA};
    void* sr[1] = {devB};
    size_t sz[1] = {16};
    size_t fail = 0;
    EXPECT_ERR(hipMemcpyBatchAsync(d, sr, sz, 1, nullptr, nullptr, 0, &fail, s),
               hipErrorInvalidHandle);
    EXPECT_TRUE(fail == SIZE_MAX);
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(devA));
    CHECK(hipFree(devB));
    CHECK(hipFree(devC));
    CHECK(hipFree(devD));
    return finish("memcpy_batch");
}
