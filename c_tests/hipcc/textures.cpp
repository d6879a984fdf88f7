// Built by Debian's hipcc (AMD's ROCm 5.2 headers, gfx90a): texture and surface objects.
//
// `textures` (a device with image instructions): 1D, 2D, 3D and 2D-layered array textures of
// 8/16/32-bit integer, half and float formats with 1, 2 and 4 channels, read with point
// sampling at unnormalized and normalized coordinates and checked texel by texel against the
// host's data; linear filtering of a float texture; wrap, clamp and border addressing;
// 8/16-bit integers read as normalized floats; a pitch2D texture; tex1Dfetch of linear
// memory (within and past its end, as elements and as normalized floats); a single-level
// mipmapped array; the driver API's hipTexObjectCreate; a surface written by one kernel and read by
// another and by a copy; the getters returning what was passed; and the errors (destroy
// twice, a garbage handle, bad descriptors and resources).
// `textures no-images` (a device without them): the attribute says 0 and every call answers
// hipErrorNotSupported.
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

static int failures = 0;

#define CHECK(call)                                                                       \
    do {                                                                                  \
        hipError_t e_ = (call);                                                           \
        if (e_ != hipSuccess) {                                                           \
            printf("FAILED %s:%d %s -> %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define EXPECT(cond, ...)                        \
    do {                                         \
        if (!(cond)) {                           \
            printf("FAILED line %d: ", __LINE__); \
            printf(__VA_ARGS__);                 \
            printf("\n");                        \
            ++failures;                          \
        }                                        \
    } while (0)

#define EXPECT_ERR(call, code)                                                             \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        EXPECT(e_ == (code), "%s -> %s, expected %s", #call, hipGetErrorName(e_),          \
               hipGetErrorName(code));                                                     \
    } while (0)

// ---- element types ------------------------------------------------------------------------

template <typename T> struct Info;
#define SCALAR(T, N)                                  \
    template <> struct Info<T> {                      \
        typedef T Scalar;                             \
        static const int channels = 1;                \
        static const char* name() { return N; }       \
    };
#define VECTOR(T, S, C, N)                            \
    template <> struct Info<T> {                      \
        typedef S Scalar;                             \
        static const int channels = C;                \
        static const char* name() { return N; }       \
    };
SCALAR(char, "char")
SCALAR(unsigned char, "uchar")
SCALAR(short, "short")
SCALAR(unsigned short, "ushort")
SCALAR(int, "int")
SCALAR(unsigned int, "uint")
SCALAR(float, "float")
VECTOR(char4, char, 4, "char4")
VECTOR(uchar2, unsigned char, 2, "uchar2")
VECTOR(short2, short, 2, "short2")
VECTOR(ushort4, unsigned short, 4, "ushort4")
VECTOR(int2, int, 2, "int2")
VECTOR(uint4, unsigned int, 4, "uint4")
VECTOR(float2, float, 2, "float2")
VECTOR(float4, float, 4, "float4")

// Channel c of element i: small enough for every type, distinct across neighbours.
template <typename T> static std::vector<T> pattern(size_t n) {
    typedef typename Info<T>::Scalar S;
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
        S* s = reinterpret_cast<S*>(&v[i]);
        for (int c = 0; c < Info<T>::channels; ++c) {
            long x = (long)((i * Info<T>::channels + c) % 113);
            s[c] = (S)(std::is_signed<S>::value && (i & 1) ? -x : x);
        }
    }
    return v;
}

// ---- kernels --------------------------------------------------------------------------------

// Texel (x, y, z) through the texture at its centre, unnormalized or normalized.
template <typename T>
__global__ void read_tex(T* out, hipTextureObject_t t, int dims, int w, int h, int d, int norm,
                         int layered) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    int z = blockIdx.z;
    if (x >= w) return;
    float u = x + 0.5f, v = y + 0.5f, s = z + 0.5f;
    if (norm) {
        u /= w;
        v /= h;
        s /= d;
    }
    T r;
    if (layered)
        r = tex2DLayered<T>(t, u, v, z);
    else if (dims == 1)
        r = tex1D<T>(t, u);
    else if (dims == 2)
        r = tex2D<T>(t, u, v);
    else
        r = tex3D<T>(t, u, v, s);
    out[((size_t)z * h + y) * w + x] = r;
}

