// hipcc_saxpy: built by Debian's hipcc with AMD's ROCm 5.2 hip/hiprtc.h, so hiprtc is imported
// from libamdhip64.so.5 at hip_4.2 and its result codes are ROCm 5.2's. The flow of AMD's
// runtime_compilation example: a kernel source whose types come from two headers given to
// hiprtcCreateProgram, --gpu-architecture from hipDeviceProp_t::gcnArchName, the log, the
// code object into hipModuleLoadData, a launch whose arguments go in a
// HIP_LAUNCH_PARAM_BUFFER_POINTER buffer; plus a template kernel found through a name
// expression. Run by tests/c_tests_rtc.rs on hipshim's gfx90a model.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int failures = 0;

#define CHECK_HIP(call)                                                                          \
    do {                                                                                         \
        hipError_t e_ = (call);                                                                  \
        if (e_ != hipSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                         hipGetErrorString(e_));                                                 \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

#define CHECK_RTC(call)                                                                          \
    do {                                                                                         \
        hiprtcResult r_ = (call);                                                                \
        if (r_ != HIPRTC_SUCCESS) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                         hiprtcGetErrorString(r_));                                              \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

static const char* kSource =
    "#include \"real.h\"\n"
    "#include \"realptr.h\"\n"
    "extern \"C\" __global__ void saxpy(const real a, const realptr x, realptr y, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "template <int N> __global__ void fill(int* out) { out[threadIdx.x] = N + threadIdx.x; }\n";

int main() {
    const char* headers[] = {"#pragma once\ntypedef float real;\n",
                             "#pragma once\ntypedef float* realptr;\n"};
    const char* header_names[] = {"real.h", "realptr.h"};
    hiprtcProgram prog;
    CHECK_RTC(hiprtcCreateProgram(&prog, kSource, "saxpy.cu", 2, headers, header_names));
    CHECK_RTC(hiprtcAddNameExpression(prog, "&fill<5>"));

    hipDeviceProp_t props;
    CHECK_HIP(hipGetDeviceProperties(&props, 0));
    std::string arch = std::string("--gpu-architecture=") + props.gcnArchName;
    const char* options[] = {arch.c_str()};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 1, options);
    size_t log_size = 0;
    CHECK_RTC(hiprtcGetProgramLogSize(prog, &log_size));
    if (log_size > 1) {
        std::string log(log_size, '\0');
        CHECK_RTC(hiprtcGetProgramLog(prog, &log[0]));
        std::printf("%s\n", log.c_str());
    }
    if (compiled != HIPRTC_SUCCESS) {
        std::fprintf(stderr, "compilation failed: %s\n", hiprtcGetErrorString(compiled));
        return 1;
    }
    const char* lowered = nullptr;
    CHECK_RTC(hiprtcGetLoweredName(prog, "&fill<5>", &lowered));
    std::string fill_name = lowered;
    std::printf("&fill<5> lowered to %s\n", fill_name.c_str());
    size_t code_size = 0;
    CHECK_RTC(hiprtcGetCodeSize(prog, &code_size));
    std::vector<char> code(code_size);
    CHECK_RTC(hiprtcGetCode(prog, code.data()));
    CHECK_RTC(hiprtcDestroyProgram(&prog));

    const unsigned n = 1000;
    std::vector<float> x(n), y(n);
    for (unsigned i = 0; i < n; ++i) {
        x[i] = float(i);
        y[i] = 2.0f * float(i);
    }
    float *dx, *dy;
    CHECK_HIP(hipMalloc(&dx, n * sizeof(float)));
    CHECK_HIP(hipMalloc(&dy, n * sizeof(float)));
    CHECK_HIP(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));

    hipModule_t module;
    CHECK_HIP(hipModuleLoadData(&module, code.data()));
    hipFunction_t saxpy, fill;
    CHECK_HIP(hipModuleGetFunction(&saxpy, module, "saxpy"));
    CHECK_HIP(hipModuleGetFunction(&fill, module, fill_name.c_str()));

    // The arguments laid out as the kernel's kernarg segment: a float, padding, two
    // pointers and an unsigned.
    struct {
        float a;
        float* x;
        float* y;
        unsigned n;
    } args = {3.0f, dx, dy, n};
    size_t args_size = sizeof(args);
    void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                      &args_size, HIP_LAUNCH_PARAM_END};
    CHECK_HIP(hipModuleLaunchKernel(saxpy, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, nullptr,
                                    config));
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; ++i) {
        if (std::fabs(y[i] - 5.0f * float(i)) > 1e-3f) {
            if (++failures < 5) std::fprintf(stderr, "y[%u] = %f, want %f\n", i, y[i], 5.0f * i);
        }
    }

    int* dout;
    CHECK_HIP(hipMalloc(&dout, 64 * sizeof(int)));
    void* fill_args[] = {&dout};
    CHECK_HIP(hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr));
    int out[64];
    CHECK_HIP(hipMemcpy(out, dout, sizeof(out), hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; ++i) {
        if (out[i] != 5 + i && ++failures < 10) std::fprintf(stderr, "out[%d] = %d\n", i, out[i]);
    }
    CHECK_HIP(hipModuleUnload(module));
    CHECK_HIP(hipFree(dx));
    CHECK_HIP(hipFree(dy));
    CHECK_HIP(hipFree(dout));
    if (failures != 0) {
        std::fprintf(stderr, "hipcc_saxpy: FAILED (%d)\n", failures);
        return 1;
    }
    std::printf("hipcc_saxpy: PASSED\n");
    return 0;
}
