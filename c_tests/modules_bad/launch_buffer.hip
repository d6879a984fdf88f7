// hipModuleLaunchKernel with its arguments in one buffer: `extra` =
// {HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
// HIP_LAUNCH_PARAM_END}. The size must lie between what the explicit arguments need and
// the kernel's kernarg segment size (here both are 32 bytes); anything else is
// hipErrorInvalidValue and nothing runs. AMD's ROCm 5.2 runtime ignores the size (it
// reads the arguments past a short buffer and accepts any larger one); hipshim holds the
// caller to it, as CUDA does, and a huge size never becomes a huge read.
#include "../check.h"
#include "own_bundle.h"

#include <cstdint>

struct Pair {
    int a;
    double b;
};

// Explicit arguments char @0, Pair @8, pointer @24: 32 bytes, no hidden arguments.
extern "C" __global__ void mixed(char c, Pair p, long long* out) {
    out[0] = c;
    out[1] = p.a;
    out[2] = (long long)p.b;
}

struct Packed {
    char c;
    char pad[7];
    Pair p;
    long long* out;
};
static_assert(sizeof(Packed) == 32, "the kernel's kernarg layout");

// Launches `f` with `size` claimed for a buffer that really holds the arguments (and
// slack behind them, so no size below makes the runtime read outside it).
static hipError_t launch(hipFunction_t f, long long* out, size_t size) {
    static unsigned char buffer[1 << 16];
    Packed args = {};
    args.c = 'A';
    args.p.a = -7;
    args.p.b = 123.0;
    args.out = out;
    std::memcpy(buffer, &args, sizeof args);
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &size, HIP_LAUNCH_PARAM_END};
    return hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra);
}

// What the kernel wrote (0s if it did not run).
static void result(long long* out, long long got[3]) {
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_OK(hipMemcpy(got, out, 3 * sizeof(long long), hipMemcpyDeviceToHost));
    EXPECT_OK(hipMemset(out, 0, 3 * sizeof(long long)));
}

int main() {
    const Bytes bundle = own_bundle();
    hipModule_t module = nullptr;
    hipFunction_t f = nullptr;
    EXPECT_OK(hipModuleLoadData(&module, bundle.data()));
    EXPECT_OK(hipModuleGetFunction(&f, module, "mixed"));
    long long* out = nullptr;
    EXPECT_OK(hipMalloc(&out, 3 * sizeof(long long)));
    EXPECT_OK(hipMemset(out, 0, 3 * sizeof(long long)));
    long long got[3];

    EXPECT_OK(launch(f, out, sizeof(Packed)));
    result(out, got);
    EXPECT_TRUE(got[0] == 'A' && got[1] == -7 && got[2] == 123);

    for (size_t size : {sizeof(Packed) + 1, sizeof(Packed) + 8, size_t(4096), size_t(1) << 20,
                        size_t(1) << 40, SIZE_MAX, sizeof(Packed) - 1, size_t(8), size_t(0)}) {
        hipError_t e = launch(f, out, size);
        if (e != hipErrorInvalidValue) {
            std::fprintf(stderr, "FAIL BUFFER_SIZE %zu: expected hipErrorInvalidValue, got %s\n",
                         size, err_name(e));
            ++failures;
        }
        result(out, got);
        EXPECT_TRUE(got[0] == 0 && got[1] == 0 && got[2] == 0);
    }
    (void)hipGetLastError();

    EXPECT_OK(hipFree(out));
    EXPECT_OK(hipModuleUnload(module));
    return finish("launch_buffer");
}
