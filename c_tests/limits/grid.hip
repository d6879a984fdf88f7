// hipshim-test: expect-stderr=maxGridSize expect-stderr=2^32-1
//
// grid: a launch whose grid has more blocks in a dimension than the device reports as
// maxGridSize, or more work-items than the AQL packet's 32-bit grid sizes hold, is
// hipErrorInvalidConfiguration through hipLaunchKernel and <<<>>> (hipModuleLaunchKernel:
// modules/grid_module.hip); nothing runs, and valid launches still do. (AMD's runtime
// reports the same maxGridSize, 2^31-1, but launches grids of up to 2^32-1 blocks.)
#include "../check.h"

__global__ void count(int* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1);
}

int main() {
    hipDeviceProp_t props;
    EXPECT_OK(hipGetDeviceProperties(&props, 0));
    const hipDeviceAttribute_t attrs[3] = {hipDeviceAttributeMaxGridDimX,
                                           hipDeviceAttributeMaxGridDimY,
                                           hipDeviceAttributeMaxGridDimZ};
    for (int d = 0; d < 3; ++d) {
        int value = 0;
        EXPECT_OK(hipDeviceGetAttribute(&value, attrs[d], 0));
        EXPECT_EQ(value, props.maxGridSize[d]);
        EXPECT_TRUE(value > 0);
    }
    const unsigned max_x = (unsigned)props.maxGridSize[0];
    const unsigned max_y = (unsigned)props.maxGridSize[1];
    const unsigned max_z = (unsigned)props.maxGridSize[2];

    int* counter = nullptr;
    EXPECT_OK(hipMalloc(&counter, sizeof(int)));
    EXPECT_OK(hipMemset(counter, 0, sizeof(int)));
    void* args[] = {&counter};
    const void* k = reinterpret_cast<const void*>(&count);

    // More blocks than maxGridSize in each dimension (each still fits the packet when
    // maxGridSize is below 2^32-1).
    if (max_x < 0xffffffffu)
        EXPECT_ERR(hipLaunchKernel(k, dim3(max_x + 1), dim3(1), args, 0, nullptr),
                   hipErrorInvalidConfiguration);
    if (max_y < 0xffffffffu)
        EXPECT_ERR(hipLaunchKernel(k, dim3(1, max_y + 1), dim3(1), args, 0, nullptr),
                   hipErrorInvalidConfiguration);
    if (max_z < 0xffffffffu)
        EXPECT_ERR(hipLaunchKernel(k, dim3(1, 1, max_z + 1), dim3(1), args, 0, nullptr),
                   hipErrorInvalidConfiguration);
    EXPECT_ERR(hipLaunchKernel(k, dim3(0xffffffffu), dim3(1), args, 0, nullptr),
               hipErrorInvalidConfiguration);
    // Within maxGridSize but 2^32 work-items: the packet's grid size cannot hold it.
    EXPECT_ERR(hipLaunchKernel(k, dim3(1u << 22), dim3(1024), args, 0, nullptr),
               hipErrorInvalidConfiguration);
    EXPECT_ERR(hipLaunchKernel(k, dim3(1, 1u << 23), dim3(1, 512), args, 0, nullptr),
               hipErrorInvalidConfiguration);
    // The same through <<<>>>: the error is the launch's last error.
    if (max_x < 0xffffffffu) {
        count<<<dim3(max_x + 1), 1>>>(counter);
        EXPECT_ERR(hipGetLastError(), hipErrorInvalidConfiguration);
    }
    count<<<dim3(1, 1, 1u << 24), dim3(1, 1, 256)>>>(counter);
    EXPECT_ERR(hipGetLastError(), hipErrorInvalidConfiguration);

    // Nothing ran; a valid grid in every dimension does.
    count<<<dim3(3, 2, 2), 64>>>(counter);
    EXPECT_OK(hipGetLastError());
    EXPECT_OK(hipDeviceSynchronize());
    int host = -1;
    EXPECT_OK(hipMemcpy(&host, counter, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host, 12);
    EXPECT_OK(hipFree(counter));
    return finish("grid");
}