// One 1D sample per thread at coords[i].
__global__ void sample_1d(float* out, hipTextureObject_t t, const float* coords, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, coords[i]);
}

__global__ void sample_2d(float* out, hipTextureObject_t t, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < w) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void surface_write(hipSurfaceObject_t s, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < w) surf2Dwrite(1000.0f * y + x + 0.25f, s, x * (int)sizeof(float), y);
}

__global__ void surface_read(float* out, hipSurfaceObject_t s, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    float v;
    if (x < w) {
        surf2Dread(&v, s, x * (int)sizeof(float), y);
        out[y * w + x] = v * 2.0f;
    }
}

template <typename T>
__global__ void fetch_linear(T* out, hipTextureObject_t t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<T>(t, i);
}

__global__ void fetch_linear_float(float* out, hipTextureObject_t t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

// ---- helpers --------------------------------------------------------------------------------

// A resource over a whole array, and one over `bytes` of linear device memory.
static hipResourceDesc array_resource(hipArray_t a) {
    hipResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = hipResourceTypeArray;
    res.res.array.array = a;
    return res;
}

static hipResourceDesc linear_resource(void* mem, hipChannelFormatDesc desc, size_t bytes) {
    hipResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = hipResourceTypeLinear;
    res.res.linear.devPtr = mem;
    res.res.linear.desc = desc;
    res.res.linear.sizeInBytes = bytes;
    return res;
}

static hipTextureObject_t texture_of_array(hipArray_t a, int norm, hipTextureFilterMode filter,
                                           hipTextureAddressMode mode,
                                           hipTextureReadMode read = hipReadModeElementType) {
    hipResourceDesc res = array_resource(a);
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = mode;
    td.filterMode = filter;
    td.readMode = read;
    td.normalizedCoords = norm;
    hipTextureObject_t t = nullptr;
    CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

static void fill_array(hipArray_t a, const void* host, size_t row, size_t h, size_t d, size_t w) {
    hipMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = make_hipPitchedPtr((void*)host, row, w, h);
    p.dstArray = a;
    p.extent = make_hipExtent(w, h, d);
    p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
}

// An array of T (height 0: 1D; depth 0: 2D), filled with the pattern, read back through a
// texture texel by texel.
template <typename T> static void array_round_trip(int w, int h, int d, int norm, int layered) {
    int dims = h == 0 ? 1 : d == 0 ? 2 : 3;
    int hh = h ? h : 1, dd = d ? d : 1;
    size_t n = (size_t)w * hh * dd;
    std::vector<T> host = pattern<T>(n);
    hipChannelFormatDesc desc = hipCreateChannelDesc<T>();
    hipArray_t a = nullptr;
    CHECK(hipMalloc3DArray(&a, &desc, make_hipExtent(w, h, d),
                           layered ? hipArrayLayered : hipArrayDefault));
    fill_array(a, host.data(), w * sizeof(T), hh, dd, w);
    hipTextureObject_t t = texture_of_array(a, norm, hipFilterModePoint, hipAddressModeClamp);
    T* out = nullptr;
    CHECK(hipMalloc(&out, n * sizeof(T)));
    CHECK(hipMemset(out, 0xee, n * sizeof(T)));
    hipLaunchKernelGGL(read_tex<T>, dim3((w + 63) / 64, hh, dd), dim3(64), 0, 0, out, t, dims, w,
                       hh, dd, norm, layered);
    CHECK(hipGetLastError());
    std::vector<T> back(n);
    CHECK(hipMemcpy(back.data(), out, n * sizeof(T), hipMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (memcmp(&back[i], &host[i], sizeof(T)) != 0 && bad++ == 0) first = i;
    EXPECT(bad == 0, "%s %dD%s %dx%dx%d %s: %zu texels differ, first at %zu", Info<T>::name(),
           dims, layered ? " layered" : "", w, h, d, norm ? "normalized" : "unnormalized", bad,
           first);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFreeArray(a));
}

template <typename T> static void every_shape() {
    array_round_trip<T>(67, 0, 0, 0, 0);
    array_round_trip<T>(64, 0, 0, 1, 0);
    array_round_trip<T>(37, 5, 0, 0, 0);
    array_round_trip<T>(32, 8, 0, 1, 0);
    array_round_trip<T>(19, 3, 4, 0, 0);
}

// ---- the cases ------------------------------------------------------------------------------

static void linear_filtering_and_addressing() {
    const int w = 16;
    std::vector<float> host(w);
    for (int i = 0; i < w; ++i) host[i] = 10.0f * i * i;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipArray_t a = nullptr;
    CHECK(hipMallocArray(&a, &desc, w, 0, hipArrayDefault));
    CHECK(hipMemcpy2DToArray(a, 0, 0, host.data(), w * 4, w * 4, 1, hipMemcpyHostToDevice));

    // Unnormalized, linear: x + 0.75 mixes texels x (3/4) and x + 1 (1/4).
    const int n = 8;
    float coords[n], want[n];
    for (int i = 0; i < n; ++i) {
        coords[i] = 2 * i + 0.75f;
        want[i] = 0.75f * host[2 * i] + 0.25f * host[2 * i + 1];
    }
    float *dc, *out;
    CHECK(hipMalloc(&dc, sizeof(coords)));
    CHECK(hipMalloc(&out, sizeof(coords)));
    float got[n];
    auto run = [&](hipTextureObject_t t) {
        CHECK(hipMemcpy(dc, coords, sizeof(coords), hipMemcpyHostToDevice));
        hipLaunchKernelGGL(sample_1d, dim3(1), dim3(64), 0, 0, out, t, dc, n);
        CHECK(hipMemcpy(got, out, sizeof(got), hipMemcpyDeviceToHost));
        CHECK(hipDestroyTextureObject(t));
    };
    run(texture_of_array(a, 0, hipFilterModeLinear, hipAddressModeClamp));
    for (int i = 0; i < n; ++i)
        EXPECT(got[i] == want[i], "linear sample %d at %g: %g, expected %g", i, coords[i],
               got[i], want[i]);

    // Normalized, point: one past the end wraps to the start, clamps to the last texel, or
    // reads the border (transparent black).
    for (int i = 0; i < n; ++i) coords[i] = (i + 0.5f) / w + 1.0f;
    run(texture_of_array(a, 1, hipFilterModePoint, hipAddressModeWrap));
    for (int i = 0; i < n; ++i)
        EXPECT(got[i] == host[i], "wrap sample %d: %g, expected %g", i, got[i], host[i]);
    run(texture_of_array(a, 1, hipFilterModePoint, hipAddressModeClamp));
    for (int i = 0; i < n; ++i)
        EXPECT(got[i] == host[w - 1], "clamp sample %d: %g, expected %g", i, got[i], host[w - 1]);
    run(texture_of_array(a, 1, hipFilterModePoint, hipAddressModeBorder));
    for (int i = 0; i < n; ++i) EXPECT(got[i] == 0.0f, "border sample %d: %g", i, got[i]);
    CHECK(hipFree(dc));
    CHECK(hipFree(out));
    CHECK(hipFreeArray(a));
}

// 8- and 16-bit integers read as floats in [0, 1] or [-1, 1]; half read as float.
template <typename S>
static void normalized_float(hipTextureReadMode read, float scale, const char* name) {
    const int w = 40, h = 3;
    std::vector<S> host(w * h);
    for (int i = 0; i < w * h; ++i)
        host[i] = std::is_signed<S>::value ? (S)(i * 7 - 150) : (S)(i * 13);
    hipChannelFormatDesc desc = hipCreateChannelDesc<S>();
    hipArray_t a = nullptr;
    CHECK(hipMallocArray(&a, &desc, w, h, hipArrayDefault));
    CHECK(hipMemcpy2DToArray(a, 0, 0, host.data(), w * sizeof(S), w * sizeof(S), h,
                             hipMemcpyHostToDevice));
    hipTextureObject_t t = texture_of_array(a, 0, hipFilterModePoint, hipAddressModeClamp, read);
    float* out;
    CHECK(hipMalloc(&out, w * h * 4));
    hipLaunchKernelGGL(sample_2d, dim3(1, h), dim3(64), 0, 0, out, t, w, h);
    std::vector<float> got(w * h);
    CHECK(hipMemcpy(got.data(), out, w * h * 4, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < w * h; ++i) {
        float want = fmaxf((float)host[i] / scale, -1.0f);
        if (got[i] != want && bad++ == 0)
            printf("%s texel %d: %g, expected %g\n", name, i, got[i], want);
    }
    EXPECT(bad == 0, "%s read as normalized float: %d texels differ", name, bad);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFreeArray(a));
}

static void half_texture() {
    const int w = 24;
    std::vector<__half> host(w);
    for (int i = 0; i < w; ++i) host[i] = __float2half(i * 0.5f - 3.0f);
    hipChannelFormatDesc desc = hipCreateChannelDescHalf();
    hipArray_t a = nullptr;
    CHECK(hipMallocArray(&a, &desc, w, 1, hipArrayDefault));
    CHECK(hipMemcpy2DToArray(a, 0, 0, host.data(), w * 2, w * 2, 1, hipMemcpyHostToDevice));
    hipTextureObject_t t = texture_of_array(a, 0, hipFilterModePoint, hipAddressModeClamp);
    float* out;
    CHECK(hipMalloc(&out, w * 4));
    hipLaunchKernelGGL(sample_2d, dim3(1, 1), dim3(64), 0, 0, out, t, w, 1);
    std::vector<float> got(w);
    CHECK(hipMemcpy(got.data(), out, w * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < w; ++i)
        EXPECT(got[i] == i * 0.5f - 3.0f, "half texel %d: %g", i, got[i]);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFreeArray(a));
}

// tex1Dfetch over linear memory: n elements and 8 past the end, which read zeros.
template <typename T> static void linear_texture(int n) {
    std::vector<T> host = pattern<T>(n);
    T* mem;
    CHECK(hipMalloc(&mem, n * sizeof(T)));
    CHECK(hipMemcpy(mem, host.data(), n * sizeof(T), hipMemcpyHostToDevice));
    hipResourceDesc res = linear_resource(mem, hipCreateChannelDesc<T>(), n * sizeof(T));
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
    T* out;
    CHECK(hipMalloc(&out, (n + 8) * sizeof(T)));
    hipLaunchKernelGGL(fetch_linear<T>, dim3((n + 8 + 63) / 64), dim3(64), 0, 0, out, t, n + 8);
    std::vector<T> got(n + 8);
    CHECK(hipMemcpy(got.data(), out, (n + 8) * sizeof(T), hipMemcpyDeviceToHost));
    EXPECT(memcmp(got.data(), host.data(), n * sizeof(T)) == 0, "tex1Dfetch<%s> differs",
           Info<T>::name());
    T zero;
    memset(&zero, 0, sizeof(zero));
    for (int i = n; i < n + 8; ++i)
        EXPECT(memcmp(&got[i], &zero, sizeof(T)) == 0, "tex1Dfetch<%s> past the end: not 0",
               Info<T>::name());
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFree(mem));
}

// tex1Dfetch of unsigned bytes read as normalized floats.
static void linear_normalized() {
    const int n = 100;
    std::vector<unsigned char> host(n);
    for (int i = 0; i < n; ++i) host[i] = (unsigned char)(i * 5 % 256);
    unsigned char* mem;
    CHECK(hipMalloc(&mem, n));
    CHECK(hipMemcpy(mem, host.data(), n, hipMemcpyHostToDevice));
    hipResourceDesc res = linear_resource(mem, hipCreateChannelDesc<unsigned char>(), n);
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.readMode = hipReadModeNormalizedFloat;
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
    float* out;
    CHECK(hipMalloc(&out, n * 4));
    hipLaunchKernelGGL(fetch_linear_float, dim3(2), dim3(64), 0, 0, out, t, n);
    std::vector<float> got(n);
    CHECK(hipMemcpy(got.data(), out, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        EXPECT(got[i] == host[i] / 255.0f, "normalized tex1Dfetch %d: %g", i, got[i]);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFree(mem));
}

static void pitch2d_texture() {
    const int w = 50, h = 6;
    float* mem;
    size_t pitch;
    CHECK(hipMallocPitch((void**)&mem, &pitch, w * 4, h));
    std::vector<float> host(w * h);
    for (int i = 0; i < w * h; ++i) host[i] = i * 1.5f;
    CHECK(hipMemcpy2D(mem, pitch, host.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
    hipResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = hipResourceTypePitch2D;
    res.res.pitch2D.devPtr = mem;
    res.res.pitch2D.desc = hipCreateChannelDesc<float>();
    res.res.pitch2D.width = w;
    res.res.pitch2D.height = h;
    res.res.pitch2D.pitchInBytes = pitch;
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
    float* out;
    CHECK(hipMalloc(&out, w * h * 4));
    hipLaunchKernelGGL(sample_2d, dim3(1, h), dim3(64), 0, 0, out, t, w, h);
    std::vector<float> got(w * h);
    CHECK(hipMemcpy(got.data(), out, w * h * 4, hipMemcpyDeviceToHost));
    EXPECT(memcmp(got.data(), host.data(), w * h * 4) == 0, "pitch2D texture differs");

    // A pitch that is not a multiple of 256 bytes is refused.
    res.res.pitch2D.pitchInBytes = w * 4;
    hipTextureObject_t bad;
    EXPECT_ERR(hipCreateTextureObject(&bad, &res, &td, nullptr), hipErrorInvalidValue);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFree(mem));
}

static void mipmapped_single_level() {
    const int w = 32, h = 4;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipMipmappedArray_t m;
    CHECK(hipMallocMipmappedArray(&m, &desc, make_hipExtent(w, h, 0), 1, 0));
    hipArray_t level;
    CHECK(hipGetMipmappedArrayLevel(&level, m, 0));
    std::vector<float> host(w * h);
    for (int i = 0; i < w * h; ++i) host[i] = 3.0f * i;
    CHECK(hipMemcpy2DToArray(level, 0, 0, host.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
    hipResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = hipResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = m;
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
    float* out;
    CHECK(hipMalloc(&out, w * h * 4));
    hipLaunchKernelGGL(sample_2d, dim3(1, h), dim3(64), 0, 0, out, t, w, h);
    std::vector<float> got(w * h);
    CHECK(hipMemcpy(got.data(), out, w * h * 4, hipMemcpyDeviceToHost));
    EXPECT(memcmp(got.data(), host.data(), w * h * 4) == 0, "mipmapped level-0 texture differs");
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(out));
    CHECK(hipFreeMipmappedArray(m));
}

// hipArrayCreate + hipTexObjectCreate, as AMD's Unit_hipArrayCreate_happy does them.
static void driver_api() {
    const int w = 64, h = 16;
    HIP_ARRAY_DESCRIPTOR ad;
    memset(&ad, 0, sizeof(ad));
    ad.Width = w;
    ad.Height = h;
    ad.Format = HIP_AD_FORMAT_SIGNED_INT16;
    ad.NumChannels = 2;
    hipArray* a;
    CHECK(hipArrayCreate(&a, &ad));
    std::vector<short2> host = pattern<short2>(w * h);
    CHECK(hipMemcpy2DToArray(a, 0, 0, host.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
    HIP_RESOURCE_DESC res;
    memset(&res, 0, sizeof(res));
    res.resType = HIP_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    HIP_TEXTURE_DESC td;
    memset(&td, 0, sizeof(td));
    td.filterMode = HIP_TR_FILTER_MODE_POINT;
    td.flags = HIP_TRSF_NORMALIZED_COORDINATES | HIP_TRSF_READ_AS_INTEGER;
    td.addressMode[0] = HIP_TR_ADDRESS_MODE_MIRROR;
    hipTextureObject_t t;
    CHECK(hipTexObjectCreate(&t, &res, &td, nullptr));
    short2* out;
    CHECK(hipMalloc(&out, w * h * 4));
    hipLaunchKernelGGL(read_tex<short2>, dim3(1, h, 1), dim3(64), 0, 0, out, t, 2, w, h, 1, 1,
                       0);
    std::vector<short2> got(w * h);
    CHECK(hipMemcpy(got.data(), out, w * h * 4, hipMemcpyDeviceToHost));
    EXPECT(memcmp(got.data(), host.data(), w * h * 4) == 0, "driver-API texture differs");

    HIP_RESOURCE_DESC res_back;
    HIP_TEXTURE_DESC td_back;
    CHECK(hipTexObjectGetResourceDesc(&res_back, t));
    CHECK(hipTexObjectGetTextureDesc(&td_back, t));
    EXPECT(res_back.resType == HIP_RESOURCE_TYPE_ARRAY && res_back.res.array.hArray == a,
           "hipTexObjectGetResourceDesc");
    EXPECT(td_back.flags == td.flags && td_back.addressMode[0] == HIP_TR_ADDRESS_MODE_MIRROR &&
               td_back.filterMode == HIP_TR_FILTER_MODE_POINT,
           "hipTexObjectGetTextureDesc: flags %u mode %d", td_back.flags,
           (int)td_back.addressMode[0]);
    HIP_RESOURCE_VIEW_DESC view;
    EXPECT_ERR(hipTexObjectGetResourceViewDesc(&view, t), hipErrorInvalidValue);
    CHECK(hipTexObjectDestroy(t));
    EXPECT_ERR(hipTexObjectDestroy(t), hipErrorInvalidValue);

    res.flags = 1;
    EXPECT_ERR(hipTexObjectCreate(&t, &res, &td, nullptr), hipErrorInvalidValue);
    CHECK(hipFree(out));
    CHECK(hipArrayDestroy(a));
}

static void surface() {
    const int w = 40, h = 5;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &desc, w, h, hipArraySurfaceLoadStore));
    hipResourceDesc res = array_resource(a);
    hipSurfaceObject_t s;
    CHECK(hipCreateSurfaceObject(&s, &res));
    hipLaunchKernelGGL(surface_write, dim3(1, h), dim3(64), 0, 0, s, w, h);
    float* out;
    CHECK(hipMalloc(&out, w * h * 4));
    hipLaunchKernelGGL(surface_read, dim3(1, h), dim3(64), 0, 0, out, s, w, h);
    std::vector<float> got(w * h), copied(w * h);
    CHECK(hipMemcpy(got.data(), out, w * h * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy2DFromArray(copied.data(), w * 4, a, 0, 0, w * 4, h, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float want = 1000.0f * y + x + 0.25f;
            if (copied[y * w + x] != want || got[y * w + x] != 2 * want) ++bad;
        }
    EXPECT(bad == 0, "surface write/read: %d texels differ", bad);
    CHECK(hipDestroySurfaceObject(s));
    EXPECT_ERR(hipDestroySurfaceObject(s), hipErrorInvalidValue);
    CHECK(hipFree(out));
    CHECK(hipFreeArray(a));
}

static void getters_and_errors() {
    hipChannelFormatDesc desc = hipCreateChannelDesc<float4>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &desc, 8, 8, hipArrayDefault));
    hipResourceDesc res = array_resource(a);
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = hipAddressModeBorder;
    td.addressMode[1] = hipAddressModeMirror;
    td.addressMode[2] = hipAddressModeWrap;
    td.filterMode = hipFilterModeLinear;
    td.normalizedCoords = 1;
    td.borderColor[3] = 1.0f;
    td.maxMipmapLevelClamp = 0.0f;
    hipResourceViewDesc view;
    memset(&view, 0, sizeof(view));
    view.width = 8;
    view.height = 8;
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &res, &td, &view));
    hipResourceDesc res_back;
    hipTextureDesc td_back;
    hipResourceViewDesc view_back;
    CHECK(hipGetTextureObjectResourceDesc(&res_back, t));
    CHECK(hipGetTextureObjectTextureDesc(&td_back, t));
    CHECK(hipGetTextureObjectResourceViewDesc(&view_back, t));
    EXPECT(res_back.resType == hipResourceTypeArray && res_back.res.array.array == a,
           "hipGetTextureObjectResourceDesc");
    EXPECT(memcmp(&td_back, &td, sizeof(td)) == 0, "hipGetTextureObjectTextureDesc");
    EXPECT(memcmp(&view_back, &view, sizeof(view)) == 0, "hipGetTextureObjectResourceViewDesc");
    CHECK(hipDestroyTextureObject(t));
    // A view of part of the resource.
    view.width = 4;
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, &view), hipErrorNotSupported);

    // Destroyed, never made, null.
    EXPECT_ERR(hipDestroyTextureObject(t), hipErrorInvalidValue);
    EXPECT_ERR(hipGetTextureObjectTextureDesc(&td_back, t), hipErrorInvalidValue);
    hipTextureObject_t garbage = (hipTextureObject_t)(uintptr_t)0x1234560;
    EXPECT_ERR(hipDestroyTextureObject(garbage), hipErrorInvalidValue);
    EXPECT_ERR(hipGetTextureObjectResourceDesc(&res_back, garbage), hipErrorInvalidValue);
    CHECK(hipDestroyTextureObject(nullptr));
    EXPECT_ERR(hipCreateTextureObject(nullptr, &res, &td, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipCreateTextureObject(&t, nullptr, &td, nullptr), hipErrorInvalidValue);

    // A border colour an S# cannot name; linear filtering of integers; a freed array; a
    // linear (buffer) resource.
    td.borderColor[0] = 0.5f;
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, nullptr), hipErrorNotSupported);
    hipChannelFormatDesc idesc = hipCreateChannelDesc<int>();
    hipArray_t ia;
    CHECK(hipMallocArray(&ia, &idesc, 8, 8, hipArrayDefault));
    res.res.array.array = ia;
    td.borderColor[0] = 0.0f;
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, nullptr), hipErrorInvalidValue);
    CHECK(hipFreeArray(ia));
    td.filterMode = hipFilterModePoint;
    EXPECT(hipCreateTextureObject(&t, &res, &td, nullptr) != hipSuccess, "a freed array");
    // A linear resource past its allocation, or of host memory.
    void* mem;
    CHECK(hipMalloc(&mem, 4096));
    res = linear_resource(mem, hipCreateChannelDesc<float>(), 8192);
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, nullptr), hipErrorInvalidValue);
    std::vector<float> host(1024);
    res.res.linear.devPtr = host.data();
    res.res.linear.sizeInBytes = 4096;
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, nullptr), hipErrorInvalidValue);
    CHECK(hipFree(mem));
    CHECK(hipFreeArray(a));
}

