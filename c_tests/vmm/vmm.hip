// Virtual memory management: a reserved range, several physical chunks mapped into it
// contiguously, kernels, copies and fills across chunk boundaries, the data moving with the
// physical memory when a chunk is unmapped and mapped elsewhere (and one chunk mapped at two
// addresses showing the same bytes), a POSIX fd export/import, handles released while mapped
// (the memory lives until unmapped), the granularity rules and the errors of bad input, a
// kernel touching an unmapped part of the reservation faulting with a named error, and the
// checks of hipMemGetHandleForAddressRange and hipMemMapArrayAsync (both not supported).
#include "../check.h"

#include <cstdint>
#include <unistd.h>
#include <vector>

__global__ void fill_index(int* p, int n, int base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + i;
}

__global__ void add(int* p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

__global__ void touch(int* p) { p[threadIdx.x] = 1; }

static char* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }

static std::vector<int> read_back(const void* p, size_t bytes) {
    std::vector<int> v(bytes / sizeof(int), -1);
    EXPECT_OK(hipMemcpy(v.data(), p, bytes, hipMemcpyDeviceToHost));
    return v;
}

static void allow(void* p, size_t size) {
    hipMemAccessDesc desc = {};
    desc.location.type = hipMemLocationTypeDevice;
    desc.location.id = 0;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(p, size, &desc, 1));
}

