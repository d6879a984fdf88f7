// grid_module: hipModuleLaunchKernel refuses grids past maxGridSize or past the packet's
// 32-bit work-item counts with hipErrorInvalidConfiguration, like hipLaunchKernel (see
// ../grid.hip); a valid launch of the same function still runs. The code object is
// c_tests/api/modules/kernels.hip, built by tests/c_tests_limits.rs and named by
// HIPSHIM_TEST_CODE_OBJECT.
#include "../../check.h"

#include <cstdlib>

int main() {
    const char* path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    if (!path) {
        std::fprintf(stderr, "HIPSHIM_TEST_CODE_OBJECT is not set\n");
        return 2;
    }
    hipModule_t module;
    hipFunction_t scale;
    EXPECT_OK(hipModuleLoad(&module, path));
    EXPECT_OK(hipModuleGetFunction(&scale, module, "scale"));
    int max_x = 0;
    EXPECT_OK(hipDeviceGetAttribute(&max_x, hipDeviceAttributeMaxGridDimX, 0));

    const int n = 256;
    float host[n];
    for (int i = 0; i < n; ++i) host[i] = (float)i;
    float* data = nullptr;
    EXPECT_OK(hipMalloc(&data, sizeof host));
    EXPECT_OK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
    float factor = 2.0f;
    int count = n;
    void* params[] = {&data, &factor, &count};

    if ((unsigned)max_x < 0xffffffffu)
        EXPECT_ERR(hipModuleLaunchKernel(scale, (unsigned)max_x + 1, 1, 1, 1, 1, 1, 0, nullptr,
                                         params, nullptr),
                   hipErrorInvalidConfiguration);
    EXPECT_ERR(hipModuleLaunchKernel(scale, 0xffffffffu, 1, 1, 1, 1, 1, 0, nullptr, params,
                                     nullptr),
               hipErrorInvalidConfiguration);
    EXPECT_ERR(hipModuleLaunchKernel(scale, 1u << 22, 1, 1, 1024, 1, 1, 0, nullptr, params,
                                     nullptr),
               hipErrorInvalidConfiguration);

    EXPECT_OK(hipModuleLaunchKernel(scale, n / 64, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_OK(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host[0], 0);
    EXPECT_EQ(host[255], 510);
    EXPECT_OK(hipFree(data));
    EXPECT_OK(hipModuleUnload(module));
    return finish("grid_module");
}
