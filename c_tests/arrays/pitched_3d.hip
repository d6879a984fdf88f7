// pitched_3d: pitched 3D memory, 3D/driver-API copies and 2D/3D fills.
// - hipMalloc3D's pitch; hipMemcpy3D between host and pitched device memory with sub-box
//   positions on both sides (slices copied one by one and merged);
// - hipMemset3D and hipMemset3DAsync of a sub-box, hipMemset2DAsync, hipMemsetD2D8/16/32
//   (+Async), each checked byte for byte against a model;
// - hipMemcpyParam2D and hipDrvMemcpy3D(Async) with host, device and array sides;
// - stream order on a non-default stream: an async copy into an array, a kernel reading the
//   array's linear memory (ROCm 5.2's public data field, the documented pitch), a copy out of
//   the array after a kernel that writes it; the kernels are slow, so a copy that did not wait
//   would see stale bytes;
// - bad input: pitches, out-of-range boxes, null pointers.
#include "../check.h"

#include <cstring>
#include <vector>

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

// out[y * W + x] = 2 * array[y][x] + 1 after a slow dependent loop (`zero` is 0 at run time).
__global__ void read_array(const unsigned char* data, size_t pitch, int W, int H, int* out,
                           int rounds, unsigned zero) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W || y >= H) return;
    unsigned s = x;
    for (int k = 0; k < rounds; ++k) s = s * 1664525u + 1013904223u;
    const int* row = reinterpret_cast<const int*>(data + y * pitch);
    out[y * W + x] = 2 * row[x] + 1 + (int)(s & zero);
}

// array[y][x] = base + y * W + x, slowly.
__global__ void write_array(unsigned char* data, size_t pitch, int W, int H, int base, int rounds,
                            unsigned zero) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W || y >= H) return;
    unsigned s = x;
    for (int k = 0; k < rounds; ++k) s = s * 1664525u + 1013904223u;
    reinterpret_cast<int*>(data + y * pitch)[x] = base + y * W + x + (int)(s & zero);
}

