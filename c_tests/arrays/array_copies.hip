// array_copies: arrays as linear device memory (the device has no image support).
// - 2D and 3D arrays of odd widths: host -> array (2D copy at an offset, hipMemcpy3D sub-box)
//   -> array (hipMemcpy2DArrayToArray, hipMemcpyAtoA) -> device (hipMemcpyAtoD, 2D from
//   array) -> host, and the 1D-offset calls (hipMemcpyToArray, FromArray, HtoA, AtoH, DtoA)
//   across row ends; every byte compared with a host model;
// - the handle is ROCm 5.2's struct hipArray: its public fields read back as created, and its
//   data is the array's memory laid out as documented (row pitch 256-byte aligned);
// - descriptors, info, channel descriptors; mipmapped arrays' level sizes;
// - bad input: AMD's error codes (null, zero width, bad channel layouts, flags, boxes outside
//   the array, freed and bogus handles).
#include "../check.h"

#include <cstring>
#include <vector>

// ROCm 5.2's public struct hipArray (hipshim's header keeps it opaque, as ROCm 6 does).
struct HipArrayV5 {
    void* data;
    hipChannelFormatDesc desc;
    unsigned type, width, height, depth;
    int Format;
    unsigned NumChannels;
    bool isDrv;
    unsigned textureType;
};

static size_t pitch_of(size_t row_bytes) { return (row_bytes + 255) / 256 * 256; }

static hipChannelFormatDesc float_desc() {
    return hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
}