int main() {
    int supported = 0;
    CHECK(hipDeviceGetAttribute(&supported, hipDeviceAttributeVirtualMemoryManagementSupported, 0));
    EXPECT_EQ(supported, 1);

    hipMemAllocationProp prop = {};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;

    // Granularity: the minimum divides the recommended one; bad properties are invalid.
    size_t gran = 0, rec = 0;
    CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
    CHECK(hipMemGetAllocationGranularity(&rec, &prop, hipMemAllocationGranularityRecommended));
    EXPECT_TRUE(gran > 0 && rec >= gran && rec % gran == 0);
    hipMemAllocationProp bad = prop;
    bad.location.id = 7;
    EXPECT_ERR(hipMemGetAllocationGranularity(&gran, &bad, hipMemAllocationGranularityMinimum),
               hipErrorInvalidValue);
    bad = prop;
    bad.type = hipMemAllocationTypeInvalid;
    EXPECT_ERR(hipMemGetAllocationGranularity(&gran, &bad, hipMemAllocationGranularityMinimum),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetAllocationGranularity(nullptr, &prop, hipMemAllocationGranularityMinimum),
               hipErrorInvalidValue);

    const size_t chunk = 4 * gran;
    const int ints = chunk / sizeof(int);

    // Reservations: sizes multiples of the granularity, alignments powers of two, flags 0.
    void* va = nullptr;
    CHECK(hipMemAddressReserve(&va, 4 * chunk, 0, nullptr, 0));
    EXPECT_TRUE(va != nullptr);
    void* other = nullptr;
    EXPECT_ERR(hipMemAddressReserve(&other, chunk + 1, 0, nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAddressReserve(&other, chunk, 3, nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAddressReserve(&other, chunk, 0, nullptr, 1), hipErrorInvalidValue);
    void* aligned = nullptr;
    CHECK(hipMemAddressReserve(&aligned, chunk, 1 << 21, nullptr, 0));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % (1 << 21), 0);
    CHECK(hipMemAddressFree(aligned, chunk));

    // Physical chunks.
    hipMemGenericAllocationHandle_t h[3] = {};
    for (auto& handle : h) CHECK(hipMemCreate(&handle, chunk, &prop, 0));
    hipMemGenericAllocationHandle_t none = nullptr;
    EXPECT_ERR(hipMemCreate(&none, chunk + gran / 2, &prop, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemCreate(&none, chunk, &prop, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipMemCreate(&none, 0, &prop, 0), hipErrorInvalidValue);

    hipMemAllocationProp got = {};
    CHECK(hipMemGetAllocationPropertiesFromHandle(&got, h[0]));
    EXPECT_EQ(got.type, hipMemAllocationTypePinned);
    EXPECT_EQ(got.location.type, hipMemLocationTypeDevice);
    EXPECT_EQ(got.location.id, 0);
    EXPECT_EQ(got.requestedHandleType, hipMemHandleTypePosixFileDescriptor);

    // Mapping: aligned, inside a reservation, within the allocation, over nothing mapped.
    EXPECT_ERR(hipMemMap(at(va, gran / 2), chunk, 0, h[0], 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMap(va, chunk - gran / 2, 0, h[0], 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMap(va, 2 * chunk, 0, h[0], 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMap(at(va, 3 * chunk), 2 * chunk, 0, h[0], 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMap(va, chunk, 0, h[0], 1), hipErrorInvalidValue);
    for (int i = 0; i < 3; ++i) CHECK(hipMemMap(at(va, i * chunk), chunk, 0, h[i], 0));
    EXPECT_ERR(hipMemMap(at(va, chunk), chunk, 0, h[2], 0), hipErrorInvalidValue);
    allow(va, 3 * chunk);

    unsigned long long flags = 99;
    hipMemLocation loc = {hipMemLocationTypeDevice, 0};
    CHECK(hipMemGetAccess(&flags, &loc, at(va, chunk + 8)));
    EXPECT_EQ(flags, hipMemAccessFlagsProtReadWrite);
    EXPECT_ERR(hipMemGetAccess(&flags, &loc, at(va, 3 * chunk)), hipErrorInvalidValue);

    hipPointerAttribute_t attrs = {};
    CHECK(hipPointerGetAttributes(&attrs, at(va, chunk + 8)));
    EXPECT_EQ(attrs.type, hipMemoryTypeDevice);
    EXPECT_EQ(attrs.device, 0);

    // A kernel over all three chunks, read back in one copy across both boundaries.
    fill_index<<<(3 * ints + 255) / 256, 256>>>(static_cast<int*>(va), 3 * ints, 1000);
    CHECK(hipDeviceSynchronize());
    std::vector<int> all = read_back(va, 3 * chunk);
    for (int i = 0; i < 3 * ints; ++i) {
        if (all[i] != 1000 + i) {
            std::fprintf(stderr, "FAIL element %d is %d after the kernel\n", i, all[i]);
            ++failures;
            break;
        }
    }
    // A fill and a host-to-device copy across the first boundary.
    CHECK(hipMemset(at(va, chunk - 64), 0x7f, 128));
    std::vector<int> edge = read_back(at(va, chunk - 128), 256);
    EXPECT_EQ(edge[0], 1000 + ints - 32);
    EXPECT_EQ(edge[16], 0x7f7f7f7f);
    EXPECT_EQ(edge[47], 0x7f7f7f7f);
    EXPECT_EQ(edge[48], 1000 + ints + 16);
    std::vector<int> pattern(64);
    for (int i = 0; i < 64; ++i) pattern[i] = -i;
    CHECK(hipMemcpy(at(va, 2 * chunk - 128), pattern.data(), 256, hipMemcpyHostToDevice));
    edge = read_back(at(va, 2 * chunk - 128), 256);
    EXPECT_EQ(edge[0], 0);
    EXPECT_EQ(edge[63], -63);
    // Device to device across a boundary, into ordinary device memory and back.
    int* plain = nullptr;
    CHECK(hipMalloc(&plain, 256));
    CHECK(hipMemcpy(plain, at(va, chunk - 128), 256, hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(at(va, 2 * chunk - 64), plain, 64, hipMemcpyDeviceToDevice));
    edge = read_back(at(va, 2 * chunk - 64), 64);
    EXPECT_EQ(edge[0], 1000 + ints - 32);
    CHECK(hipFree(plain));

    // The data moves with the physical memory: chunk 1 unmapped, mapped after chunk 2.
    CHECK(hipMemUnmap(at(va, chunk), chunk));
    EXPECT_ERR(hipMemGetAccess(&flags, &loc, at(va, chunk)), hipErrorInvalidValue);
    CHECK(hipMemMap(at(va, 3 * chunk), chunk, 0, h[1], 0));
    allow(at(va, 3 * chunk), chunk);
    std::vector<int> moved = read_back(at(va, 3 * chunk), chunk);
    EXPECT_EQ(moved[0], 0x7f7f7f7f);
    EXPECT_EQ(moved[16], 1000 + ints + 16);
    EXPECT_EQ(moved[ints - 32], 0);
    EXPECT_EQ(moved[ints - 16], 1000 + ints - 32);
    // The same chunk at a second address: both show the same bytes.
    CHECK(hipMemMap(at(va, chunk), chunk, 0, h[1], 0));
    allow(at(va, chunk), chunk);
    add<<<(ints + 255) / 256, 256>>>(reinterpret_cast<int*>(at(va, chunk)), ints, 5);
    CHECK(hipDeviceSynchronize());
    moved = read_back(at(va, 3 * chunk), chunk);
    EXPECT_EQ(moved[16], 1000 + ints + 21);
    EXPECT_EQ(moved[100], 1000 + ints + 105);

    // The allocation behind an address.
    hipMemGenericAllocationHandle_t retained = nullptr;
    CHECK(hipMemRetainAllocationHandle(&retained, at(va, 3 * chunk + 100)));
    EXPECT_TRUE(retained == h[1]);
    CHECK(hipMemRelease(retained));
    EXPECT_ERR(hipMemRetainAllocationHandle(&retained, &flags),
               hipErrorInvalidValue);

    // Unmapping what is not (wholly) mapped.
    void* empty = nullptr;
    CHECK(hipMemAddressReserve(&empty, chunk, 0, nullptr, 0));
    EXPECT_ERR(hipMemUnmap(empty, chunk), hipErrorInvalidValue);
    EXPECT_ERR(hipMemUnmap(va, chunk / 2), hipErrorInvalidValue);
    EXPECT_ERR(hipMemAddressFree(va, 4 * chunk), hipErrorInvalidValue);

    // Export chunk 2 as a file descriptor, import it and map it in another reservation.
    int fd = -1;
    CHECK(hipMemExportToShareableHandle(&fd, h[2], hipMemHandleTypePosixFileDescriptor, 0));
    EXPECT_TRUE(fd >= 0);
    hipMemGenericAllocationHandle_t imported = nullptr;
    CHECK(hipMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          hipMemHandleTypePosixFileDescriptor));
    close(fd);
    CHECK(hipMemMap(empty, chunk, 0, imported, 0));
    allow(empty, chunk);
    std::vector<int> shared = read_back(empty, chunk);
    EXPECT_EQ(shared[0], -32);
    EXPECT_EQ(shared[40], 1000 + 2 * ints + 40);
    add<<<1, 64>>>(static_cast<int*>(empty), 64, 1);
    CHECK(hipDeviceSynchronize());
    shared = read_back(at(va, 2 * chunk), 512);
    EXPECT_EQ(shared[0], -31);
    EXPECT_EQ(shared[40], 1000 + 2 * ints + 41);
    EXPECT_EQ(shared[63], 1000 + 2 * ints + 64);
    EXPECT_EQ(shared[64], 1000 + 2 * ints + 64);
    // Only a POSIX fd, for an allocation asked to be shareable so; bogus descriptors fail.
    hipMemAllocationProp unshared = prop;
    unshared.requestedHandleType = hipMemHandleTypeNone;
    hipMemGenericAllocationHandle_t local = nullptr;
    CHECK(hipMemCreate(&local, chunk, &unshared, 0));
    EXPECT_ERR(hipMemExportToShareableHandle(&fd, local, hipMemHandleTypePosixFileDescriptor, 0),
               hipErrorInvalidValue);
    CHECK(hipMemRelease(local));
    EXPECT_ERR(hipMemImportFromShareableHandle(&local, reinterpret_cast<void*>(uintptr_t{987654}),
                                               hipMemHandleTypePosixFileDescriptor),
               hipErrorInvalidValue);

    // Released while mapped: the memory lives until unmapped; the handle has no reference left.
    CHECK(hipMemRelease(h[0]));
    add<<<(ints + 255) / 256, 256>>>(static_cast<int*>(va), ints, 2);
    CHECK(hipDeviceSynchronize());
    std::vector<int> first = read_back(va, 256);
    EXPECT_EQ(first[0], 1002);
    EXPECT_EQ(first[63], 1065);
    EXPECT_ERR(hipMemRelease(h[0]), hipErrorInvalidValue);
    EXPECT_ERR(hipMemRelease(nullptr), hipErrorInvalidValue);

    // hipMemGetHandleForAddressRange: the arguments and the range are checked, then there is no
    // dma-buf to give (hsasim has no kernel driver to make one): hipErrorNotSupported, and the
    // handle is left alone.
    int fd_out = -7;
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, va, chunk, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorNotSupported);
    EXPECT_EQ(fd_out, -7);
    int* dev_words = nullptr;
    CHECK(hipMalloc(&dev_words, 4096));
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, dev_words, 4096, hipMemRangeHandleTypeDmaBufFd,
                                              hipMemRangeFlagDmaBufMappingTypePcie),
               hipErrorNotSupported);
    EXPECT_EQ(fd_out, -7);
    EXPECT_ERR(hipMemGetHandleForAddressRange(nullptr, dev_words, 4096, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, dev_words, 0, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, nullptr, 4096, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, dev_words, 8192, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorInvalidValue); // past the allocation
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, dev_words, 4096,
                                              static_cast<hipMemRangeHandleType>(2), 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, dev_words, 4096, hipMemRangeHandleTypeDmaBufFd, 2),
               hipErrorInvalidValue);
    int* pinned = nullptr;
    CHECK(hipHostMalloc(&pinned, 4096, 0));
    EXPECT_ERR(hipMemGetHandleForAddressRange(&fd_out, pinned, 4096, hipMemRangeHandleTypeDmaBufFd, 0),
               hipErrorInvalidValue); // host memory
    EXPECT_EQ(fd_out, -7);
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(dev_words));

    // hipMemMapArrayAsync: sparse arrays are not supported (AMD's runtime has none either);
    // an empty list is invalid.
    hipArrayMapInfo map_info = {};
    map_info.resourceType = hipResourceTypeArray;
    map_info.memOperationType = hipMemOperationTypeMap;
    EXPECT_ERR(hipMemMapArrayAsync(&map_info, 1, nullptr), hipErrorNotSupported);
    EXPECT_ERR(hipMemMapArrayAsync(nullptr, 1, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMapArrayAsync(&map_info, 0, nullptr), hipErrorInvalidValue);

    // A kernel touching an unmapped part of the reservation faults, and the device recovers.
    CHECK(hipMemUnmap(at(va, 2 * chunk), chunk));
    touch<<<1, 64>>>(reinterpret_cast<int*>(at(va, 2 * chunk + 256)));
    EXPECT_ERR_KEEP(hipDeviceSynchronize(), hipErrorIllegalAddress);
    EXPECT_ERR(hipGetLastError(), hipErrorIllegalAddress);
    EXPECT_OK(hipDeviceSynchronize());
    first = read_back(va, 256);
    EXPECT_EQ(first[1], 1003);

    // Everything back.
    CHECK(hipMemUnmap(va, 2 * chunk));
    CHECK(hipMemUnmap(at(va, 3 * chunk), chunk));
    CHECK(hipMemUnmap(empty, chunk));
    EXPECT_ERR(hipMemUnmap(va, chunk), hipErrorInvalidValue);
    EXPECT_ERR(hipMemMap(va, chunk, 0, h[0], 0), hipErrorInvalidValue);
    CHECK(hipMemRelease(h[1]));
    CHECK(hipMemRelease(h[2]));
    CHECK(hipMemRelease(imported));
    CHECK(hipMemAddressFree(va, 4 * chunk));
    CHECK(hipMemAddressFree(empty, chunk));
    EXPECT_ERR(hipMemAddressFree(va, 4 * chunk), hipErrorInvalidValue);
    return finish("vmm");
}