// What the device says about images: support, surface functions, surface and linear
// texture limits (0 without images).
static void device_reports(int want) {
    int device, images = -1, surface2d = -1, linear = -1;
    CHECK(hipGetDevice(&device));
    CHECK(hipDeviceGetAttribute(&images, hipDeviceAttributeImageSupport, device));
    CHECK(hipDeviceGetAttribute(&surface2d, hipDeviceAttributeMaxSurface2D, device));
    CHECK(hipDeviceGetAttribute(&linear, hipDeviceAttributeMaxTexture1DLinear, device));
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, device));
    EXPECT(images == want, "hipDeviceAttributeImageSupport %d", images);
    EXPECT((int)prop.arch.hasSurfaceFuncs == want, "hasSurfaceFuncs %d",
           (int)prop.arch.hasSurfaceFuncs);
    EXPECT((surface2d > 0) == (want == 1), "hipDeviceAttributeMaxSurface2D %d", surface2d);
    EXPECT(linear == prop.maxTexture1DLinear && (linear > 0) == (want == 1),
           "maxTexture1DLinear %d / %d", linear, prop.maxTexture1DLinear);
    // Arrays exist either way, sized by the texture limits.
    EXPECT(prop.maxTexture1D > 0 && prop.maxTexture2D[1] > 0, "texture limits");
}