static void round_trip_2d() {
    const size_t W = 37, H = 11;  // elements of 4 bytes: 148-byte rows
    const size_t row = W * 4;
    hipChannelFormatDesc desc = float_desc();
    hipArray_t a = nullptr, b = nullptr;
    CHECK(hipMallocArray(&a, &desc, W, H, hipArrayDefault));
    CHECK(hipMallocArray(&b, &desc, W, H));
    const HipArrayV5* pub = reinterpret_cast<const HipArrayV5*>(a);
    EXPECT_EQ(pub->width, W);
    EXPECT_EQ(pub->height, H);
    EXPECT_EQ(pub->depth, 0);
    EXPECT_EQ(pub->desc.x, 32);
    EXPECT_EQ(pub->Format, HIP_AD_FORMAT_FLOAT);
    EXPECT_EQ(pub->NumChannels, 1);
    EXPECT_TRUE(pub->data != nullptr);

    // The model: what each array's packed bytes should be.
    std::vector<unsigned char> model_a(row * H, 0), model_b(row * H, 0);
    std::vector<unsigned char> src(1000 * 20);
    for (size_t i = 0; i < src.size(); ++i) src[i] = (unsigned char)(i * 7 + 3);
    CHECK(hipMemcpy2DToArray(a, 0, 0, model_a.data(), row, row, H, hipMemcpyHostToDevice));
    CHECK(hipMemcpy2DToArray(b, 0, 0, model_b.data(), row, row, H, hipMemcpyHostToDevice));
    // A box of 21 bytes x 5 rows at (13 bytes, row 3), from a host buffer of pitch 1000.
    CHECK(hipMemcpy2DToArray(a, 13, 3, src.data() + 5, 1000, 21, 5, hipMemcpyHostToDevice));
    for (size_t y = 0; y < 5; ++y)
        std::memcpy(&model_a[(3 + y) * row + 13], &src[5 + y * 1000], 21);
    // The array's memory at `data`, laid out with a 256-byte aligned pitch.
    std::vector<unsigned char> raw(pitch_of(row) * H);
    CHECK(hipMemcpy(raw.data(), pub->data, raw.size(), hipMemcpyDeviceToHost));
    int raw_bad = 0;
    for (size_t y = 0; y < H; ++y)
        raw_bad += std::memcmp(&raw[y * pitch_of(row)], &model_a[y * row], row) != 0;
    EXPECT_EQ(raw_bad, 0);
    // Array to array: a box to another position.
    CHECK(hipMemcpy2DArrayToArray(b, 8, 1, a, 12, 2, 30, 7, hipMemcpyDeviceToDevice));
    for (size_t y = 0; y < 7; ++y) std::memcpy(&model_b[(1 + y) * row + 8], &model_a[(2 + y) * row + 12], 30);
    // 1D-offset copies across row ends: 300 bytes from packed offset 100 of a into b at 250.
    CHECK(hipMemcpyAtoA(b, 250, a, 100, 300));
    std::memcpy(&model_b[250], &model_a[100], 300);
    // Host to array at (wOffset 20, hOffset 4), 200 bytes spanning two row ends.
    CHECK(hipMemcpyToArray(b, 20, 4, src.data(), 200, hipMemcpyHostToDevice));
    std::memcpy(&model_b[4 * row + 20], src.data(), 200);
    CHECK(hipMemcpyHtoA(b, 7 * row + 1, src.data() + 77, 150));
    std::memcpy(&model_b[7 * row + 1], &src[77], 150);
    // Device to array and back.
    void* dev = nullptr;
    CHECK(hipMalloc(&dev, row * H));
    CHECK(hipMemcpy(dev, src.data() + 3, row * H, hipMemcpyHostToDevice));
    CHECK(hipMemcpyDtoA(b, 2 * row + 9, dev, 99));
    std::memcpy(&model_b[2 * row + 9], &src[3], 99);
    // Everything of b: through device memory (AtoD), and straight to the host (2D, AtoH,
    // FromArray with an offset).
    CHECK(hipMemcpyAtoD(dev, b, 0, row * H));
    std::vector<unsigned char> got(row * H, 0xee);
    CHECK(hipMemcpy(got.data(), dev, got.size(), hipMemcpyDeviceToHost));
    EXPECT_TRUE(std::memcmp(got.data(), model_b.data(), got.size()) == 0);
    std::vector<unsigned char> got2(row * H, 0xee);
    CHECK(hipMemcpy2DFromArray(got2.data(), row, b, 0, 0, row, H, hipMemcpyDeviceToHost));
    EXPECT_TRUE(std::memcmp(got2.data(), model_b.data(), got2.size()) == 0);
    std::vector<unsigned char> part(333, 0);
    CHECK(hipMemcpyAtoH(part.data(), b, 111, 333));
    EXPECT_TRUE(std::memcmp(part.data(), &model_b[111], 333) == 0);
    CHECK(hipMemcpyFromArray(part.data(), a, 5, 6, 333, hipMemcpyDefault));
    EXPECT_TRUE(std::memcmp(part.data(), &model_a[6 * row + 5], 333) == 0);
    std::vector<unsigned char> pitched(64 * 4, 0);
    CHECK(hipMemcpy2DFromArray(pitched.data(), 64, a, 13, 3, 21, 4, hipMemcpyDefault));
    int bad = 0;
    for (size_t y = 0; y < 4; ++y) bad += std::memcmp(&pitched[y * 64], &model_a[(3 + y) * row + 13], 21) != 0;
    EXPECT_EQ(bad, 0);

    // Bad input.
    EXPECT_ERR(hipMemcpy2DToArray(a, 140, 0, src.data(), 1000, 9, 1, hipMemcpyHostToDevice),
               hipErrorInvalidValue);  // past the row
    EXPECT_ERR(hipMemcpy2DToArray(a, 0, 8, src.data(), 1000, 4, 4, hipMemcpyHostToDevice),
               hipErrorInvalidValue);  // past the last row
    EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, src.data(), 10, 20, 2, hipMemcpyHostToDevice),
               hipErrorInvalidPitchValue);
    EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, src.data(), 1000, 4, 1, hipMemcpyDeviceToHost),
               hipErrorInvalidValue);  // the kind puts the array on the host
    EXPECT_ERR(hipMemcpy2DToArray(nullptr, 0, 0, src.data(), 1000, 4, 1, hipMemcpyHostToDevice),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyAtoH(part.data(), b, row * H - 10, 11), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyToArray(a, 0, 0, src.data(), 4, (hipMemcpyKind)9),
               hipErrorInvalidMemcpyDirection);
    CHECK(hipFree(dev));
    CHECK(hipFreeArray(a));
    CHECK(hipArrayDestroy(b));
    EXPECT_ERR(hipFreeArray(a), hipErrorContextIsDestroyed);  // ROCm 5/6: AMD answers a dead array so
    EXPECT_ERR(hipMemcpyAtoH(part.data(), b, 0, 4), hipErrorInvalidHandle);
    EXPECT_ERR(hipFreeArray(reinterpret_cast<hipArray_t>(src.data())), hipErrorContextIsDestroyed);
    EXPECT_ERR(hipFreeArray(nullptr), hipErrorInvalidValue);
}

