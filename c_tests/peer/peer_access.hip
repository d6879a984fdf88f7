// hipshim-test: env=HSASIM_GPUS=2
//
// peer_access: two devices (hsasim with HSASIM_GPUS=2). What each device reports and owns,
// whether and how one device may reach the other's memory, and the link between them:
// - hipGetDeviceCount, hipSetDevice(1), hipMalloc on device 1, kernels and streams there,
//   hipPointerGetAttributes naming the owning device;
// - hipDeviceCanAccessPeer (same device: 0; invalid device: hipErrorInvalidDevice);
// - hipDeviceEnablePeerAccess / Disable and their errors (AMD's: flags other than 0 are
//   invalid values, the device itself or a device that does not exist is an invalid device,
//   twice is hipErrorPeerAccessAlreadyEnabled, disabling what is not enabled is
//   hipErrorPeerAccessNotEnabled);
// - a kernel on device 0 reading device 1's memory faults before peer access is enabled
//   (hsasim checks which GPU may reach which memory) and works after, for allocations made
//   before and after enabling; after disabling, allocations made later are out of reach again;
// - hipDeviceGetP2PAttribute and hipExtGetLinkTypeAndHopCount (hsasim models an xGMI link:
//   type 4, one hop; or PCIe with HSASIM_GPU_LINK=pcie and PEER_LINK=pcie: type 2, two hops).
// PEER_NO_FAULTS=1 skips the faulting kernels (AMD's runtime stops the process on a fault, so
// the comparison run under it sets this).
#include "../check.h"

#include <cstdlib>
#include <vector>

__global__ void fill(int* p, int base, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + i;
}