static void copies_3d() {
    const size_t W = 100, H = 7, D = 5;  // bytes, rows, slices
    hipPitchedPtr dev = {};
    CHECK(hipMalloc3D(&dev, make_hipExtent(W, H, D)));
    EXPECT_EQ(dev.pitch, 256);
    EXPECT_EQ(dev.xsize, W);
    EXPECT_EQ(dev.ysize, H);
    std::vector<unsigned char> host(W * H * D), model(dev.pitch * H * D, 0), back(W * H * D);
    for (size_t i = 0; i < host.size(); ++i) host[i] = (unsigned char)(i * 31 + 7);
    CHECK(hipMemset3D(dev, 0, make_hipExtent(W, H, D)));
    // host box 40 x 3 x 2 at (10, 2, 1) -> device at (50, 3, 2).
    hipMemcpy3DParms p = {};
    p.srcPtr = make_hipPitchedPtr(host.data(), W, W, H);
    p.srcPos = make_hipPos(10, 2, 1);
    p.dstPtr = dev;
    p.dstPos = make_hipPos(50, 3, 2);
    p.extent = make_hipExtent(40, 3, 2);
    p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    for (size_t z = 0; z < 2; ++z)
        for (size_t y = 0; y < 3; ++y)
            std::memcpy(&model[((2 + z) * H + 3 + y) * dev.pitch + 50], &host[((1 + z) * H + 2 + y) * W + 10], 40);
    // A fill of a sub-box (slices apart: one fill per slice), and the whole last slice.
    hipPitchedPtr sub = dev;
    sub.ptr = (char*)dev.ptr + 1 * dev.pitch + 5;
    CHECK(hipMemset3D(sub, 0xab, make_hipExtent(9, 2, 3)));
    for (size_t z = 0; z < 3; ++z)
        for (size_t y = 0; y < 2; ++y) std::memset(&model[(z * H + 1 + y) * dev.pitch + 5], 0xab, 9);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipPitchedPtr last = dev;
    last.ptr = (char*)dev.ptr + 4 * H * dev.pitch;
    CHECK(hipMemset3DAsync(last, 0x5c, make_hipExtent(W, H, 1), s));
    for (size_t y = 0; y < H; ++y) std::memset(&model[(4 * H + y) * dev.pitch], 0x5c, W);
    // Everything back (merged slices: the box is the whole allocation's rows).
    std::vector<unsigned char> all(dev.pitch * H * D, 0xee);
    p = {};
    p.srcPtr = dev;
    p.dstPtr = make_hipPitchedPtr(all.data(), dev.pitch, W, H);
    p.extent = make_hipExtent(W, H, D);
    p.kind = hipMemcpyDefault;
    CHECK(hipMemcpy3DAsync(&p, s));
    CHECK(hipStreamSynchronize(s));
    int bad = 0;
    for (size_t r = 0; r < H * D; ++r) bad += std::memcmp(&all[r * dev.pitch], &model[r * dev.pitch], W) != 0;
    EXPECT_EQ(bad, 0);

    // hipMemset2DAsync and hipMemsetD2D*: rows of the first slice.
    CHECK(hipMemset2DAsync((char*)dev.ptr + 3, dev.pitch, 0x11, 17, 4, s));
    for (size_t y = 0; y < 4; ++y) std::memset(&model[y * dev.pitch + 3], 0x11, 17);
    CHECK(hipMemsetD2D16Async((char*)dev.ptr + 2 * dev.pitch + 40, dev.pitch, 0xbeef, 5, 2, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemsetD2D32((char*)dev.ptr + 5 * dev.pitch + 60, dev.pitch, 0x01020304u, 6, 2));
    CHECK(hipMemsetD2D8((char*)dev.ptr + 4 * dev.pitch + 90, dev.pitch, 0x77, 10, 3));
    for (size_t y = 0; y < 2; ++y)
        for (size_t i = 0; i < 5; ++i) {
            model[(2 + y) * dev.pitch + 40 + 2 * i] = 0xef;
            model[(2 + y) * dev.pitch + 41 + 2 * i] = 0xbe;
        }
    for (size_t y = 0; y < 2; ++y)
        for (size_t i = 0; i < 24; ++i) model[(5 + y) * dev.pitch + 60 + i] = (unsigned char)(4 - i % 4);
    for (size_t y = 0; y < 3; ++y) std::memset(&model[(4 + y) * dev.pitch + 90], 0x77, 10);
    // Back through hipMemcpyParam2D (ROCm 6 memory types), the first slice.
    hip_Memcpy2D c2 = {};
    c2.srcMemoryType = hipMemoryTypeDevice;
    c2.srcDevice = dev.ptr;
    c2.srcPitch = dev.pitch;
    c2.dstMemoryType = hipMemoryTypeHost;
    c2.dstHost = all.data();
    c2.dstPitch = dev.pitch;
    c2.WidthInBytes = W;
    c2.Height = H;
    CHECK(hipMemcpyParam2D(&c2));
    bad = 0;
    for (size_t r = 0; r < H; ++r) bad += std::memcmp(&all[r * dev.pitch], &model[r * dev.pitch], W) != 0;
    EXPECT_EQ(bad, 0);

    // Bad input.
    p = {};
    p.srcPtr = make_hipPitchedPtr(host.data(), W, W, H);
    p.dstPtr = dev;
    p.kind = hipMemcpyHostToDevice;
    p.extent = make_hipExtent(W, H, D + 1);
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);  // past the device allocation
    p.extent = make_hipExtent(W, H, 2);
    p.srcPtr.pitch = 50;
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidPitchValue);
    p.srcPtr.pitch = W;
    p.srcPtr.ysize = 3;
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);  // slices shorter than the box
    p.srcPtr.ysize = H;
    p.kind = (hipMemcpyKind)7;
    EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidMemcpyDirection);
    EXPECT_ERR(hipMemset3D(dev, 0, make_hipExtent(dev.pitch + 1, 2, 1)), hipErrorInvalidValue);
    hipPitchedPtr nul = dev;
    nul.ptr = nullptr;
    EXPECT_ERR(hipMemset3D(nul, 0, make_hipExtent(4, 4, 4)), hipErrorInvalidValue);
    EXPECT_ERR(hipMemset3D(dev, 0, make_hipExtent(W, H, D + 1)), hipErrorInvalidValue);
    // 2D fills with rows wider than their pitch: hipErrorInvalidValue, as for 3D ones (AMD).
    EXPECT_ERR(hipMemset2DAsync(dev.ptr, 8, 0, 16, 2, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemset2D(dev.ptr, 1, 0, 16, 2), hipErrorInvalidValue);
    EXPECT_ERR(hipMemsetD2D32(dev.ptr, 8, 0, 4, 2), hipErrorInvalidValue);
    EXPECT_ERR(hipMalloc3D(nullptr, make_hipExtent(1, 1, 1)), hipErrorInvalidValue);
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dev.ptr));
}