static void round_trip_3d() {
    // int2 elements (8 bytes), 13 x 5 x 4, through hipMemcpy3D sub-boxes.
    const size_t W = 13, H = 5, D = 4, E = 8;
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 32, 0, 0, hipChannelFormatKindSigned);
    hipArray_t a = nullptr, b = nullptr;
    CHECK(hipMalloc3DArray(&a, &desc, make_hipExtent(W, H, D), hipArrayDefault));
    HIP_ARRAY3D_DESCRIPTOR d3 = {};
    d3.Width = W; d3.Height = H; d3.Depth = D;
    d3.Format = HIP_AD_FORMAT_SIGNED_INT32; d3.NumChannels = 2;
    CHECK(hipArray3DCreate(&b, &d3));
    std::vector<unsigned char> host(W * E * H * D), back(W * E * H * D, 0);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (unsigned char)(i * 13 + 1);
    hipMemcpy3DParms p = {};
    p.srcPtr = make_hipPitchedPtr(host.data(), W * E, W, H);
    p.dstArray = a;
    p.extent = make_hipExtent(W, H, D);
    p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    // a -> b: a sub-box 6 x 3 x 2 from (5, 1, 1) to (2, 2, 0).
    std::vector<unsigned char> zero(host.size(), 0);
    p = {};
    p.srcPtr = make_hipPitchedPtr(zero.data(), W * E, W, H);
    p.dstArray = b; p.extent = make_hipExtent(W, H, D); p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    p = {};
    p.srcArray = a; p.srcPos = make_hipPos(5, 1, 1);
    p.dstArray = b; p.dstPos = make_hipPos(2, 2, 0);
    p.extent = make_hipExtent(6, 3, 2); p.kind = hipMemcpyDefault;
    CHECK(hipMemcpy3D(&p));
    p = {};
    p.srcArray = b; p.dstPtr = make_hipPitchedPtr(back.data(), W * E, W, H);
    p.extent = make_hipExtent(W, H, D); p.kind = hipMemcpyDeviceToHost;
    CHECK(hipMemcpy3D(&p));
    int bad = 0;
    for (size_t z = 0; z < D; ++z)
        for (size_t y = 0; y < H; ++y)
            for (size_t x = 0; x < W * E; ++x) {
                size_t xe = x / E;
                bool in = xe >= 2 && xe < 8 && y >= 2 && y < 5 && z < 2;
                unsigned char want = in ? host[((z + 1) * H + (y - 1)) * W * E + (xe + 3) * E + x % E] : 0;
                bad += back[(z * H + y) * W * E + x] != want;
            }
    EXPECT_EQ(bad, 0);
    // Descriptors and info.
    HIP_ARRAY3D_DESCRIPTOR got3 = {};
    CHECK(hipArray3DGetDescriptor(&got3, a));
    EXPECT_EQ(got3.Width, W); EXPECT_EQ(got3.Height, H); EXPECT_EQ(got3.Depth, D);
    EXPECT_EQ(got3.Format, HIP_AD_FORMAT_SIGNED_INT32); EXPECT_EQ(got3.NumChannels, 2);
    HIP_ARRAY_DESCRIPTOR got2 = {};
    EXPECT_ERR(hipArrayGetDescriptor(&got2, a), hipErrorInvalidValue);  // 3D
    hipChannelFormatDesc cd = {};
    hipExtent ext = {};
    unsigned flags = 99;
    CHECK(hipArrayGetInfo(&cd, &ext, &flags, b));
    EXPECT_EQ(cd.x, 32); EXPECT_EQ(cd.y, 32); EXPECT_EQ(cd.z, 0); EXPECT_EQ(cd.f, hipChannelFormatKindSigned);
    EXPECT_EQ(ext.width, W); EXPECT_EQ(ext.depth, D); EXPECT_EQ(flags, 0);
    CHECK(hipGetChannelDesc(&cd, a));
    EXPECT_EQ(cd.y, 32);
    // Boxes outside the arrays, and both or neither of array and pointer.
    p = {};
    p.srcArray = a; p.dstArray = b; p.kind = hipMemcpyDefault;
    p.extent = make_hipExtent(W, H, D + 1);
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
    p.extent = make_hipExtent(W, H, D); p.srcPos = make_hipPos(1, 0, 0);
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
    p.srcPos = make_hipPos(0, 0, 0);
    p.srcPtr = make_hipPitchedPtr(host.data(), W * E, W, H);
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
    p.srcPtr = make_hipPitchedPtr(nullptr, 0, 0, 0); p.srcArray = nullptr;
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy3D(nullptr), hipErrorInvalidValue);
    p.srcArray = a; p.extent = make_hipExtent(0, H, D);
    EXPECT_OK(hipMemcpy3D(&p));  // empty box
    CHECK(hipFreeArray(a));
    CHECK(hipFreeArray(b));
}

