// rtc: hiprtc end to end. Compiles kernel source at run time (a template kernel found
// through a name expression, a header passed to hiprtcCreateProgram, -DVALUE=3, the default
// architecture and --gpu-architecture), loads the code object with hipModuleLoadData and
// launches it with hipModuleLaunchKernel; compiles two -fgpu-rdc programs to bitcode and
// links them with hiprtcLink*, and three with the module API's hipLink*; and the errors: a
// syntax error (the log names the line), bad handles, calls in the wrong order, inputs that are
// not bitcode.
// With the argument `no-compiler` (run with HIPSHIM_RTC_CLANG naming a missing file) it
// checks instead that compiling fails with a log saying what is missing.
// Run by tests/c_tests_rtc.rs, which skips it when no clang-19 is installed.
#include "../check.h"

#include <hip/hiprtc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define EXPECT_RTC(call, want)                                                                   \
    do {                                                                                         \
        hiprtcResult got_ = (call);                                                              \
        if (got_ != (want)) {                                                                    \
            std::fprintf(stderr, "FAIL %s:%d %s: expected %s, got %s\n", __FILE__, __LINE__,     \
                         #call, hiprtcGetErrorString(want), hiprtcGetErrorString(got_));         \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

#define CHECK_RTC(call)                                                                          \
    do {                                                                                         \
        hiprtcResult got_ = (call);                                                              \
        if (got_ != HIPRTC_SUCCESS) {                                                            \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,            \
                         hiprtcGetErrorString(got_));                                            \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

static std::string program_log(hiprtcProgram prog) {
    size_t size = 0;
    EXPECT_RTC(hiprtcGetProgramLogSize(prog, &size), HIPRTC_SUCCESS);
    if (size == 0) return std::string();  // no log
    std::string log(size, '\0');
    EXPECT_RTC(hiprtcGetProgramLog(prog, &log[0]), HIPRTC_SUCCESS);
    EXPECT_TRUE(log[size - 1] == '\0');
    log.resize(size - 1);
    return log;
}

static std::vector<char> code_of(hiprtcProgram prog) {
    size_t size = 0;
    CHECK_RTC(hiprtcGetCodeSize(prog, &size));
    std::vector<char> code(size);
    CHECK_RTC(hiprtcGetCode(prog, code.data()));
    return code;
}

static std::vector<char> bitcode_of(hiprtcProgram prog) {
    size_t size = 0;
    CHECK_RTC(hiprtcGetBitcodeSize(prog, &size));
    std::vector<char> code(size);
    CHECK_RTC(hiprtcGetBitcode(prog, code.data()));
    return code;
}

// Runs `kernel(int* out, int n)` over n elements and returns out.
static std::vector<int> run_int_kernel(hipFunction_t kernel, int n) {
    int* d = nullptr;
    CHECK(hipMalloc(&d, n * sizeof(int)));
    CHECK(hipMemset(d, 0, n * sizeof(int)));
    void* args[] = {&d, &n};
    CHECK(hipModuleLaunchKernel(kernel, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
    std::vector<int> out(n);
    CHECK(hipMemcpy(out.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipFree(d));
    return out;
}

static const char* kSource = R"(
#include "params/factor.h"
namespace kernels {
template <typename T>
__global__ void scale(T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = static_cast<T>(i * VALUE * FACTOR) + static_cast<T>(sqrtf(0.0f));
}
}
#ifdef __HIPCC_RTC__
extern "C" __global__ void rtc_defined(int* out, int n) { if (threadIdx.x == 0) out[0] = 1; }
#endif
)";

static void compile_load_launch() {
    hiprtcProgram prog = nullptr;
    const char* header = "#define FACTOR 2\n";
    const char* header_name = "params/factor.h";
    CHECK_RTC(hiprtcCreateProgram(&prog, kSource, "scale.hip", 1, &header, &header_name));
    CHECK_RTC(hiprtcAddNameExpression(prog, "&kernels::scale<int>"));
    CHECK_RTC(hiprtcAddNameExpression(prog, "&kernels::scale<float>"));
    const char* lowered = nullptr;
    EXPECT_RTC(hiprtcGetLoweredName(prog, "&kernels::scale<int>", &lowered),
               HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION);
    size_t size = 0;
    EXPECT_RTC(hiprtcGetCodeSize(prog, &size), HIPRTC_ERROR_INVALID_PROGRAM);

    const char* options[] = {"-DVALUE=3"};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 1, options);
    std::string log = program_log(prog);
    if (compiled != HIPRTC_SUCCESS) {
        std::fprintf(stderr, "compile failed: %s\n%s\n", hiprtcGetErrorString(compiled),
                     log.c_str());
        std::exit(1);
    }
    EXPECT_RTC(hiprtcAddNameExpression(prog, "&kernels::scale<double>"),
               HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION);
    EXPECT_RTC(hiprtcGetLoweredName(prog, "&kernels::scale<char>", &lowered),
               HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);
    EXPECT_RTC(hiprtcGetLoweredName(prog, "&kernels::scale<int>", nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    const char* lowered_float = nullptr;
    CHECK_RTC(hiprtcGetLoweredName(prog, "&kernels::scale<int>", &lowered));
    CHECK_RTC(hiprtcGetLoweredName(prog, "&kernels::scale<float>", &lowered_float));
    std::printf("lowered: %s %s\n", lowered, lowered_float);
    EXPECT_TRUE(std::strcmp(lowered, "_ZN7kernels5scaleIiEEvPT_i") == 0);
    EXPECT_TRUE(std::strcmp(lowered_float, "_ZN7kernels5scaleIfEEvPT_i") == 0);
    EXPECT_RTC(hiprtcGetBitcodeSize(prog, &size), HIPRTC_ERROR_INVALID_PROGRAM);

    std::vector<char> code = code_of(prog);
    // A plain code object, not an offload bundle.
    EXPECT_TRUE(code.size() > 4 && std::memcmp(code.data(), "\x7f" "ELF", 4) == 0);
    hipModule_t module = nullptr;
    CHECK(hipModuleLoadData(&module, code.data()));
    hipFunction_t kernel = nullptr;
    CHECK(hipModuleGetFunction(&kernel, module, lowered));
    const int n = 200;
    std::vector<int> out = run_int_kernel(kernel, n);
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], i * 3 * 2);
    EXPECT_OK(hipModuleGetFunction(&kernel, module, "rtc_defined"));
    CHECK(hipModuleUnload(module));

    // The lowered names live until the program is destroyed.
    EXPECT_TRUE(std::strcmp(lowered, "_ZN7kernels5scaleIiEEvPT_i") == 0);
    CHECK_RTC(hiprtcDestroyProgram(&prog));
    EXPECT_TRUE(prog == nullptr);
}

// As AMD's runtime_compilation example: the architecture named from the device properties.
static void compile_for_named_architecture() {
    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    std::string arch = std::string("--gpu-architecture=") + props.gcnArchName;
    std::printf("compiling for %s\n", arch.c_str());
    const char* source =
        "extern \"C\" __global__ void iota(int* out, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = i + 7;\n"
        "}\n";
    hiprtcProgram prog = nullptr;
    CHECK_RTC(hiprtcCreateProgram(&prog, source, nullptr, 0, nullptr, nullptr));
    const char* options[] = {arch.c_str(), "-O2"};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 2, options);
    if (compiled != HIPRTC_SUCCESS) {
        std::fprintf(stderr, "%s\n", program_log(prog).c_str());
        std::exit(1);
    }
    std::vector<char> code = code_of(prog);
    CHECK_RTC(hiprtcDestroyProgram(&prog));
    hipModule_t module = nullptr;
    CHECK(hipModuleLoadData(&module, code.data()));
    hipFunction_t kernel = nullptr;
    CHECK(hipModuleGetFunction(&kernel, module, "iota"));
    std::vector<int> out = run_int_kernel(kernel, 70);
    for (int i = 0; i < 70; ++i) EXPECT_EQ(out[i], i + 7);
    CHECK(hipModuleUnload(module));
}

static void compile_errors() {
    hiprtcProgram prog = nullptr;
    const char* broken = "__global__ void k(int* p) {\n"
                         "    p[0] = 1;\n"
                         "    p[1] = undeclared_thing;\n"
                         "}\n";
    CHECK_RTC(hiprtcCreateProgram(&prog, broken, "broken.hip", 0, nullptr, nullptr));
    const char* arch = "--gpu-architecture=gfx90a";
    EXPECT_RTC(hiprtcCompileProgram(prog, 1, &arch), HIPRTC_ERROR_COMPILATION);
    std::string log = program_log(prog);
    std::printf("log of the broken program:\n%s", log.c_str());
    EXPECT_TRUE(log.find("broken.hip:3:") != std::string::npos);
    EXPECT_TRUE(log.find("undeclared_thing") != std::string::npos);
    size_t size = 0;
    EXPECT_RTC(hiprtcGetCodeSize(prog, &size), HIPRTC_ERROR_INVALID_PROGRAM);
    const char* bad_option = "-o";
    EXPECT_RTC(hiprtcCompileProgram(prog, 1, &bad_option), HIPRTC_ERROR_INVALID_OPTION);
    EXPECT_RTC(hiprtcCompileProgram(prog, -1, nullptr), HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_RTC(hiprtcCompileProgram(prog, 1, nullptr), HIPRTC_ERROR_INVALID_INPUT);
    CHECK_RTC(hiprtcDestroyProgram(&prog));

    // A name expression that names nothing is a compilation error.
    CHECK_RTC(hiprtcCreateProgram(&prog, "__global__ void k() {}\n", "named.hip", 0, nullptr,
                                  nullptr));
    CHECK_RTC(hiprtcAddNameExpression(prog, "&no_such_kernel<int>"));
    EXPECT_RTC(hiprtcCompileProgram(prog, 1, &arch), HIPRTC_ERROR_COMPILATION);
    EXPECT_TRUE(program_log(prog).find("no_such_kernel") != std::string::npos);
    CHECK_RTC(hiprtcDestroyProgram(&prog));
}

static void handle_errors() {
    hiprtcProgram prog = nullptr;
    EXPECT_RTC(hiprtcCreateProgram(nullptr, "", "x.hip", 0, nullptr, nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_RTC(hiprtcCreateProgram(&prog, nullptr, "x.hip", 0, nullptr, nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_RTC(hiprtcCreateProgram(&prog, "", "x.hip", 1, nullptr, nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    const char* header = "int x;";
    const char* escaping = "../outside.h";
    EXPECT_RTC(hiprtcCreateProgram(&prog, "", "x.hip", 1, &header, &escaping),
               HIPRTC_ERROR_INVALID_INPUT);
    hiprtcProgram garbage = reinterpret_cast<hiprtcProgram>(0x1234);
    EXPECT_RTC(hiprtcCompileProgram(garbage, 0, nullptr), HIPRTC_ERROR_INVALID_PROGRAM);
    size_t size = 0;
    EXPECT_RTC(hiprtcGetProgramLogSize(garbage, &size), HIPRTC_ERROR_INVALID_PROGRAM);
    EXPECT_RTC(hiprtcDestroyProgram(nullptr), HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_RTC(hiprtcDestroyProgram(&garbage), HIPRTC_ERROR_INVALID_PROGRAM);

    CHECK_RTC(hiprtcCreateProgram(&prog, "", "x.hip", 0, nullptr, nullptr));
    EXPECT_RTC(hiprtcGetProgramLogSize(prog, &size), HIPRTC_SUCCESS);
    EXPECT_EQ(size, 0);  // no log yet (AMD's hiprtc says 0 too)
    hiprtcProgram copy = prog;
    CHECK_RTC(hiprtcDestroyProgram(&prog));
    EXPECT_RTC(hiprtcDestroyProgram(&copy), HIPRTC_ERROR_INVALID_PROGRAM);
    EXPECT_RTC(hiprtcGetProgramLogSize(copy, &size), HIPRTC_ERROR_INVALID_PROGRAM);

    int major = 0, minor = -1;
    CHECK_RTC(hiprtcVersion(&major, &minor));
    EXPECT_TRUE(major >= 5 && minor >= 0);
    EXPECT_RTC(hiprtcVersion(nullptr, &minor), HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_TRUE(std::strcmp(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION),
                            "HIPRTC_ERROR_COMPILATION") == 0);
    EXPECT_TRUE(std::strcmp(hiprtcGetErrorString(HIPRTC_ERROR_LINKING), "HIPRTC_ERROR_LINKING") ==
                0);
    EXPECT_TRUE(std::strcmp(hiprtcGetErrorString(static_cast<hiprtcResult>(999)),
                            "Invalid HIPRTC error code") == 0);
}

static std::vector<char> rdc_bitcode(const char* source, const char* name) {
    hiprtcProgram prog = nullptr;
    CHECK_RTC(hiprtcCreateProgram(&prog, source, name, 0, nullptr, nullptr));
    const char* options[] = {"-fgpu-rdc"};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 1, options);
    if (compiled != HIPRTC_SUCCESS) {
        std::fprintf(stderr, "%s\n", program_log(prog).c_str());
        std::exit(1);
    }
    size_t size = 0;
    EXPECT_RTC(hiprtcGetCodeSize(prog, &size), HIPRTC_ERROR_INVALID_PROGRAM);
    std::vector<char> bitcode = bitcode_of(prog);
    EXPECT_TRUE(bitcode.size() > 4 && std::memcmp(bitcode.data(), "BC\xc0\xde", 4) == 0);
    CHECK_RTC(hiprtcDestroyProgram(&prog));
    return bitcode;
}

static void bitcode_and_link() {
    std::vector<char> caller = rdc_bitcode(
        "__device__ int twice(int x);\n"
        "extern \"C\" __global__ void linked(int* out, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = twice(i) + 1;\n"
        "}\n",
        "caller.hip");
    std::vector<char> callee = rdc_bitcode("__device__ int twice(int x) { return 2 * x; }\n",
                                           "callee.hip");
    // The callee goes in as a file.
    char path[] = "/tmp/hipshim-rtc-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 ? hipSuccess : hipErrorUnknown);
    FILE* file = fdopen(fd, "wb");
    std::fwrite(callee.data(), 1, callee.size(), file);
    std::fclose(file);

    const char* isa_options[] = {"-O3"};
    hiprtcJIT_option jit_options[] = {HIPRTC_JIT_IR_TO_ISA_OPT_EXT,
                                      HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT};
    void* jit_values[] = {reinterpret_cast<void*>(isa_options), reinterpret_cast<void*>(1)};
    hiprtcLinkState link = nullptr;
    CHECK_RTC(hiprtcLinkCreate(2, jit_options, jit_values, &link));
    void* binary = nullptr;
    size_t size = 0;
    EXPECT_RTC(hiprtcLinkComplete(link, &binary, &size), HIPRTC_ERROR_INVALID_INPUT);
    CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, caller.data(), caller.size(),
                                "caller", 0, nullptr, nullptr));
    CHECK_RTC(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, path, 0, nullptr, nullptr));
    EXPECT_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_PTX, caller.data(), caller.size(), "ptx", 0,
                                 nullptr, nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    EXPECT_RTC(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, "/nonexistent/x.bc", 0,
                                 nullptr, nullptr),
               HIPRTC_ERROR_INVALID_INPUT);
    CHECK_RTC(hiprtcLinkComplete(link, &binary, &size));
    std::remove(path);
    EXPECT_TRUE(binary != nullptr && size > 4 && std::memcmp(binary, "\x7f" "ELF", 4) == 0);
    hipModule_t module = nullptr;
    CHECK(hipModuleLoadData(&module, binary));
    hipFunction_t kernel = nullptr;
    CHECK(hipModuleGetFunction(&kernel, module, "linked"));
    std::vector<int> out = run_int_kernel(kernel, 100);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(out[i], 2 * i + 1);
    CHECK(hipModuleUnload(module));
    CHECK_RTC(hiprtcLinkDestroy(link));
    EXPECT_RTC(hiprtcLinkDestroy(link), HIPRTC_ERROR_INVALID_INPUT);
}

// An offload bundle of one entry, `bitcode` for `arch`, as clang -fgpu-rdc --gpu-bundle-output
// writes one: the magic, the entry count, each entry's offset, size and id, then the data.
static std::vector<char> bundle_of(const std::vector<char>& bitcode, const std::string& arch) {
    const std::string id = "hip-amdgcn-amd-amdhsa--" + arch;
    std::vector<char> out;
    auto put = [&out](const void* p, size_t n) {
        out.insert(out.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
    };
    auto put_u64 = [&put](uint64_t v) { put(&v, sizeof v); };
    put("__CLANG_OFFLOAD_BUNDLE__", 24);
    put_u64(1);
    const uint64_t header = 24 + 8 + 3 * 8 + id.size();
    put_u64(header);
    put_u64(bitcode.size());
    put_u64(id.size());
    put(id.data(), id.size());
    put(bitcode.data(), bitcode.size());
    return out;
}

// The module API's linker: hipJitInputSpirv inputs holding LLVM bitcode (bare, from a file and
// in an offload bundle) linked into a code object that loads and runs; an empty link; and
// AMD's answers to bad input (null data: hipErrorInvalidImage; any other input type:
// hipErrorInvalidValue; an unreadable file or a failed link: hipErrorInvalidConfiguration),
// with hipshim's to SPIR-V, which it cannot read (hipErrorNotSupported).
static void hip_link() {
    std::vector<char> caller = rdc_bitcode(
        "__device__ int thrice(int x);\n"
        "__device__ int bias();\n"
        "__device__ int link_global = 7;\n"
        "extern \"C\" __global__ void hip_linked(int* out, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = thrice(i) + bias() + link_global;\n"
        "}\n",
        "hip_caller.hip");
    std::vector<char> callee =
        rdc_bitcode("__device__ int thrice(int x) { return 3 * x; }\n", "thrice.hip");
    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    std::string arch = props.gcnArchName;
    arch = arch.substr(0, arch.find(':'));
    std::vector<char> bundled =
        bundle_of(rdc_bitcode("__device__ int bias() { return 5; }\n", "bias.hip"), arch);
    char path[] = "/tmp/hipshim-link-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 ? hipSuccess : hipErrorUnknown);
    FILE* file = fdopen(fd, "wb");
    std::fwrite(callee.data(), 1, callee.size(), file);
    std::fclose(file);

    const char* isa_options[] = {"-O3"};
    hipJitOption options[] = {hipJitOptionIRtoISAOptExt, hipJitOptionIRtoISAOptCountExt};
    void* values[] = {reinterpret_cast<void*>(isa_options), reinterpret_cast<void*>(1)};
    hipLinkState_t link = nullptr;
    EXPECT_ERR(hipLinkCreate(2, options, values, nullptr), hipErrorInvalidValue);
    CHECK(hipLinkCreate(2, options, values, &link));
    CHECK(hipLinkAddData(link, hipJitInputSpirv, caller.data(), caller.size(), "caller", 0, nullptr,
                         nullptr));
    CHECK(hipLinkAddFile(link, hipJitInputSpirv, path, 0, nullptr, nullptr));
    CHECK(hipLinkAddData(link, hipJitInputSpirv, bundled.data(), bundled.size(), nullptr, 0,
                         nullptr, nullptr));
    void* binary = nullptr;
    size_t size = 0;
    CHECK(hipLinkComplete(link, &binary, &size));
    std::remove(path);
    EXPECT_TRUE(binary != nullptr && size > 4 && std::memcmp(binary, "\x7f" "ELF", 4) == 0);
    hipModule_t module = nullptr;
    CHECK(hipModuleLoadData(&module, binary));
    unsigned int kernels = 0;
    EXPECT_OK(hipModuleGetFunctionCount(&kernels, module));
    EXPECT_EQ(kernels, 1u);
    hipDeviceptr_t global = nullptr;
    size_t global_size = 0;
    EXPECT_OK(hipModuleGetGlobal(&global, &global_size, module, "link_global"));
    EXPECT_EQ(global_size, sizeof(int));
    hipFunction_t kernel = nullptr;
    CHECK(hipModuleGetFunction(&kernel, module, "hip_linked"));
    std::vector<int> out = run_int_kernel(kernel, 100);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(out[i], 3 * i + 5 + 7);
    CHECK(hipModuleUnload(module));
    CHECK(hipLinkDestroy(link));
    EXPECT_ERR(hipLinkDestroy(link), hipErrorInvalidValue);
    EXPECT_ERR(hipLinkDestroy(nullptr), hipErrorInvalidValue);

    // Bad input, in AMD's order of checks.
    CHECK(hipLinkCreate(0, nullptr, nullptr, &link));
    EXPECT_ERR(hipLinkAddData(link, hipJitInputSpirv, nullptr, 4, "none", 0, nullptr, nullptr),
               hipErrorInvalidImage);
    EXPECT_ERR(hipLinkAddData(link, hipJitInputSpirv, caller.data(), 0, "none", 0, nullptr, nullptr),
               hipErrorInvalidImage);
    EXPECT_ERR(hipLinkAddData(nullptr, hipJitInputSpirv, caller.data(), caller.size(), "x", 0,
                              nullptr, nullptr),
               hipErrorInvalidHandle);
    const hipJitInputType not_amds[] = {
        hipJitInputCubin,  hipJitInputPtx,         hipJitInputFatBinary,
        hipJitInputObject, hipJitInputLibrary,     hipJitInputNvvm,
        hipJitInputLLVMBitcode, hipJitInputLLVMBundledBitcode,
        hipJitInputLLVMArchivesOfBundledBitcode};
    for (hipJitInputType type : not_amds) {
        EXPECT_ERR(hipLinkAddData(link, type, caller.data(), caller.size(), "x", 0, nullptr, nullptr),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipLinkAddFile(link, type, "/nonexistent/x.bc", 0, nullptr, nullptr),
                   hipErrorInvalidValue);
    }
    EXPECT_ERR(hipLinkAddFile(nullptr, hipJitInputSpirv, "/nonexistent/x.bc", 0, nullptr, nullptr),
               hipErrorInvalidHandle);
    EXPECT_ERR(hipLinkAddFile(link, hipJitInputSpirv, "/nonexistent/x.bc", 0, nullptr, nullptr),
               hipErrorInvalidConfiguration);
    unsigned char spirv[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x06, 0x01, 0x00};
    EXPECT_ERR(hipLinkAddData(link, hipJitInputSpirv, spirv, sizeof spirv, "spirv", 0, nullptr,
                              nullptr),
               hipErrorNotSupported);
    char text[] = "__global__ void k() {}";
    EXPECT_ERR(hipLinkAddData(link, hipJitInputSpirv, text, sizeof text, "text", 0, nullptr, nullptr),
               hipErrorInvalidConfiguration);
    EXPECT_ERR(hipLinkComplete(nullptr, &binary, &size), hipErrorInvalidValue);
    EXPECT_ERR(hipLinkComplete(link, nullptr, &size), hipErrorInvalidValue);
    EXPECT_ERR(hipLinkComplete(link, &binary, nullptr), hipErrorInvalidValue);
    // Nothing was added: a code object without kernels, as AMD's linker makes.
    CHECK(hipLinkComplete(link, &binary, &size));
    CHECK(hipModuleLoadData(&module, binary));
    EXPECT_OK(hipModuleGetFunctionCount(&kernels, module));
    EXPECT_EQ(kernels, 0u);
    CHECK(hipModuleUnload(module));
    CHECK(hipLinkDestroy(link));

    // Options: CUDA's are refused, and options need their values.
    hipJitOption cuda[] = {hipJitOptionInfoLogBuffer, hipJitOptionErrorLogBufferSizeBytes};
    void* cuda_values[2] = {};
    EXPECT_ERR(hipLinkCreate(2, cuda, cuda_values, &link), hipErrorInvalidValue);
    EXPECT_ERR(hipLinkCreate(2, options, nullptr, &link), hipErrorInvalidValue);
    EXPECT_ERR(hipLinkCreate(2, nullptr, values, &link), hipErrorInvalidValue);
}

// Without a compiler a hipLink* link fails at hipLinkComplete, AMD's code for a failed link.
static void hip_link_no_compiler() {
    hipLinkState_t link = nullptr;
    CHECK(hipLinkCreate(0, nullptr, nullptr, &link));
    char not_really_bitcode[] = "BC\xc0\xde";
    CHECK(hipLinkAddData(link, hipJitInputSpirv, not_really_bitcode, 4, nullptr, 0, nullptr,
                         nullptr));
    void* binary = nullptr;
    size_t size = 0;
    EXPECT_ERR(hipLinkComplete(link, &binary, &size), hipErrorInvalidConfiguration);
    CHECK(hipLinkDestroy(link));
}

static void no_compiler() {
    hiprtcProgram prog = nullptr;
    CHECK_RTC(hiprtcCreateProgram(&prog, "__global__ void k() {}\n", "k.hip", 0, nullptr,
                                  nullptr));
    const char* arch = "--gpu-architecture=gfx942";
    EXPECT_RTC(hiprtcCompileProgram(prog, 1, &arch), HIPRTC_ERROR_COMPILATION);
    std::string log = program_log(prog);
    std::printf("log without a compiler:\n%s", log.c_str());
    EXPECT_TRUE(log.find("HIPSHIM_RTC_CLANG") != std::string::npos);
    EXPECT_TRUE(log.find("clang-19") != std::string::npos);
    EXPECT_TRUE(log.find("scripts/setup.sh") != std::string::npos);
    CHECK_RTC(hiprtcDestroyProgram(&prog));

    hiprtcLinkState link = nullptr;
    CHECK_RTC(hiprtcLinkCreate(0, nullptr, nullptr, &link));
    char not_really_bitcode[] = "BC\xc0\xde";
    CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, not_really_bitcode, 4,
                                nullptr, 0, nullptr, nullptr));
    void* binary = nullptr;
    size_t size = 0;
    EXPECT_RTC(hiprtcLinkComplete(link, &binary, &size), HIPRTC_ERROR_LINKING);
    CHECK_RTC(hiprtcLinkDestroy(link));
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "no-compiler") == 0) {
        no_compiler();
        EXPECT_ERR(hipGetLastError(), hipSuccess);
        hip_link_no_compiler();
        return finish("rtc (no compiler)");
    }
    handle_errors();
    compile_load_launch();
    compile_for_named_architecture();
    compile_errors();
    bitcode_and_link();
    // hiprtc's failures are not HIP errors.
    EXPECT_ERR(hipGetLastError(), hipSuccess);
    hip_link();
    return finish("rtc");
}
