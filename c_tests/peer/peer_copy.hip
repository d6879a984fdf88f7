// hipshim-test: env=HSASIM_GPUS=2
//
// peer_copy: copies between two devices' memory (hsasim with HSASIM_GPUS=2), with peer access
// never enabled (HIP does not require it for copies):
// - hipMemcpyPeer, hipMemcpy DeviceToDevice and hipMemcpyDefault across devices, and
//   hipMemcpyPeerAsync on a stream of either device, move the bytes;
// - they are ordered as copies are: the synchronous ones after the legacy work of both
//   devices (a kernel still writing the source on its device's null stream, another on the
//   destination's), the stream-ordered one after the earlier work of its stream and before
//   later work, which hipStreamWaitEvent carries to a stream of the other device;
// - hipMemcpyPeer's device ordinals are checked (hipErrorInvalidDevice).
// The kernels that produce the sources take a while (a dependent loop per element), so a copy
// that did not wait for them would read what was there before.
#include "../check.h"

#include <vector>

static const int N = 64 * 1024;
static const size_t BYTES = N * sizeof(int);

// Writes base + i after `rounds` steps of a dependent computation (`zero` is 0, but the
// compiler cannot know, so the loop stays).
__global__ void slow_fill(int* p, int base, int rounds, unsigned zero) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    unsigned x = i;
    for (int k = 0; k < rounds; ++k) x = x * 1664525u + 1013904223u;
    p[i] = base + i + (int)(x & zero);
}

__global__ void add(int* p, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) p[i] += v;
}

static void expect_filled(const int* src, int base, const char* what) {
    std::vector<int> host(N, -1);
    CHECK(hipMemcpy(host.data(), src, BYTES, hipMemcpyDeviceToHost));
    int wrong = 0, first = -1;
    for (int i = 0; i < N; ++i) {
        if (host[i] != base + i) {
            if (first < 0) first = i;
            ++wrong;
        }
    }
    if (wrong) {
        std::fprintf(stderr, "FAIL %s: %d of %d values wrong (first [%d] = %d, want %d)\n", what,
                     wrong, N, first, host[first], base + first);
        ++failures;
    }
}

static const int ROUNDS = 400;

