// hipMemcpyParam2D (and its async form) reads hip_Memcpy2D's memory types in the program's
// ABI numbering (ROCm 5: host 0, device 1; ROCm 6/7: host 1, device 2) and takes the pointer
// from the field that type names: a device side whose device pointer is null fails even when
// the host field is set. A pitch of 0 means rows packed as wide as the copy, as AMD's runtime
// reads it; an empty copy succeeds. (hip-tests' Unit_hipMemcpyParam2D*_Negative and
// _ExtentValidation check these.)
#include "../check.h"
#include "abi.h"

#include <algorithm>
#include <vector>

int main() {
    const bool rocm5 = expected_abi() == 5;
    const hipMemoryType host = hipMemoryType(rocm5 ? 0 : 1);
    const hipMemoryType device = hipMemoryType(rocm5 ? 1 : 2);
    const size_t w = 10, h = 4;
    size_t pitch = 0;
    unsigned char* dev = nullptr;
    CHECK(hipMallocPitch(reinterpret_cast<void**>(&dev), &pitch, w, h));
    std::vector<unsigned char> rows(pitch * h);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = (unsigned char)(i * 3 + 1);
    CHECK(hipMemcpy(dev, rows.data(), rows.size(), hipMemcpyHostToDevice));

    auto device_to_host = [&](unsigned char* out, size_t out_pitch) {
        hip_Memcpy2D d = {};
        d.srcMemoryType = device;
        d.srcHost = dev;
        d.srcDevice = dev;
        d.srcPitch = pitch;
        d.dstMemoryType = host;
        d.dstHost = out;
        d.dstDevice = out;
        d.dstPitch = out_pitch;
        d.WidthInBytes = w;
        d.Height = h;
        return d;
    };

    // Pitch 0: packed rows.
    std::vector<unsigned char> packed(w * h, 0);
    hip_Memcpy2D d = device_to_host(packed.data(), 0);
    EXPECT_OK(hipMemcpyParam2D(&d));
    bool same = true;
    for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < w; ++x) same &= packed[y * w + x] == rows[y * pitch + x];
    EXPECT_TRUE(same);
    // The same, with the source's pitch 0 too: its rows are then packed as well.
    std::vector<unsigned char> again(w * h, 0);
    d = device_to_host(again.data(), w);
    d.srcPitch = 0;
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    EXPECT_OK(hipMemcpyParam2DAsync(&d, stream));
    CHECK(hipStreamSynchronize(stream));
    EXPECT_TRUE(std::equal(again.begin(), again.end(), rows.begin()));

    // A device side names its memory by its device field only.
    d = device_to_host(packed.data(), w);
    d.srcDevice = nullptr;
    EXPECT_ERR(hipMemcpyParam2D(&d), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyParam2DAsync(&d, stream), hipErrorInvalidValue);
    hip_Memcpy2D up = {};
    up.srcMemoryType = host;
    up.srcHost = packed.data();
    up.srcPitch = w;
    up.dstMemoryType = device;
    up.dstHost = dev;
    up.dstDevice = nullptr;
    up.dstPitch = pitch;
    up.WidthInBytes = w;
    up.Height = h;
    EXPECT_ERR(hipMemcpyParam2D(&up), hipErrorInvalidValue);
    up.dstDevice = dev;
    EXPECT_OK(hipMemcpyParam2D(&up));

    // Nothing to copy: success, nothing touched.
    d = device_to_host(packed.data(), w);
    d.Height = 0;
    EXPECT_OK(hipMemcpyParam2D(&d));
    d.Height = h;
    d.WidthInBytes = 0;
    EXPECT_OK(hipMemcpyParam2D(&d));

    CHECK(hipStreamDestroy(stream));
    CHECK(hipFree(dev));
    return finish("param2d");
}