static void creation_rules() {
    hipArray_t a = nullptr;
    hipChannelFormatDesc f4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat);
    EXPECT_ERR(hipMallocArray(nullptr, &f4, 16, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocArray(&a, nullptr, 16, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocArray(&a, &f4, 0, 16), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocArray(&a, &f4, 1024, 0, hipArrayLayered), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocArray(&a, &f4, 1024, 1024, hipArrayCubemap), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocArray(&a, &f4, 16385, 1), hipErrorInvalidValue);
    hipChannelFormatDesc bad[] = {
        hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindFloat),
        hipCreateChannelDesc(32, 32, 32, 0, hipChannelFormatKindSigned),
        hipCreateChannelDesc(8, 16, 0, 0, hipChannelFormatKindUnsigned),
        hipCreateChannelDesc(0, 8, 0, 0, hipChannelFormatKindUnsigned),
        hipCreateChannelDesc(10, 0, 0, 0, hipChannelFormatKindSigned),
        hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindNone),
    };
    for (const hipChannelFormatDesc& d : bad) EXPECT_ERR(hipMallocArray(&a, &d, 16, 16), hipErrorInvalidValue);
    EXPECT_ERR(hipMalloc3DArray(&a, &f4, make_hipExtent(6, 6, 6), 0xDEADBEEF), hipErrorInvalidValue);
    EXPECT_ERR(hipMalloc3DArray(&a, &f4, make_hipExtent(6, 5, 6), hipArrayCubemap), hipErrorInvalidValue);
    // A cubemap, a layered 1D array, a driver-API 2D array with its descriptor.
    CHECK(hipMalloc3DArray(&a, &f4, make_hipExtent(6, 6, 6), hipArrayCubemap));
    unsigned flags = 0;
    CHECK(hipArrayGetInfo(nullptr, nullptr, &flags, a));
    EXPECT_EQ(flags, hipArrayCubemap);
    CHECK(hipFreeArray(a));
    CHECK(hipMalloc3DArray(&a, &f4, make_hipExtent(100, 0, 3), hipArrayLayered));
    CHECK(hipFreeArray(a));
    HIP_ARRAY_DESCRIPTOR d2 = {};
    d2.Width = 33; d2.Height = 2; d2.Format = HIP_AD_FORMAT_HALF; d2.NumChannels = 4;
    CHECK(hipArrayCreate(&a, &d2));
    HIP_ARRAY_DESCRIPTOR got = {};
    CHECK(hipArrayGetDescriptor(&got, a));
    EXPECT_EQ(got.Width, 33); EXPECT_EQ(got.Height, 2);
    EXPECT_EQ(got.Format, HIP_AD_FORMAT_HALF); EXPECT_EQ(got.NumChannels, 4);
    EXPECT_TRUE(reinterpret_cast<const HipArrayV5*>(a)->isDrv);
    CHECK(hipArrayDestroy(a));
    d2.NumChannels = 3;
    EXPECT_ERR(hipArrayCreate(&a, &d2), hipErrorInvalidValue);
    d2.NumChannels = 1; d2.Format = (hipArray_Format)0x77;
    EXPECT_ERR(hipArrayCreate(&a, &d2), hipErrorInvalidValue);
    EXPECT_ERR(hipArrayCreate(&a, nullptr), hipErrorInvalidValue);
}