static void without_images() {
    device_reports(0);
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &desc, 16, 16, hipArrayDefault));
    hipResourceDesc res = array_resource(a);
    hipTextureDesc td;
    memset(&td, 0, sizeof(td));
    hipTextureObject_t t;
    EXPECT_ERR(hipCreateTextureObject(&t, &res, &td, nullptr), hipErrorNotSupported);
    hipSurfaceObject_t s;
    EXPECT_ERR(hipCreateSurfaceObject(&s, &res), hipErrorNotSupported);
    HIP_RESOURCE_DESC dres;
    memset(&dres, 0, sizeof(dres));
    dres.res.array.hArray = a;
    HIP_TEXTURE_DESC dtd;
    memset(&dtd, 0, sizeof(dtd));
    EXPECT_ERR(hipTexObjectCreate(&t, &dres, &dtd, nullptr), hipErrorNotSupported);
    EXPECT_ERR(hipDestroyTextureObject(nullptr), hipErrorNotSupported);
    EXPECT_ERR(hipGetTextureObjectTextureDesc(&td, nullptr), hipErrorNotSupported);
    CHECK(hipFreeArray(a));
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "no-images") == 0) {
        without_images();
    } else {
        device_reports(1);
        every_shape<char>();
        every_shape<unsigned char>();
        every_shape<short>();
        every_shape<unsigned short>();
        every_shape<int>();
        every_shape<unsigned int>();
        every_shape<float>();
        every_shape<char4>();
        every_shape<uchar2>();
        every_shape<short2>();
        every_shape<ushort4>();
        every_shape<int2>();
        every_shape<uint4>();
        every_shape<float2>();
        every_shape<float4>();
        array_round_trip<float>(21, 4, 3, 0, 1);
        array_round_trip<uchar2>(16, 8, 2, 1, 1);
        linear_filtering_and_addressing();
        normalized_float<unsigned char>(hipReadModeNormalizedFloat, 255.0f, "uchar");
        normalized_float<char>(hipReadModeNormalizedFloat, 127.0f, "char");
        normalized_float<unsigned short>(hipReadModeNormalizedFloat, 65535.0f, "ushort");
        normalized_float<short>(hipReadModeNormalizedFloat, 32767.0f, "short");
        half_texture();
        pitch2d_texture();
        linear_texture<char>(77);
        linear_texture<ushort4>(50);
        linear_texture<int>(130);
        linear_texture<float2>(64);
        linear_texture<uint4>(33);
        linear_normalized();
        mipmapped_single_level();
        driver_api();
        surface();
        getters_and_errors();
        CHECK(hipDeviceSynchronize());
    }
    if (failures) {
        printf("textures: %d FAILED\n", failures);
        return 1;
    }
    printf("textures: PASSED\n");
    return 0;
}
