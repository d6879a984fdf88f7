// Built by Debian's hipcc with AMD's own headers: hip_ext.h declares hipExtModuleLaunchKernel
// and hipHccModuleLaunchKernel as C++ functions, so this program imports their mangled names
// (as rocBLAS's Tensile kernels do). Loads the code object named by HIPSHIM_TEST_CODE_OBJECT
// (c_tests/api/modules/kernels.hip, built by hipcc for gfx90a) and launches its `scale`
// kernel with grids in work-items. (No partial work-group here: `scale` indexes with
// blockDim, which AMD's headers make the partial size in a last partial group, so two groups
// would scale overlapping elements; c_tests/api/launch_variants.hip covers partial groups.)
#include <hip/hip_ext.h>
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                     \
    do {                                                                                \
        hipError_t e_ = (call);                                                         \
        if (e_ != hipSuccess) {                                                         \
            std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main() {
    const char* path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    if (!path) {
        std::printf("HIPSHIM_TEST_CODE_OBJECT is not set\n");
        return 2;
    }
    hipModule_t module;
    hipFunction_t scale;
    CHECK(hipModuleLoad(&module, path));
    CHECK(hipModuleGetFunction(&scale, module, "scale"));

    const int n = 256;
    float host[n];
    for (float& v : host) v = 1.0f;
    float* data;
    CHECK(hipMalloc(&data, sizeof host));
    CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));

    // 128 work-items (two groups of 64, not 128 groups): the kernel's own bound (n = 256)
    // does not stop the elements past 128, the grid does.
    float factor = 2.0f;
    int count = n;
    void* params[] = {&data, &factor, &count};
    CHECK(hipExtModuleLaunchKernel(scale, 128, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr,
                                   start, stop, 0));
    CHECK(hipEventSynchronize(stop));
    // The older name: 192 work-items, times 3.
    factor = 3.0f;
    CHECK(hipHccModuleLaunchKernel(scale, 192, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr,
                                   nullptr, nullptr));
    CHECK(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        float want = (i < 128 ? 2.0f : 1.0f) * (i < 192 ? 3.0f : 1.0f);
        if (host[i] != want) {
            if (wrong < 4) std::printf("data[%d] = %g\n", i, host[i]);
            ++wrong;
        }
    }
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    CHECK(hipModuleUnload(module));
    if (wrong != 0 || ms < 0) {
        std::printf("ext_module_launch: FAILED (%d wrong values, %f ms)\n", wrong, ms);
        return 1;
    }
    std::printf("ext_module_launch: PASSED\n");
    return 0;
}