static void ordered_with_kernels() {
    const int W = 45, H = 9;
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
    hipArray_t a = nullptr;
    CHECK(hipMallocArray(&a, &desc, W, H));
    const HipArrayV5* pub = reinterpret_cast<const HipArrayV5*>(a);
    const size_t pitch = pitch_of(W * 4);
    int *pinned = nullptr, *out = nullptr;
    CHECK(hipHostMalloc((void**)&pinned, W * H * 4));
    CHECK(hipMalloc((void**)&out, W * H * 4));
    for (int i = 0; i < W * H; ++i) pinned[i] = 1000 + i;
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    // The array is written by a slow kernel, then copied out and overwritten by a copy in: the
    // copy out must see the kernel's values, the next kernel the copied-in ones.
    dim3 grid((W + 63) / 64, H);
    hipLaunchKernelGGL(write_array, grid, dim3(64), 0, s, (unsigned char*)pub->data, pitch, W, H, 500, 100000, 0u);
    std::vector<int> seen(W * H, 0);
    int* seen_pinned = nullptr;
    CHECK(hipHostMalloc((void**)&seen_pinned, W * H * 4));
    CHECK(hipMemcpy2DFromArrayAsync(seen_pinned, W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost, s));
    CHECK(hipMemcpy2DToArrayAsync(a, 0, 0, pinned, W * 4, W * 4, H, hipMemcpyHostToDevice, s));
    hipLaunchKernelGGL(read_array, grid, dim3(64), 0, s, (const unsigned char*)pub->data, pitch, W, H, out, 100000, 0u);
    // The driver-API 3D copy on the stream: the kernel's output into the array, then
    // AtoH on the stream too.
    HIP_MEMCPY3D d = {};
    d.srcMemoryType = hipMemoryTypeDevice;
    d.srcDevice = out;
    d.srcPitch = W * 4;
    d.srcHeight = H;
    d.dstMemoryType = hipMemoryTypeArray;
    d.dstArray = a;
    d.WidthInBytes = W * 4;
    d.Height = H;
    d.Depth = 1;
    CHECK(hipDrvMemcpy3DAsync(&d, s));
    int* final_pinned = nullptr;
    CHECK(hipHostMalloc((void**)&final_pinned, W * H * 4));
    CHECK(hipMemcpyAtoHAsync(final_pinned, a, 0, W * H * 4, s));
    CHECK(hipStreamSynchronize(s));
    int bad_seen = 0, bad_final = 0;
    for (int i = 0; i < W * H; ++i) {
        bad_seen += seen_pinned[i] != 500 + i;
        bad_final += final_pinned[i] != 2 * (1000 + i) + 1;
    }
    EXPECT_EQ(bad_seen, 0);
    EXPECT_EQ(bad_final, 0);
    // hipDrvMemcpy3D synchronously, array to host with a position.
    std::vector<int> row(10, 0);
    HIP_MEMCPY3D back = {};
    back.srcMemoryType = hipMemoryTypeArray;
    back.srcArray = a;
    back.srcXInBytes = 4 * 3;
    back.srcY = 2;
    back.dstMemoryType = hipMemoryTypeHost;
    back.dstHost = row.data();
    back.dstPitch = 40;
    back.WidthInBytes = 40;
    back.Height = 1;
    back.Depth = 1;
    CHECK(hipDrvMemcpy3D(&back));
    int bad = 0;
    for (int i = 0; i < 10; ++i) bad += row[i] != 2 * (1000 + 2 * W + 3 + i) + 1;
    EXPECT_EQ(bad, 0);
    back.srcXInBytes = W * 4 - 8;
    EXPECT_ERR(hipDrvMemcpy3D(&back), hipErrorInvalidValue);  // past the row
    back.srcXInBytes = 0;
    back.srcLOD = 1;
    EXPECT_ERR(hipDrvMemcpy3D(&back), hipErrorInvalidValue);
    CHECK(hipStreamDestroy(s));
    CHECK(hipFreeArray(a));
    CHECK(hipHostFree(pinned));
    CHECK(hipHostFree(seen_pinned));
    CHECK(hipHostFree(final_pinned));
    CHECK(hipFree(out));
}

int main() {
    copies_3d();
    ordered_with_kernels();
    return finish("pitched_3d");
}