static void mipmaps() {
    hipChannelFormatDesc f = float_desc();
    hipMipmappedArray_t m = nullptr;
    CHECK(hipMallocMipmappedArray(&m, &f, make_hipExtent(37, 20, 0), 6, 0));
    const size_t widths[] = {37, 18, 9, 4, 2, 1}, heights[] = {20, 10, 5, 2, 1, 1};
    for (unsigned i = 0; i < 6; ++i) {
        hipArray_t level = nullptr;
        CHECK(hipGetMipmappedArrayLevel(&level, m, i));
        hipExtent e = {};
        CHECK(hipArrayGetInfo(nullptr, &e, nullptr, level));
        EXPECT_EQ(e.width, widths[i]);
        EXPECT_EQ(e.height, heights[i]);
        // Each level holds data.
        std::vector<float> v(widths[i] * heights[i], 1.5f * i), w(v.size(), 0);
        CHECK(hipMemcpy2DToArray(level, 0, 0, v.data(), widths[i] * 4, widths[i] * 4, heights[i], hipMemcpyHostToDevice));
        CHECK(hipMemcpy2DFromArray(w.data(), widths[i] * 4, level, 0, 0, widths[i] * 4, heights[i], hipMemcpyDeviceToHost));
        EXPECT_TRUE(v == w);
        if (i == 2) EXPECT_ERR(hipFreeArray(level), hipErrorInvalidValue);  // goes with its owner
    }
    hipArray_t level = nullptr;
    EXPECT_ERR(hipGetMipmappedArrayLevel(&level, m, 6), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocMipmappedArray(&m, &f, make_hipExtent(37, 20, 0), 7, 0), hipErrorInvalidValue);
    CHECK(hipFreeMipmappedArray(m));
    EXPECT_ERR(hipFreeMipmappedArray(m), hipErrorInvalidHandle);
    HIP_ARRAY3D_DESCRIPTOR d = {};
    d.Width = 8; d.Height = 8; d.Depth = 8; d.Format = HIP_AD_FORMAT_UNSIGNED_INT8; d.NumChannels = 1;
    CHECK(hipMipmappedArrayCreate(&m, &d, 4));
    CHECK(hipMipmappedArrayGetLevel(&level, m, 3));
    HIP_ARRAY3D_DESCRIPTOR got = {};
    CHECK(hipArray3DGetDescriptor(&got, level));
    EXPECT_EQ(got.Width, 1); EXPECT_EQ(got.Height, 1); EXPECT_EQ(got.Depth, 1);
    CHECK(hipMipmappedArrayDestroy(m));
}

int main() {
    // Image instructions (textures, surfaces) on gfx90a, none on gfx94x.
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, 0));
    int image = -1;
    CHECK(hipDeviceGetAttribute(&image, hipDeviceAttributeImageSupport, 0));
    EXPECT_EQ(image, strncmp(prop.gcnArchName, "gfx94", 5) == 0 ? 0 : 1);
    // The texture limits are the array limits: an array at each is made, one past is refused.
    int w1 = 0, w3 = 0;
    CHECK(hipDeviceGetAttribute(&w1, hipDeviceAttributeMaxTexture1DWidth, 0));
    CHECK(hipDeviceGetAttribute(&w3, hipDeviceAttributeMaxTexture3DDepth, 0));
    EXPECT_EQ(w1, prop.maxTexture1D);
    EXPECT_EQ(w3, prop.maxTexture3D[2]);
    EXPECT_TRUE(prop.maxTexture1D > 0 && prop.maxTexture2D[1] > 0);
    {
        hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
        hipArray_t a;
        CHECK(hipMallocArray(&a, &f, prop.maxTexture1D, 0, 0));
        CHECK(hipFreeArray(a));
        EXPECT_ERR(hipMallocArray(&a, &f, prop.maxTexture1D + 1, 0, 0), hipErrorInvalidValue);
        CHECK(hipMalloc3DArray(&a, &f, make_hipExtent(4, 4, prop.maxTexture3D[2]), 0));
        CHECK(hipFreeArray(a));
    }
    round_trip_2d();
    round_trip_3d();
    creation_rules();
    mipmaps();
    return finish("array_copies");
}
