// texref_registration: texture references as clang-19 and hipshim's headers see them (ROCm 5
// and 6 ABI). hip_headers/ declares textureReference and the host API but no texture<>
// template or sampling functions (those come with AMD's headers; c_tests/hipcc/texref.cpp
// samples through them), so this program declares the smallest texture<> clang treats as a
// texture reference: a class template with the `device_builtin_texture_type` attribute, which
// makes clang register the global with __hipRegisterTexture.
// - a bind writes the reference to its device copy: a kernel reads the device copy's
//   textureObject (the same address as the host copy's) and, through it, the buffer
//   descriptor's base address (the bound pointer); a rebind and an unbind show too;
// - hipTexRefSet*/Get* round trips on the registered reference;
// - bad input: a textureReference that was never registered (hipErrorInvalidSymbol), a
//   __device__ variable (hipErrorInvalidSymbol), nulls, unknown modes (hipErrorInvalidValue);
// - on a device without image instructions (gfx942) every call answers hipErrorNotSupported.
#include "../check.h"

#include <cstdint>
#include <vector>

template <class T, int dim, enum hipTextureReadMode mode>
struct __attribute__((device_builtin_texture_type)) texture : public textureReference {
    texture() {
        normalized = 0;
        readMode = mode;
        filterMode = hipFilterModePoint;
        addressMode[0] = addressMode[1] = addressMode[2] = hipAddressModeClamp;
        channelDesc = {32, 0, 0, 0, hipChannelFormatKindFloat};
        sRGB = 0;
        maxAnisotropy = 0;
        mipmapFilterMode = hipFilterModePoint;
        mipmapLevelBias = minMipmapLevelClamp = maxMipmapLevelClamp = 0;
        textureObject = nullptr;
        numChannels = 0;
        format = (hipArray_Format)0;
    }
};

texture<float, 1, hipReadModeElementType> lin;
__device__ int plain;

// out[0]: the device copy's textureObject; out[1]: the first two dwords of the object (the
// buffer descriptor's base address, 48 bits).
__global__ void read_reference(uint64_t* out) {
    const unsigned* object = (const unsigned*)lin.textureObject;
    out[0] = (uint64_t)object;
    out[1] = object ? ((uint64_t)(object[1] & 0xffff) << 32 | object[0]) : 0;
}

static void read_back(uint64_t* host) {
    uint64_t* d;
    CHECK(hipMalloc(&d, 2 * sizeof(uint64_t)));
    read_reference<<<1, 1>>>(d);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(host, d, 2 * sizeof(uint64_t), hipMemcpyDeviceToHost));
    CHECK(hipFree(d));
}

int main() {
    int images = 0;
    CHECK(hipDeviceGetAttribute(&images, hipDeviceAttributeImageSupport, 0));
    float *a, *b;
    CHECK(hipMalloc(&a, 1024));
    CHECK(hipMalloc(&b, 1024));
    hipChannelFormatDesc desc = {32, 0, 0, 0, hipChannelFormatKindFloat};
    if (!images) {
        EXPECT_ERR(hipBindTexture(nullptr, &lin, a, &desc, 1024), hipErrorNotSupported);
        EXPECT_ERR(hipTexRefSetFilterMode(&lin, hipFilterModeLinear), hipErrorNotSupported);
        EXPECT_ERR(hipUnbindTexture(&lin), hipErrorNotSupported);
        return finish("texref_registration");
    }

    size_t offset = 1;
    CHECK(hipBindTexture(&offset, &lin, a, &desc, 1024));
    EXPECT_EQ(offset, (size_t)0);
    uint64_t got[2];
    read_back(got);
    EXPECT_EQ(got[0], (uint64_t)lin.textureObject);
    EXPECT_EQ(got[1], (uint64_t)a);

    CHECK(hipBindTexture(nullptr, &lin, b, &desc, 512));
    read_back(got);
    EXPECT_EQ(got[0], (uint64_t)lin.textureObject);
    EXPECT_EQ(got[1], (uint64_t)b);
    hipDeviceptr_t bound = nullptr;
    CHECK(hipTexRefGetAddress(&bound, &lin));
    EXPECT_EQ(bound, (hipDeviceptr_t)b);

    CHECK(hipUnbindTexture(&lin));
    read_back(got);
    EXPECT_EQ(got[0], (uint64_t)0);
    EXPECT_ERR(hipTexRefGetAddress(&bound, &lin), hipErrorInvalidValue);

    // State round trips.
    CHECK(hipTexRefSetAddressMode(&lin, 2, hipAddressModeBorder));
    hipTextureAddressMode am;
    CHECK(hipTexRefGetAddressMode(&am, &lin, 2));
    EXPECT_EQ(am, hipAddressModeBorder);
    CHECK(hipTexRefSetFlags(&lin, HIP_TRSF_NORMALIZED_COORDINATES));
    unsigned flags = 0;
    CHECK(hipTexRefGetFlags(&flags, &lin));
    EXPECT_EQ(flags, (unsigned)HIP_TRSF_NORMALIZED_COORDINATES);
    EXPECT_EQ(lin.readMode, hipReadModeNormalizedFloat);
    const textureReference* ref = nullptr;
    CHECK(hipGetTextureReference(&ref, &lin));
    EXPECT_EQ(ref, (const textureReference*)&lin);

    // Bad input.
    textureReference stray = lin;
    EXPECT_ERR(hipBindTexture(nullptr, &stray, a, &desc, 1024), hipErrorInvalidSymbol);
    EXPECT_ERR(hipBindTexture(nullptr, (const textureReference*)&plain, a, &desc, 1024),
               hipErrorInvalidSymbol);
    EXPECT_ERR(hipGetTextureReference(&ref, &plain), hipErrorInvalidSymbol);
    EXPECT_ERR(hipBindTexture(nullptr, &lin, a, nullptr, 1024), hipErrorInvalidValue);
    EXPECT_ERR(hipBindTexture(nullptr, &lin, a, &desc, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetAddressMode(&lin, 3, hipAddressModeClamp), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetFlags(&lin, 0x100), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetFilterMode(nullptr, hipFilterModePoint), hipErrorInvalidValue);
    EXPECT_EQ(lin.textureObject, (hipTextureObject_t) nullptr);

    CHECK(hipFree(a));
    CHECK(hipFree(b));
    return finish("texref_registration");
}