__global__ void copy_ints(int* dst, const int* src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

static const int N = 256;
static const size_t BYTES = N * sizeof(int);

// Checks that dst (device memory, any device) holds base + i.
static void expect_filled(const int* dst, int base, const char* what) {
    std::vector<int> host(N, -1);
    CHECK(hipMemcpy(host.data(), dst, BYTES, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != base + i;
    if (wrong) {
        std::fprintf(stderr, "FAIL %s: %d of %d values wrong (first: %d, want %d)\n", what, wrong,
                     N, host[0], base);
        ++failures;
    }
}

// A kernel on the current device copying `src` into `dst`; returns what the device reports.
static hipError_t read_with_kernel(int* dst, const int* src) {
    copy_ints<<<N / 64, 64>>>(dst, src, N);
    hipError_t launched = hipGetLastError();
    if (launched != hipSuccess) return launched;
    return hipDeviceSynchronize();
}

int main() {
    const bool faults = std::getenv("PEER_NO_FAULTS") == nullptr;
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT_EQ(count, 2);
    if (count < 2) return finish("peer_access");

    // Each device: memory, a kernel on a stream of its own, the owner in pointer attributes.
    int* mem[2];
    hipStream_t stream[2];
    for (int d = 0; d < 2; ++d) {
        CHECK(hipSetDevice(d));
        int current = -1;
        CHECK(hipGetDevice(&current));
        EXPECT_EQ(current, d);
        CHECK(hipMalloc(&mem[d], BYTES));
        CHECK(hipStreamCreate(&stream[d]));
        fill<<<N / 64, 64, 0, stream[d]>>>(mem[d], 1000 * (d + 1), N);
        CHECK(hipGetLastError());
        CHECK(hipStreamSynchronize(stream[d]));
        int stream_device = -1;
        CHECK(hipStreamGetDevice(stream[d], &stream_device));
        EXPECT_EQ(stream_device, d);
        hipPointerAttribute_t attr;
        CHECK(hipPointerGetAttributes(&attr, mem[d] + 10));
        EXPECT_EQ(attr.type, hipMemoryTypeDevice);
        EXPECT_EQ(attr.device, d);
        EXPECT_TRUE(attr.devicePointer == mem[d] + 10);
    }
    CHECK(hipSetDevice(0));
    expect_filled(mem[0], 1000, "device 0's own kernel");
    expect_filled(mem[1], 2000, "device 1's kernel (read back with device 0 current)");
    int* host_mem = nullptr;
    CHECK(hipHostMalloc(&host_mem, BYTES, 0));
    hipPointerAttribute_t attr;
    CHECK(hipSetDevice(1));
    CHECK(hipPointerGetAttributes(&attr, mem[0]));
    EXPECT_EQ(attr.device, 0);
    CHECK(hipSetDevice(0));

    // Who may reach whom.
    int can = -1;
    EXPECT_OK(hipDeviceCanAccessPeer(&can, 0, 1));
    EXPECT_EQ(can, 1);
    can = -1;
    EXPECT_OK(hipDeviceCanAccessPeer(&can, 1, 0));
    EXPECT_EQ(can, 1);
    can = -1;
    EXPECT_OK(hipDeviceCanAccessPeer(&can, 1, 1));
    EXPECT_EQ(can, 0);
    EXPECT_ERR(hipDeviceCanAccessPeer(&can, 0, 2), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceCanAccessPeer(&can, 2, 0), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceCanAccessPeer(&can, -1, 0), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceCanAccessPeer(nullptr, 0, 1), hipErrorInvalidValue);

    // The link: hsasim models two GPUs of one xGMI hive.
    int value = -1;
    EXPECT_OK(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrAccessSupported, 0, 1));
    EXPECT_EQ(value, 1);
    value = -1;
    EXPECT_OK(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrNativeAtomicSupported, 1, 0));
    EXPECT_EQ(value, 1);
    value = -1;
    EXPECT_OK(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrHipArrayAccessSupported, 0, 1));
    EXPECT_EQ(value, 1);
    // hsasim's GPUs are one xGMI hive unless HSASIM_GPU_LINK=pcie (the test runner sets
    // PEER_LINK=pcie then): HSA link type 4 (xGMI) and one hop, or 2 (PCIe) and two hops
    // (KFD's weight 40 for a pair through the root complex, over 20 a hop).
    const bool pcie = std::getenv("PEER_LINK") != nullptr;
    const uint32_t want_link = pcie ? 2 : 4, want_hops = pcie ? 2 : 1;
    value = -1;
    // AMD reports the HSA link type as the performance rank.
    EXPECT_OK(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrPerformanceRank, 0, 1));
    EXPECT_EQ(value, want_link);
    EXPECT_ERR(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrAccessSupported, 0, 0),
               hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceGetP2PAttribute(&value, hipDevP2PAttrAccessSupported, 0, 2),
               hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceGetP2PAttribute(&value, (hipDeviceP2PAttr)9, 0, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetP2PAttribute(nullptr, hipDevP2PAttrAccessSupported, 0, 1),
               hipErrorInvalidValue);
    uint32_t link = 99, hops = 99;
    EXPECT_OK(hipExtGetLinkTypeAndHopCount(0, 1, &link, &hops));
    EXPECT_EQ(link, want_link);
    EXPECT_EQ(hops, want_hops);
    EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 0, &link, &hops), hipErrorInvalidValue);
    EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 1, nullptr, &hops), hipErrorInvalidValue);
    EXPECT_ERR(hipExtGetLinkTypeAndHopCount(0, 5, &link, &hops), hipErrorInvalidDevice);

    // Enabling and disabling: the errors (device 0 current).
    EXPECT_ERR(hipDeviceEnablePeerAccess(1, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceEnablePeerAccess(0, 0), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceEnablePeerAccess(2, 0), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
    EXPECT_ERR(hipDeviceDisablePeerAccess(0), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceDisablePeerAccess(7), hipErrorInvalidDevice);

    // Device 0 reading device 1's memory: a fault until access is enabled.
    int* out0 = nullptr;
    CHECK(hipMalloc(&out0, BYTES));
    if (faults) {
        EXPECT_ERR(read_with_kernel(out0, mem[1]), hipErrorIllegalAddress);
        // The fault is reported once; device 0 goes on working.
        EXPECT_OK(read_with_kernel(out0, mem[0]));
        expect_filled(out0, 1000, "device 0 after the fault");
    }
    EXPECT_OK(hipDeviceEnablePeerAccess(1, 0));
    EXPECT_ERR(hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
    EXPECT_OK(read_with_kernel(out0, mem[1]));
    expect_filled(out0, 2000, "device 0 reading device 1's memory (made before enabling)");

    // Memory device 1 allocates after the grant is reachable too.
    CHECK(hipSetDevice(1));
    int* later = nullptr;
    CHECK(hipMalloc(&later, BYTES));
    fill<<<N / 64, 64>>>(later, 3000, N);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    // Enabling is one-way: device 1 still may not reach device 0's memory.
    int* out1 = nullptr;
    CHECK(hipMalloc(&out1, BYTES));
    if (faults) EXPECT_ERR(read_with_kernel(out1, mem[0]), hipErrorIllegalAddress);
    CHECK(hipSetDevice(0));
    EXPECT_OK(read_with_kernel(out0, later));
    expect_filled(out0, 3000, "device 0 reading device 1's memory (made after enabling)");

    // Disabling: allocations made from now on are out of reach again.
    EXPECT_OK(hipDeviceDisablePeerAccess(1));
    EXPECT_ERR(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
    CHECK(hipSetDevice(1));
    int* after_disable = nullptr;
    CHECK(hipMalloc(&after_disable, BYTES));
    CHECK(hipSetDevice(0));
    if (faults) EXPECT_ERR(read_with_kernel(out0, after_disable), hipErrorIllegalAddress);
    // And enabling again works.
    EXPECT_OK(hipDeviceEnablePeerAccess(1, 0));
    EXPECT_OK(read_with_kernel(out0, mem[1]));
    expect_filled(out0, 2000, "device 0 reading device 1's memory after enabling again");
    EXPECT_OK(hipDeviceDisablePeerAccess(1));

    // Host memory is every device's.
    CHECK(hipSetDevice(1));
    EXPECT_OK(read_with_kernel(host_mem, mem[1]));
    CHECK(hipSetDevice(0));
    for (int i = 0; i < N; ++i) {
        if (host_mem[i] != 2000 + i) {
            std::fprintf(stderr, "FAIL host memory written by device 1: [%d] = %d\n", i,
                         host_mem[i]);
            ++failures;
            break;
        }
    }

    for (int d = 0; d < 2; ++d) {
        CHECK(hipSetDevice(d));
        CHECK(hipStreamDestroy(stream[d]));
    }
    CHECK(hipFree(mem[0]));
    CHECK(hipFree(mem[1]));
    CHECK(hipFree(later));
    CHECK(hipFree(after_disable));
    CHECK(hipFree(out0));
    CHECK(hipFree(out1));
    CHECK(hipHostFree(host_mem));
    return finish("peer_access");
}
