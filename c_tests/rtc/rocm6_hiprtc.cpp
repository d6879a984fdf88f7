// rocm6_hiprtc: a program that uses hiprtc alone, linked as ROCm 6 and 7 programs are: against
// a libhiprtc.so.6 whose hiprtc* names carry no symbol version (AMD's version script has no
// node), with no libamdhip64 at all. tests/c_tests_rtc.rs links it against a stand-in for
// AMD's library and runs it with hipshim's lib dir, where libhiprtc.so.6 is hipshim.
#include <hip/hiprtc.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
    int major = 0, minor = 0;
    if (hiprtcVersion(&major, &minor) != HIPRTC_SUCCESS || major < 6) {
        std::fprintf(stderr, "hiprtcVersion: %d.%d\n", major, minor);
        return 1;
    }
    hiprtcProgram prog;
    const char* source = "template <typename T> __global__ void k(T* p) { p[0] = T(1); }\n";
    if (hiprtcCreateProgram(&prog, source, "k.hip", 0, nullptr, nullptr) != HIPRTC_SUCCESS ||
        hiprtcAddNameExpression(prog, "&k<double>") != HIPRTC_SUCCESS) {
        return 1;
    }
    const char* options[] = {"--gpu-architecture=gfx942"};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 1, options);
    if (compiled != HIPRTC_SUCCESS) {
        std::fprintf(stderr, "compile: %s\n", hiprtcGetErrorString(compiled));
        return 1;
    }
    const char* lowered = nullptr;
    size_t size = 0;
    if (hiprtcGetLoweredName(prog, "&k<double>", &lowered) != HIPRTC_SUCCESS ||
        std::strcmp(lowered, "_Z1kIdEvPT_") != 0 ||
        hiprtcGetCodeSize(prog, &size) != HIPRTC_SUCCESS || size < 64) {
        std::fprintf(stderr, "lowered %s, code size %zu\n", lowered ? lowered : "-", size);
        return 1;
    }
    std::vector<char> code(size);
    if (hiprtcGetCode(prog, code.data()) != HIPRTC_SUCCESS ||
        std::memcmp(code.data(), "\x7f" "ELF", 4) != 0 ||
        hiprtcDestroyProgram(&prog) != HIPRTC_SUCCESS) {
        return 1;
    }
    std::printf("rocm6_hiprtc: PASSED (%s, %zu bytes)\n", lowered, size);
    return 0;
}
