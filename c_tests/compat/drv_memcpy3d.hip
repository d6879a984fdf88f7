// hipDrvMemcpy3D reads HIP_MEMCPY3D in the layout of the program's ABI: ROCm 5's headers give
// its offsets and sizes as unsigned int (128 bytes), ROCm 6's as size_t. The program lays the
// structure out as a program built for the expected ABI would, and copies a 3D box host ->
// device -> host through it.
#include "../check.h"
#include "abi.h"

#include <vector>

// ROCm 5.2's HIP_MEMCPY3D (driver_types.h).
struct Memcpy3DRocm5 {
    unsigned int srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void* srcHost;
    void* srcDevice;
    hipArray_t srcArray;
    unsigned int srcPitch, srcHeight;
    unsigned int dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void* dstHost;
    void* dstDevice;
    hipArray_t dstArray;
    unsigned int dstPitch, dstHeight;
    unsigned int WidthInBytes, Height, Depth;
};
static_assert(sizeof(Memcpy3DRocm5) == 128, "ROCm 5.2's layout");

// One copy of a w x h x d box of bytes between pitched ranges; memory types in each ABI's
// numbering (ROCm 5: host 0, device 1; ROCm 6: host 1, device 2).
template <typename M>
static hipError_t copy(bool rocm5, void* dst, bool dst_device, size_t dpitch, const void* src,
                       bool src_device, size_t spitch, size_t w, size_t h, size_t d) {
    M m = {};
    int host = rocm5 ? 0 : 1, device = rocm5 ? 1 : 2;
    m.srcMemoryType = decltype(m.srcMemoryType)(src_device ? device : host);
    if (src_device) m.srcDevice = const_cast<void*>(src); else m.srcHost = src;
    m.srcPitch = spitch;
    m.srcHeight = h;
    m.dstMemoryType = decltype(m.dstMemoryType)(dst_device ? device : host);
    if (dst_device) m.dstDevice = dst; else m.dstHost = dst;
    m.dstPitch = dpitch;
    m.dstHeight = h;
    m.WidthInBytes = w;
    m.Height = h;
    m.Depth = d;
    return hipDrvMemcpy3D(reinterpret_cast<const HIP_MEMCPY3D*>(&m));
}

int main() {
    const bool rocm5 = expected_abi() == 5;
    const size_t w = 40, h = 6, d = 3, dpitch = 64;
    std::vector<unsigned char> in(w * h * d), out(w * h * d, 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = (unsigned char)(i * 7 + 1);
    void* dev = nullptr;
    CHECK(hipMalloc(&dev, dpitch * h * d));
    auto go = rocm5 ? copy<Memcpy3DRocm5> : copy<HIP_MEMCPY3D>;
    CHECK(go(rocm5, dev, true, dpitch, in.data(), false, w, w, h, d));
    CHECK(go(rocm5, out.data(), false, w, dev, true, dpitch, w, h, d));
    EXPECT_TRUE(in == out);
    CHECK(hipFree(dev));
    return finish("drv_memcpy3d");
}
