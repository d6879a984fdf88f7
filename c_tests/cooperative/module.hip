// module: hipModuleLaunchCooperativeKernel of a kernel loaded with hipModuleLoadData (a raw
// code object built from kernels/coop_kernels.hip, passed in HIPSHIM_TEST_CODE_OBJECT by
// tests/c_tests_cooperative.rs): grid sync across work-groups, the too-large error.
#include "../check.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

int main() {
    const char* path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    if (!path) {
        std::fprintf(stderr, "HIPSHIM_TEST_CODE_OBJECT is not set\n");
        return 2;
    }
    std::ifstream f(path, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    hipModule_t module = nullptr;
    CHECK(hipModuleLoadData(&module, image.data()));
    hipFunction_t kernel = nullptr;
    CHECK(hipModuleGetFunction(&kernel, module, "neighbour_sum"));

    const unsigned blocks = 6, block = 128, n = blocks * block;
    unsigned *data = nullptr, *out = nullptr;
    CHECK(hipMalloc(&data, n * sizeof(unsigned)));
    CHECK(hipMalloc(&out, n * sizeof(unsigned)));
    std::vector<unsigned> host(n);
    for (unsigned i = 0; i < n; ++i) host[i] = i * 3 + 1;
    CHECK(hipMemcpy(data, host.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    void* args[] = {&data, &out};
    EXPECT_OK(hipModuleLaunchCooperativeKernel(kernel, blocks, 1, 1, block, 1, 1, 0, stream,
                                               args));
    CHECK(hipStreamSynchronize(stream));
    std::vector<unsigned> got(n);
    CHECK(hipMemcpy(got.data(), out, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (unsigned i = 0; i < n; ++i) wrong += got[i] != host[i] + 2 * host[(i + block) % n];
    EXPECT_EQ(wrong, 0);
    std::printf("module grid sync: %u work-groups of %u, %d wrong\n", blocks, block, wrong);

    int per_cu = 0;
    CHECK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, kernel, block, 0));
    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    const unsigned too_many = per_cu * props.multiProcessorCount + 1;
    EXPECT_ERR(hipModuleLaunchCooperativeKernel(kernel, too_many, 1, 1, block, 1, 1, 0, stream,
                                                args),
               hipErrorCooperativeLaunchTooLarge);

    CHECK(hipStreamDestroy(stream));
    CHECK(hipModuleUnload(module));
    return finish("module");
}