int main() {
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT_EQ(count, 2);
    if (count < 2) return finish("peer_copy");

    int* a = nullptr; // device 0
    int* b = nullptr; // device 1
    hipStream_t s0, s1;
    CHECK(hipSetDevice(0));
    CHECK(hipMalloc(&a, BYTES));
    CHECK(hipStreamCreate(&s0));
    CHECK(hipSetDevice(1));
    CHECK(hipMalloc(&b, BYTES));
    CHECK(hipStreamCreate(&s1));
    const dim3 grid(N / 256), block(256);

    // hipMemcpyPeer from device 1 to device 0, device 1's null stream still filling the source
    // and device 0's null stream still writing the destination, with device 0 current.
    CHECK(hipSetDevice(1));
    slow_fill<<<grid, block>>>(b, 100, ROUNDS, 0u);
    CHECK(hipSetDevice(0));
    slow_fill<<<grid, block>>>(a, 7, ROUNDS, 0u);
    CHECK(hipGetLastError());
    EXPECT_OK(hipMemcpyPeer(a, 0, b, 1, BYTES));
    expect_filled(a, 100, "hipMemcpyPeer 1 -> 0");

    // The other way, with device 1 current, through hipMemcpy's two spellings.
    CHECK(hipSetDevice(0));
    slow_fill<<<grid, block>>>(a, 200, ROUNDS, 0u);
    CHECK(hipSetDevice(1));
    EXPECT_OK(hipMemcpy(b, a, BYTES, hipMemcpyDeviceToDevice));
    expect_filled(b, 200, "hipMemcpy DeviceToDevice 0 -> 1");
    CHECK(hipSetDevice(1));
    slow_fill<<<grid, block>>>(b, 300, ROUNDS, 0u);
    CHECK(hipSetDevice(0));
    EXPECT_OK(hipMemcpy(a, b, BYTES, hipMemcpyDefault));
    expect_filled(a, 300, "hipMemcpy Default 1 -> 0");
    EXPECT_OK(hipMemcpyPeer(b, 1, a, 0, BYTES));
    expect_filled(b, 300, "hipMemcpyPeer 0 -> 1");

    // hipMemcpyPeerAsync on device 1's stream: after the kernel before it on that stream,
    // before the one after; an event carries its completion to device 0's stream.
    hipEvent_t copied;
    CHECK(hipSetDevice(1));
    CHECK(hipEventCreate(&copied));
    slow_fill<<<grid, block, 0, s1>>>(b, 400, ROUNDS, 0u);
    EXPECT_OK(hipMemcpyPeerAsync(a, 0, b, 1, BYTES, s1));
    add<<<grid, block, 0, s1>>>(b, 1); // must not reach the copy
    CHECK(hipEventRecord(copied, s1));
    CHECK(hipSetDevice(0));
    CHECK(hipStreamWaitEvent(s0, copied, 0));
    add<<<grid, block, 0, s0>>>(a, 10); // must see the copy
    CHECK(hipStreamSynchronize(s0));
    expect_filled(a, 410, "hipMemcpyPeerAsync on device 1's stream, then device 0's stream");
    CHECK(hipSetDevice(1));
    CHECK(hipStreamSynchronize(s1));
    expect_filled(b, 401, "device 1's stream after the copy");

    // On device 0's stream, copying from device 1, which device 1's stream fills: ordered
    // through an event the other way round.
    hipEvent_t filled;
    CHECK(hipEventCreate(&filled));
    slow_fill<<<grid, block, 0, s1>>>(b, 500, ROUNDS, 0u);
    CHECK(hipEventRecord(filled, s1));
    CHECK(hipSetDevice(0));
    CHECK(hipStreamWaitEvent(s0, filled, 0));
    EXPECT_OK(hipMemcpyPeerAsync(a, 0, b, 1, BYTES, s0));
    CHECK(hipStreamSynchronize(s0));
    expect_filled(a, 500, "hipMemcpyPeerAsync on device 0's stream after device 1's event");
    // A stream-ordered hipMemcpyAsync across devices too.
    EXPECT_OK(hipMemcpyAsync(b, a, BYTES, hipMemcpyDeviceToDevice, s0));
    add<<<grid, block, 0, s0>>>(a, 1);
    CHECK(hipStreamSynchronize(s0));
    expect_filled(b, 500, "hipMemcpyAsync DeviceToDevice 0 -> 1 on device 0's stream");

    // Part of an allocation, at an offset.
    CHECK(hipMemset(a, 0, BYTES));
    EXPECT_OK(hipMemcpyPeer(a + 16, 0, b + 32, 1, 64 * sizeof(int)));
    std::vector<int> host(96);
    CHECK(hipMemcpy(host.data(), a, host.size() * sizeof(int), hipMemcpyDeviceToHost));
    EXPECT_EQ(host[15], 0);
    EXPECT_EQ(host[16], 500 + 32);
    EXPECT_EQ(host[79], 500 + 95);
    EXPECT_EQ(host[80], 0);

    // Bad ordinals and ranges.
    EXPECT_ERR(hipMemcpyPeer(a, 2, b, 1, BYTES), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemcpyPeer(a, 0, b, -1, BYTES), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemcpyPeerAsync(a, 0, b, 3, BYTES, s0), hipErrorInvalidDevice);
    EXPECT_ERR(hipMemcpyPeer(a, 0, b, 1, BYTES + 4), hipErrorInvalidValue);
    EXPECT_OK(hipMemcpyPeer(a, 0, b, 1, 0));

    CHECK(hipEventDestroy(copied));
    CHECK(hipEventDestroy(filled));
    CHECK(hipStreamDestroy(s0));
    CHECK(hipSetDevice(1));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    return finish("peer_copy");
}
