// memory: every allocation kind, hipMemcpy of every kind (Default inferred from the pointer
// registry), 2D copies and fills, pointer attributes, memory info.
#include "../check.h"

#include <cstring>
#include <vector>

__global__ void add_one(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

__global__ void fill_rows(char* base, size_t pitch, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && y < height) base[y * pitch + x] = (char)(y * 16 + x % 16);
}

int main() {
    const int n = 1 << 12;
    const size_t bytes = n * sizeof(int);
    std::vector<int> host(n), back(n);
    for (int i = 0; i < n; ++i) host[i] = i * 3;

    // Device memory, every copy kind, Default in both directions.
    int* dev = nullptr;
    int* dev2 = nullptr;
    EXPECT_OK(hipMalloc(&dev, bytes));
    EXPECT_OK(hipMalloc(&dev2, bytes));
    EXPECT_OK(hipMemcpy(dev, host.data(), bytes, hipMemcpyHostToDevice));
    EXPECT_OK(hipMemcpy(dev2, dev, bytes, hipMemcpyDeviceToDevice));
    EXPECT_OK(hipMemcpy(back.data(), dev2, bytes, hipMemcpyDeviceToHost));
    EXPECT_TRUE(back == host);
    std::fill(back.begin(), back.end(), 0);
    EXPECT_OK(hipMemcpy(dev2, host.data(), bytes, hipMemcpyDefault));
    EXPECT_OK(hipMemcpy(back.data(), dev2, bytes, hipMemcpyDefault));
    EXPECT_TRUE(back == host);
    std::vector<int> host2(n);
    EXPECT_OK(hipMemcpy(host2.data(), host.data(), bytes, hipMemcpyHostToHost));
    EXPECT_TRUE(host2 == host);
    // Driver-style names.
    EXPECT_OK(hipMemcpyHtoD(dev, host.data(), bytes));
    EXPECT_OK(hipMemcpyDtoD(dev2, dev, bytes));
    std::fill(back.begin(), back.end(), 0);
    EXPECT_OK(hipMemcpyDtoH(back.data(), dev2, bytes));
    EXPECT_TRUE(back == host);
    // A copy larger than the 4 MiB staging buffer, at an interior offset.
    {
        const size_t big = (9u << 20) + 123;
        std::vector<unsigned char> src(big), dst(big);
        for (size_t i = 0; i < big; ++i) src[i] = (unsigned char)(i * 7 + 1);
        unsigned char* d = nullptr;
        EXPECT_OK(hipMalloc(&d, big + 64));
        EXPECT_OK(hipMemcpy(d + 64, src.data(), big, hipMemcpyHostToDevice));
        EXPECT_OK(hipMemcpy(dst.data(), d + 64, big, hipMemcpyDeviceToHost));
        EXPECT_TRUE(std::memcmp(src.data(), dst.data(), big) == 0);
        EXPECT_OK(hipFree(d));
    }

    // Pinned host memory: kernels use it directly; copies skip staging.
    const unsigned flag_sets[] = {hipHostMallocDefault, hipHostMallocPortable | hipHostMallocMapped,
                                  hipHostMallocWriteCombined, hipHostMallocCoherent,
                                  hipHostMallocNonCoherent};
    for (unsigned flags : flag_sets) {
        int* pinned = nullptr;
        EXPECT_OK(hipHostMalloc(&pinned, bytes, flags));
        EXPECT_TRUE(pinned != nullptr);
        unsigned got_flags = 12345;
        EXPECT_OK(hipHostGetFlags(&got_flags, pinned));
        EXPECT_EQ(got_flags, flags);
        for (int i = 0; i < n; ++i) pinned[i] = i;
        void* dptr = nullptr;
        EXPECT_OK(hipHostGetDevicePointer(&dptr, pinned, 0));
        EXPECT_TRUE(dptr != nullptr);
        add_one<<<n / 256, 256>>>(static_cast<int*>(dptr), n);
        EXPECT_OK(hipDeviceSynchronize());
        EXPECT_EQ(pinned[0], 1);
        EXPECT_EQ(pinned[n - 1], n);
        EXPECT_OK(hipMemcpy(dev, pinned, bytes, hipMemcpyDefault));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ(back[100], 101);
        EXPECT_OK(hipMemcpy(pinned, dev2, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ(pinned[5], host[5]);
        hipPointerAttribute_t attr;
        EXPECT_OK(hipPointerGetAttributes(&attr, pinned + 3));
        EXPECT_EQ(attr.type, hipMemoryTypeHost);
        EXPECT_TRUE(attr.hostPointer == pinned + 3);
        EXPECT_EQ(attr.allocationFlags, flags);
        EXPECT_OK(hipHostFree(pinned));
    }
    void* alias = nullptr;
    EXPECT_OK(hipHostAlloc(&alias, 64, hipHostAllocMapped));
    EXPECT_OK(hipHostFree(alias));

    // Registered memory: the application's own buffer, usable by kernels once registered.
    {
        std::vector<int> mine(n, 41);
        EXPECT_OK(hipHostRegister(mine.data(), bytes, hipHostRegisterDefault));
        void* dptr = nullptr;
        EXPECT_OK(hipHostGetDevicePointer(&dptr, mine.data(), 0));
        add_one<<<n / 256, 256>>>(static_cast<int*>(dptr), n);
        EXPECT_OK(hipDeviceSynchronize());
        EXPECT_EQ(mine[7], 42);
        EXPECT_OK(hipMemcpy(dev, mine.data(), bytes, hipMemcpyDefault));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ(back[n - 1], 42);
        hipPointerAttribute_t attr;
        EXPECT_OK(hipPointerGetAttributes(&attr, mine.data()));
        EXPECT_EQ(attr.type, hipMemoryTypeHost);
        EXPECT_OK(hipHostUnregister(mine.data()));
    }

    // Managed memory: host and device both use the same pointer.
    {
        int* managed = nullptr;
        EXPECT_OK(hipMallocManaged(&managed, bytes));
        for (int i = 0; i < n; ++i) managed[i] = 2 * i;
        add_one<<<n / 256, 256>>>(managed, n);
        EXPECT_OK(hipDeviceSynchronize());
        EXPECT_EQ(managed[10], 21);
        hipPointerAttribute_t attr;
        EXPECT_OK(hipPointerGetAttributes(&attr, managed));
        EXPECT_EQ(attr.type, hipMemoryTypeManaged);
        EXPECT_EQ(attr.isManaged, 1);
        EXPECT_OK(hipMemcpy(back.data(), managed, bytes, hipMemcpyDefault));
        EXPECT_EQ(back[10], 21);
        EXPECT_OK(hipFree(managed));
        int* host_attached = nullptr;
        EXPECT_OK(hipMallocManaged(&host_attached, 64, hipMemAttachHost));
        EXPECT_OK(hipFree(host_attached));
    }

    // Pointer attributes of device and unknown memory.
    {
        hipPointerAttribute_t attr;
        EXPECT_OK(hipPointerGetAttributes(&attr, dev + 5));
        EXPECT_EQ(attr.type, hipMemoryTypeDevice);
        EXPECT_EQ(attr.device, 0);
        EXPECT_TRUE(attr.devicePointer == dev + 5);
        EXPECT_TRUE(attr.hostPointer == nullptr);
        EXPECT_EQ(attr.isManaged, 0);
        EXPECT_OK(hipPointerGetAttributes(&attr, host.data()));
        EXPECT_EQ(attr.type, hipMemoryTypeUnregistered);
        EXPECT_EQ(attr.device, hipInvalidDeviceId);
        size_t size = 0;
        EXPECT_OK(hipMemPtrGetInfo(dev + 1, &size));
        EXPECT_EQ(size, bytes);
        void* base = nullptr;
        EXPECT_OK(hipMemGetAddressRange(&base, &size, dev + 9));
        EXPECT_TRUE(base == dev);
        EXPECT_EQ(size, bytes);
    }

    // Fills of every width.
    {
        EXPECT_OK(hipMemset(dev, 0xab, bytes));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ((unsigned)back[0], 0xababababu);
        EXPECT_OK(hipMemsetD32(dev, 0x12345678, n));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ(back[n - 1], 0x12345678);
        EXPECT_OK(hipMemsetD16(dev, 0xbeef, 2 * n));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ((unsigned)back[3], 0xbeefbeefu);
        EXPECT_OK(hipMemsetD8(dev, 0x5a, bytes));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ((unsigned)back[9], 0x5a5a5a5au);
        // An interior, partial fill leaves the neighbours alone.
        EXPECT_OK(hipMemset(reinterpret_cast<char*>(dev) + 1, 0, 2));
        EXPECT_OK(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost));
        EXPECT_EQ((unsigned)back[0], 0x5a00005au);
        EXPECT_EQ((unsigned)back[1], 0x5a5a5a5au);
    }

    // Pitched memory, 2D copies of every kind and 2D fills.
    {
        const int width = 100, height = 7;
        char* pitched = nullptr;
        size_t pitch = 0;
        EXPECT_OK(hipMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, width, height));
        EXPECT_TRUE(pitch >= (size_t)width && pitch % 256 == 0);
        fill_rows<<<dim3(1, height), 128>>>(pitched, pitch, width, height);
        EXPECT_OK(hipDeviceSynchronize());
        std::vector<char> tight(width * height), expect(width * height);
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) expect[y * width + x] = (char)(y * 16 + x % 16);
        EXPECT_OK(hipMemcpy2D(tight.data(), width, pitched, pitch, width, height,
                              hipMemcpyDeviceToHost));
        EXPECT_TRUE(tight == expect);
        // Host to device with a wider host pitch, then device to device, then back.
        std::vector<char> wide(160 * height, 0);
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) wide[y * 160 + x] = (char)(x ^ y);
        EXPECT_OK(hipMemcpy2D(pitched, pitch, wide.data(), 160, width, height,
                              hipMemcpyHostToDevice));
        char* pitched2 = nullptr;
        size_t pitch2 = 0;
        EXPECT_OK(hipMallocPitch(reinterpret_cast<void**>(&pitched2), &pitch2, width, height));
        EXPECT_OK(hipMemcpy2D(pitched2, pitch2, pitched, pitch, width, height,
                              hipMemcpyDeviceToDevice));
        EXPECT_OK(hipMemcpy2D(tight.data(), width, pitched2, pitch2, width, height,
                              hipMemcpyDefault));
        bool same = true;
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) same &= tight[y * width + x] == (char)(x ^ y);
        EXPECT_TRUE(same);
        std::vector<char> host2d(width * height);
        EXPECT_OK(hipMemcpy2D(host2d.data(), width, tight.data(), width, width, height,
                              hipMemcpyHostToHost));
        EXPECT_TRUE(host2d == tight);
        // 2D fill of a sub-rectangle: the bytes past `width - 10` in each row stay.
        EXPECT_OK(hipMemset2D(pitched2, pitch2, 0x77, width - 10, height));
        EXPECT_OK(hipMemcpy2D(tight.data(), width, pitched2, pitch2, width, height,
                              hipMemcpyDeviceToHost));
        EXPECT_EQ(tight[0], 0x77);
        EXPECT_EQ(tight[(height - 1) * width + width - 11], 0x77);
        EXPECT_EQ(tight[(height - 1) * width + width - 1], (char)((width - 1) ^ (height - 1)));
        // Bad pitches.
        EXPECT_ERR(hipMemcpy2D(tight.data(), width - 1, pitched2, pitch2, width, height,
                               hipMemcpyDeviceToHost),
                   hipErrorInvalidPitchValue);
        EXPECT_OK(hipMemcpy2D(tight.data(), width, pitched2, pitch2, 0, height,
                              hipMemcpyDeviceToHost));
        EXPECT_OK(hipFree(pitched));
        EXPECT_OK(hipFree(pitched2));
        void* none = reinterpret_cast<void*>(1);
        EXPECT_OK(hipMallocPitch(&none, &pitch, 0, 5));
        EXPECT_TRUE(none == nullptr);
        hipDeviceptr_t dp = nullptr;
        EXPECT_OK(hipMemAllocPitch(&dp, &pitch, 300, 2, 4));
        EXPECT_EQ(pitch, 512);
        EXPECT_OK(hipFree(dp));
    }

    // Memory info: allocations show up in `free`.
    {
        size_t free0 = 0, total = 0, free1 = 0;
        EXPECT_OK(hipMemGetInfo(&free0, &total));
        EXPECT_TRUE(total > 0 && free0 <= total);
        void* chunk = nullptr;
        EXPECT_OK(hipMalloc(&chunk, 64 << 20));
        EXPECT_OK(hipMemGetInfo(&free1, nullptr));
        EXPECT_EQ(free0 - free1, 64 << 20);
        size_t total_mem = 0;
        EXPECT_OK(hipDeviceTotalMem(&total_mem, 0));
        EXPECT_EQ(total_mem, total);
        EXPECT_OK(hipFree(chunk));
        // A small allocation uses up a whole page of device memory (the pool's granule).
        size_t free2 = 0;
        EXPECT_OK(hipMalloc(&chunk, 2));
        EXPECT_OK(hipMemGetInfo(&free2, nullptr));
        EXPECT_EQ(free0 - free2, 4096);
        EXPECT_OK(hipFree(chunk));
    }

    EXPECT_OK(hipFree(dev));
    EXPECT_OK(hipFree(dev2));
    return finish("memory");
}
