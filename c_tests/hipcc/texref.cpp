// Built by Debian's hipcc (AMD's ROCm 5.2 headers, gfx90a): texture references, the API that
// came before texture objects (ROCm 5 and 6 only: AMD removed it in ROCm 7).
//
// A `texture<T, dim, mode>` global is a device variable holding a textureReference whose
// textureObject field the device code reads; clang registers it with __hipRegisterTexture and
// every bind writes the host copy to the device.
//
// `texref` (a device with image instructions): tex1Dfetch of linear memory bound with
// hipBindTexture (and rebound elsewhere, and through hipTexRefSetAddress); tex2D of a 2D
// array bound with hipBindTextureToArray, at point and linear filtering and with clamp and
// border addressing set through hipTexRefSet*; tex2D of pitched memory bound with
// hipBindTexture2D; the getters; hipGetTextureReference, hipGetTextureAlignmentOffset,
// hipDeviceGetTexture1DLinearMaxWidth; hipUnbindTexture; and the errors.
// `texref no-images` (a device without image instructions): every call answers
// hipErrorNotSupported.
// `texref module PATH` (PATH: this file built with --genco): hipModuleGetTexRef on the
// module's `lin`, bound with hipTexRefSetAddress and read by the module's kernel.
// `texref rocm7` (run with HIPSHIM_ABI=7): the calls answer hipErrorNotSupported, as the API
// does not exist in ROCm 7.
#include <hip/hip_runtime.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Newer than ROCm 5.2, whose headers do not declare them nor its library export them: looked
// up at run time.
typedef hipError_t (*GetArrayFn)(hipArray_t*, const textureReference*);
typedef hipError_t (*GetBorderFn)(float*, const textureReference*);
typedef hipError_t (*GetMipFn)(hipMipmappedArray_t*, const textureReference*);
typedef hipError_t (*MaxWidthFn)(size_t*, const hipChannelFormatDesc*, int);
template <typename F> static F lookup(const char* name) {
    F f = (F)dlsym(RTLD_DEFAULT, name);
    if (!f) {
        printf("FAILED: the runtime does not export %s\n", name);
        exit(1);
    }
    return f;
}
#define hipTexRefGetArray lookup<GetArrayFn>("hipTexRefGetArray")
#define hipTexRefGetBorderColor lookup<GetBorderFn>("hipTexRefGetBorderColor")
#define hipTexRefGetMipMappedArray lookup<GetMipFn>("hipTexRefGetMipMappedArray")
#define hipDeviceGetTexture1DLinearMaxWidth lookup<MaxWidthFn>("hipDeviceGetTexture1DLinearMaxWidth")

static int failures = 0;

#define CHECK(call)                                                                       \
    do {                                                                                  \
        hipError_t e_ = (call);                                                           \
        if (e_ != hipSuccess) {                                                           \
            printf("FAILED %s:%d %s -> %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define EXPECT(cond, ...)                         \
    do {                                          \
        if (!(cond)) {                            \
            printf("FAILED line %d: ", __LINE__); \
            printf(__VA_ARGS__);                  \
            printf("\n");                         \
            ++failures;                           \
        }                                         \
    } while (0)

#define EXPECT_ERR(call, code)                                                    \
    do {                                                                          \
        hipError_t e_ = (call);                                                   \
        EXPECT(e_ == (code), "%s -> %s, expected %s", #call, hipGetErrorName(e_), \
               hipGetErrorName(code));                                            \
    } while (0)

texture<float, hipTextureType1D, hipReadModeElementType> lin;
texture<float, hipTextureType2D, hipReadModeElementType> img;
texture<float, hipTextureType2D, hipReadModeElementType> pitched;
__device__ int not_a_texture;

__global__ void fetch_linear(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch(lin, i);
}

// out[k] = tex2D(img, xs[k], ys[k])
__global__ void sample_img(float* out, const float* xs, const float* ys, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) out[k] = tex2D(img, xs[k], ys[k]);
}

__global__ void sample_pitched(float* out, int w, int h) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) out[y * w + x] = tex2D(pitched, x + 0.5f, y + 0.5f);
}

static std::vector<float> run_linear(int n) {
    float* d_out;
    CHECK(hipMalloc(&d_out, n * sizeof(float)));
    hipLaunchKernelGGL(fetch_linear, dim3((n + 63) / 64), dim3(64), 0, 0, d_out, n);
    CHECK(hipGetLastError());
    std::vector<float> out(n);
    CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
    CHECK(hipFree(d_out));
    return out;
}

static std::vector<float> run_img(const std::vector<float>& xs, const std::vector<float>& ys) {
    int n = (int)xs.size();
    float *d_out, *d_x, *d_y;
    CHECK(hipMalloc(&d_out, n * sizeof(float)));
    CHECK(hipMalloc(&d_x, n * sizeof(float)));
    CHECK(hipMalloc(&d_y, n * sizeof(float)));
    CHECK(hipMemcpy(d_x, xs.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_y, ys.data(), n * sizeof(float), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(sample_img, dim3((n + 63) / 64), dim3(64), 0, 0, d_out, d_x, d_y, n);
    CHECK(hipGetLastError());
    std::vector<float> out(n);
    CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
    CHECK(hipFree(d_out));
    CHECK(hipFree(d_x));
    CHECK(hipFree(d_y));
    return out;
}

static void linear_memory() {
    const int n = 300;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = i * 0.5f + 1.0f;
        b[i] = -3.0f * i;
    }
    float *d_a, *d_b;
    CHECK(hipMalloc(&d_a, n * sizeof(float)));
    CHECK(hipMalloc(&d_b, n * sizeof(float)));
    CHECK(hipMemcpy(d_a, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_b, b.data(), n * sizeof(float), hipMemcpyHostToDevice));

    size_t offset = 123;
    CHECK(hipBindTexture(&offset, lin, d_a, n * sizeof(float)));
    EXPECT(offset == 0, "offset %zu for hipMalloc'd memory", offset);
    EXPECT(lin.textureObject != nullptr, "the host copy holds no texture object after a bind");
    std::vector<float> out = run_linear(n);
    for (int i = 0; i < n; ++i) EXPECT(out[i] == a[i], "lin[%d] = %g, expected %g", i, out[i], a[i]);

    hipDeviceptr_t addr = nullptr;
    CHECK(hipTexRefGetAddress(&addr, &lin));
    EXPECT(addr == d_a, "hipTexRefGetAddress %p, expected %p", addr, d_a);
    size_t align = 99;
    CHECK(hipGetTextureAlignmentOffset(&align, &lin));
    EXPECT(align == 0, "alignment offset %zu", align);

    // Rebinding supersedes the first binding; the device sees the new one.
    CHECK(hipBindTexture(nullptr, &lin, d_b, &lin.channelDesc, n * sizeof(float)));
    out = run_linear(n);
    for (int i = 0; i < n; ++i) EXPECT(out[i] == b[i], "rebound lin[%d] = %g, expected %g", i, out[i], b[i]);

    // The driver API's form: the format set on the reference, then the address.
    CHECK(hipTexRefSetFormat(&lin, HIP_AD_FORMAT_FLOAT, 1));
    hipArray_Format fmt;
    int channels = 0;
    CHECK(hipTexRefGetFormat(&fmt, &channels, &lin));
    EXPECT(fmt == HIP_AD_FORMAT_FLOAT && channels == 1, "format %d x%d", (int)fmt, channels);
    CHECK(hipTexRefSetAddress(&offset, &lin, d_a, n * sizeof(float)));
    out = run_linear(n);
    for (int i = 0; i < n; ++i) EXPECT(out[i] == a[i], "set-address lin[%d] = %g, expected %g", i, out[i], a[i]);

    // Bad input.
    EXPECT_ERR(hipBindTexture(nullptr, &lin, nullptr, &lin.channelDesc, 64), hipErrorInvalidValue);
    EXPECT_ERR(hipBindTexture(nullptr, &lin, d_a, nullptr, 64), hipErrorInvalidValue);
    EXPECT_ERR(hipBindTexture(nullptr, nullptr, d_a, &lin.channelDesc, 64), hipErrorInvalidValue);
    textureReference stray = lin;
    stray.textureObject = nullptr;
    EXPECT_ERR(hipBindTexture(nullptr, &stray, d_a, &lin.channelDesc, 64), hipErrorInvalidSymbol);
    EXPECT_ERR(hipBindTexture(nullptr, (const textureReference*)&not_a_texture, d_a,
                              &lin.channelDesc, 64),
               hipErrorInvalidSymbol);
    // Past the allocation: refused, and the binding before it stays.
    EXPECT_ERR(hipBindTexture(nullptr, &lin, d_a, &lin.channelDesc, 1 << 20), hipErrorInvalidValue);
    out = run_linear(n);
    EXPECT(out[7] == a[7], "after a refused bind lin[7] = %g, expected %g", out[7], a[7]);

    CHECK(hipUnbindTexture(&lin));
    EXPECT(lin.textureObject == nullptr, "unbind leaves the texture object");
    EXPECT_ERR(hipTexRefGetAddress(&addr, &lin), hipErrorInvalidValue);
    CHECK(hipUnbindTexture(&lin));  // unbinding an unbound reference is fine
    EXPECT_ERR(hipUnbindTexture(nullptr), hipErrorInvalidValue);
    CHECK(hipFree(d_a));
    CHECK(hipFree(d_b));
}

static void array_2d() {
    const int w = 8, h = 4;
    std::vector<float> host(w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) host[y * w + x] = 10.0f * y + x;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipArray_t array;
    CHECK(hipMallocArray(&array, &desc, w, h));
    CHECK(hipMemcpy2DToArray(array, 0, 0, host.data(), w * sizeof(float), w * sizeof(float), h,
                             hipMemcpyHostToDevice));

    // Point sampling at texel centres.
    CHECK(hipBindTextureToArray(img, array));
    std::vector<float> xs, ys;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            xs.push_back(x + 0.5f);
            ys.push_back(y + 0.5f);
        }
    std::vector<float> out = run_img(xs, ys);
    for (int k = 0; k < w * h; ++k)
        EXPECT(out[k] == host[k], "img point [%d] = %g, expected %g", k, out[k], host[k]);
    hipArray_t got = nullptr;
    CHECK(hipTexRefGetArray(&got, &img));
    EXPECT(got == array, "hipTexRefGetArray %p, expected %p", (void*)got, (void*)array);
    hipDeviceptr_t addr;
    EXPECT_ERR(hipTexRefGetAddress(&addr, &img), hipErrorInvalidValue);

    // Linear filtering, set on the reference and taking effect at the next bind.
    CHECK(hipTexRefSetFilterMode(&img, hipFilterModeLinear));
    hipTextureFilterMode fm;
    CHECK(hipTexRefGetFilterMode(&fm, &img));
    EXPECT(fm == hipFilterModeLinear, "filter mode %d", (int)fm);
    CHECK(hipBindTextureToArray(&img, array, &desc));
    out = run_img({1.0f, 3.25f}, {0.5f, 2.5f});
    EXPECT(std::fabs(out[0] - 0.5f) < 1e-2f, "linear between texels 0 and 1: %g", out[0]);
    EXPECT(std::fabs(out[1] - 22.75f) < 1e-2f, "linear at (3.25, 2.5): %g", out[1]);

    // Addressing: clamp repeats the edge texel, border reads zero.
    CHECK(hipTexRefSetFilterMode(&img, hipFilterModePoint));
    CHECK(hipBindTextureToArray(img, array));
    out = run_img({-3.0f, 50.0f}, {1.5f, 1.5f});
    EXPECT(out[0] == 10.0f && out[1] == 17.0f, "clamped reads %g %g", out[0], out[1]);
    CHECK(hipTexRefSetAddressMode(&img, 0, hipAddressModeBorder));
    hipTextureAddressMode am;
    CHECK(hipTexRefGetAddressMode(&am, &img, 0));
    EXPECT(am == hipAddressModeBorder, "address mode %d", (int)am);
    CHECK(hipBindTextureToArray(img, array));
    out = run_img({-3.0f, 50.0f, 2.5f}, {1.5f, 1.5f, 1.5f});
    EXPECT(out[0] == 0.0f && out[1] == 0.0f && out[2] == 12.0f, "border reads %g %g %g", out[0],
           out[1], out[2]);

    // The driver API's array form: the flag must be HIP_TRSA_OVERRIDE_FORMAT.
    CHECK(hipTexRefSetAddressMode(&img, 0, hipAddressModeClamp));
    EXPECT_ERR(hipTexRefSetArray(&img, array, 0), hipErrorInvalidValue);
    CHECK(hipTexRefSetArray(&img, array, HIP_TRSA_OVERRIDE_FORMAT));
    hipArray_Format fmt;
    int channels;
    CHECK(hipTexRefGetFormat(&fmt, &channels, &img));
    EXPECT(fmt == HIP_AD_FORMAT_FLOAT && channels == 1, "format from the array %d x%d", (int)fmt,
           channels);
    out = run_img({-3.0f}, {0.5f});
    EXPECT(out[0] == 0.0f, "clamped read after hipTexRefSetArray: %g", out[0]);

    // Flags.
    CHECK(hipTexRefSetFlags(&img, HIP_TRSF_READ_AS_INTEGER | HIP_TRSF_NORMALIZED_COORDINATES));
    unsigned flags = 0;
    CHECK(hipTexRefGetFlags(&flags, &img));
    EXPECT(flags == (HIP_TRSF_READ_AS_INTEGER | HIP_TRSF_NORMALIZED_COORDINATES), "flags %#x",
           flags);
    EXPECT(img.normalized == 1, "normalized %d", img.normalized);
    CHECK(hipBindTextureToArray(img, array));
    out = run_img({0.5f / w, (w - 0.5f) / w}, {3.5f / h, 0.5f / h});
    EXPECT(out[0] == 30.0f && out[1] == 7.0f, "normalized reads %g %g", out[0], out[1]);
    CHECK(hipTexRefSetFlags(&img, HIP_TRSF_READ_AS_INTEGER));

    // Other getters and setters.
    CHECK(hipTexRefSetMaxAnisotropy(&img, 4));
    int aniso = 0;
    CHECK(hipTexRefGetMaxAnisotropy(&aniso, &img));
    EXPECT(aniso == 4, "max anisotropy %d", aniso);
    CHECK(hipTexRefSetMipmapLevelBias(&img, 0.25f));
    float bias = 0;
    CHECK(hipTexRefGetMipmapLevelBias(&bias, &img));
    EXPECT(bias == 0.25f, "bias %g", bias);
    CHECK(hipTexRefSetMipmapLevelClamp(&img, 1.0f, 2.0f));
    float lo = 0, hi = 0;
    CHECK(hipTexRefGetMipmapLevelClamp(&lo, &hi, &img));
    EXPECT(lo == 1.0f && hi == 2.0f, "clamp %g %g", lo, hi);
    CHECK(hipTexRefSetMipmapFilterMode(&img, hipFilterModeLinear));
    CHECK(hipTexRefGetMipmapFilterMode(&fm, &img));
    EXPECT(fm == hipFilterModeLinear, "mipmap filter %d", (int)fm);
    float border[4] = {1.0f, 1.0f, 1.0f, 1.0f}, got_border[4] = {};
    CHECK(hipTexRefSetBorderColor(&img, border));
    CHECK(hipTexRefGetBorderColor(got_border, &img));
    EXPECT(got_border[0] == 1.0f && got_border[3] == 1.0f, "border colour %g %g", got_border[0],
           got_border[3]);
    hipMipmappedArray_t mip;
    EXPECT_ERR(hipTexRefGetMipMappedArray(&mip, &img), hipErrorInvalidValue);

    // Bad input.
    EXPECT_ERR(hipTexRefSetAddressMode(&img, 3, hipAddressModeClamp), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetAddressMode(&img, -1, hipAddressModeClamp), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetAddressMode(&img, 0, (hipTextureAddressMode)9), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefGetAddressMode(&am, &img, 5), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetFilterMode(&img, (hipTextureFilterMode)7), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetFormat(&img, (hipArray_Format)0x77, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefSetFormat(&img, HIP_AD_FORMAT_FLOAT, 3), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefGetFilterMode(nullptr, &img), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefGetFilterMode(&fm, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipBindTextureToArray(&img, nullptr, &desc), hipErrorInvalidValue);
    EXPECT_ERR(hipTexRefGetArray(nullptr, &img), hipErrorInvalidValue);

    CHECK(hipUnbindTexture(&img));
    EXPECT_ERR(hipTexRefGetArray(&got, &img), hipErrorInvalidValue);
    CHECK(hipFreeArray(array));
}

static void pitch_2d() {
    const int w = 20, h = 5;
    float* d;
    size_t pitch;
    CHECK(hipMallocPitch((void**)&d, &pitch, w * sizeof(float), h));
    std::vector<float> host(w * h);
    for (int k = 0; k < w * h; ++k) host[k] = 0.25f * k - 7.0f;
    CHECK(hipMemcpy2D(d, pitch, host.data(), w * sizeof(float), w * sizeof(float), h,
                      hipMemcpyHostToDevice));
    size_t offset = 77;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    CHECK(hipBindTexture2D(&offset, &pitched, d, &desc, w, h, pitch));
    EXPECT(offset == 0, "2D offset %zu", offset);
    float* d_out;
    CHECK(hipMalloc(&d_out, w * h * sizeof(float)));
    hipLaunchKernelGGL(sample_pitched, dim3(h), dim3(32), 0, 0, d_out, w, h);
    CHECK(hipGetLastError());
    std::vector<float> out(w * h);
    CHECK(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
    for (int k = 0; k < w * h; ++k)
        EXPECT(out[k] == host[k], "pitched[%d] = %g, expected %g", k, out[k], host[k]);
    hipDeviceptr_t addr;
    CHECK(hipTexRefGetAddress(&addr, &pitched));
    EXPECT(addr == d, "2D address %p, expected %p", addr, (void*)d);
    // A pitch of zero, and an unaligned pointer with nowhere to report the offset.
    EXPECT_ERR(hipBindTexture2D(nullptr, &pitched, d, &desc, w, h, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipBindTexture2D(nullptr, &pitched, d + 1, &desc, w - 1, h, pitch),
               hipErrorInvalidValue);
    CHECK(hipUnbindTexture(pitched));
    CHECK(hipFree(d_out));
    CHECK(hipFree(d));
}

static void lookups() {
    const textureReference* ref = nullptr;
    CHECK(hipGetTextureReference(&ref, &lin));
    EXPECT(ref == &lin, "hipGetTextureReference %p, expected %p", (void*)ref, (void*)&lin);
    EXPECT_ERR(hipGetTextureReference(nullptr, &lin), hipErrorInvalidValue);
    EXPECT_ERR(hipGetTextureReference(&ref, &not_a_texture), hipErrorInvalidSymbol);
    size_t offset;
    EXPECT_ERR(hipGetTextureAlignmentOffset(nullptr, &lin), hipErrorInvalidValue);
    EXPECT_ERR(hipGetTextureAlignmentOffset(&offset, nullptr), hipErrorInvalidValue);

    size_t max_width = 0;
    hipChannelFormatDesc f4 = hipCreateChannelDesc<float4>();
    CHECK(hipDeviceGetTexture1DLinearMaxWidth(&max_width, &f4, 0));
    int linear = 0;
    CHECK(hipDeviceGetAttribute(&linear, hipDeviceAttributeMaxTexture1DLinear, 0));
    EXPECT(max_width == (size_t)linear / 16, "1D linear max width %zu (attribute %d)", max_width,
           linear);
    hipChannelFormatDesc none = {0, 0, 0, 0, hipChannelFormatKindFloat};
    EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(&max_width, &none, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(nullptr, &f4, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetTexture1DLinearMaxWidth(&max_width, &f4, 99), hipErrorInvalidDevice);

    hipModule_t no_module = nullptr;
    textureReference* tr;
    EXPECT_ERR(hipModuleGetTexRef(&tr, no_module, "lin"), hipErrorInvalidResourceHandle);
    EXPECT_ERR(hipModuleGetTexRef(nullptr, no_module, "lin"), hipErrorInvalidValue);
}

// `path` is this file built with --genco: a module whose `lin` is a texture variable.
static void module_reference(const char* path) {
    hipModule_t mod;
    CHECK(hipModuleLoad(&mod, path));
    textureReference *tr = nullptr, *again = nullptr;
    CHECK(hipModuleGetTexRef(&tr, mod, "lin"));
    CHECK(hipModuleGetTexRef(&again, mod, "lin"));
    EXPECT(tr != nullptr && tr == again, "hipModuleGetTexRef %p then %p", (void*)tr, (void*)again);
    EXPECT(tr->readMode == hipReadModeNormalizedFloat, "read mode %d", (int)tr->readMode);
    EXPECT(tr != &lin, "the module's reference is the program's own");
    EXPECT_ERR(hipModuleGetTexRef(&tr, mod, "not_a_texture"), hipErrorNotFound);
    EXPECT_ERR(hipModuleGetTexRef(&tr, mod, "nothing_of_that_name"), hipErrorNotFound);
    EXPECT_ERR(hipModuleGetTexRef(&tr, mod, ""), hipErrorInvalidValue);
    CHECK(hipModuleGetTexRef(&tr, mod, "lin"));

    const int n = 100;
    std::vector<float> a(n);
    for (int i = 0; i < n; ++i) a[i] = 7.0f - i;
    float *d_a, *d_out;
    CHECK(hipMalloc(&d_a, n * sizeof(float)));
    CHECK(hipMalloc(&d_out, n * sizeof(float)));
    CHECK(hipMemcpy(d_a, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipTexRefSetFormat(tr, HIP_AD_FORMAT_FLOAT, 1));
    CHECK(hipTexRefSetFlags(tr, HIP_TRSF_READ_AS_INTEGER));
    size_t offset = 5;
    CHECK(hipTexRefSetAddress(&offset, tr, d_a, n * sizeof(float)));
    EXPECT(offset == 0, "module offset %zu", offset);
    // Static references are bound through hipBindTexture, module ones through hipTexRefSet*:
    // a reference that is neither is not found.
    textureReference stray = *tr;
    EXPECT_ERR(hipTexRefSetAddress(nullptr, &stray, d_a, n * sizeof(float)), hipErrorNotFound);

    hipFunction_t f;
    CHECK(hipModuleGetFunction(&f, mod, "_Z12fetch_linearPfi"));
    int count = n;
    void* args[] = {&d_out, &count};
    CHECK(hipModuleLaunchKernel(f, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
    std::vector<float> out(n);
    CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
        EXPECT(out[i] == a[i], "module lin[%d] = %g, expected %g", i, out[i], a[i]);
    CHECK(hipUnbindTexture(tr));
    CHECK(hipModuleUnload(mod));
    CHECK(hipFree(d_a));
    CHECK(hipFree(d_out));
}

// Every call refused with `code` (a device without images, or the ROCm 7 ABI).
static void refused(hipError_t code) {
    float* d;
    CHECK(hipMalloc(&d, 256));
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    EXPECT_ERR(hipBindTexture(nullptr, &lin, d, &desc, 256), code);
    EXPECT_ERR(hipBindTexture2D(nullptr, &pitched, d, &desc, 8, 1, 256), code);
    EXPECT_ERR(hipTexRefSetFilterMode(&img, hipFilterModeLinear), code);
    hipTextureFilterMode fm;
    EXPECT_ERR(hipTexRefGetFilterMode(&fm, &img), code);
    EXPECT_ERR(hipTexRefSetAddress(nullptr, &lin, d, 256), code);
    EXPECT_ERR(hipUnbindTexture(&lin), code);
    const textureReference* ref;
    EXPECT_ERR(hipGetTextureReference(&ref, &lin), code);
    EXPECT(lin.textureObject == nullptr, "a refused bind left a texture object");
    CHECK(hipFree(d));
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "no-images") == 0) {
        refused(hipErrorNotSupported);
    } else if (strcmp(mode, "module") == 0 && argc > 2) {
        module_reference(argv[2]);
    } else if (strcmp(mode, "rocm7") == 0) {
        refused(hipErrorNotSupported);
    } else {
        linear_memory();
        array_2d();
        pitch_2d();
        lookups();
    }
    if (failures) {
        printf("texref: %d FAILED\n", failures);
        return 1;
    }
    printf("texref: PASSED\n");
    return 0;
}
