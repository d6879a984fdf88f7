// pointer_attributes: hipPointerGetAttributes per ROCm ABI (abi.h):
// - hipMemoryType numbering: ROCm 5 Host 0, Device 1 (managed memory is host memory with
//   isManaged set); ROCm 6 and 7 Unregistered 0, Host 1, Device 2, Managed 3;
// - memory the runtime does not know: ROCm 5 hipErrorInvalidValue; ROCm 6 and 7 success with
//   hipMemoryTypeUnregistered and device hipInvalidDeviceId (-2);
// - a null pointer or a null attributes pointer: hipErrorInvalidValue up to ROCm 6, success
//   from ROCm 7 on (CUDA 11's rule; a null pointer reads as unregistered memory).
#include "../check.h"
#include "abi.h"

#include <vector>

int main() {
    const int abi = expected_abi();
    std::printf("pointer_attributes: expecting ROCm %d behaviour\n", abi);
    const int host_type = abi == 5 ? 0 : 1, device_type = abi == 5 ? 1 : 2;
    const int managed_type = abi == 5 ? 0 : 3;

    char* dev = nullptr;
    char* pinned = nullptr;
    char* managed = nullptr;
    CHECK(hipMalloc((void**)&dev, 256));
    CHECK(hipHostMalloc((void**)&pinned, 256, 0));
    CHECK(hipMallocManaged((void**)&managed, 256, hipMemAttachGlobal));

    hipPointerAttribute_t attr;
    EXPECT_OK(hipPointerGetAttributes(&attr, dev + 8));
    EXPECT_EQ((int)attr.type, device_type);
    EXPECT_EQ(attr.device, 0);
    EXPECT_TRUE(attr.devicePointer == dev + 8);

    EXPECT_OK(hipPointerGetAttributes(&attr, pinned + 1));
    EXPECT_EQ((int)attr.type, host_type);
    EXPECT_TRUE(attr.hostPointer == pinned + 1);
    EXPECT_EQ(attr.isManaged, 0);

    EXPECT_OK(hipPointerGetAttributes(&attr, managed));
    EXPECT_EQ((int)attr.type, managed_type);
    EXPECT_EQ(attr.isManaged, 1);

    std::vector<char> mine(64);
    hipError_t unknown_result = abi == 5 ? hipErrorInvalidValue : hipSuccess;
    attr.device = 1234;
    EXPECT_ERR(hipPointerGetAttributes(&attr, mine.data()), unknown_result);
    if (abi >= 6) {
        EXPECT_EQ((int)attr.type, 0);
        EXPECT_EQ(attr.device, -2);
        EXPECT_TRUE(attr.devicePointer == nullptr && attr.hostPointer == nullptr);
    }

    // An array handle is array memory (hipPointerGetAttribute; ROCm 5 numbers it 2, ROCm 6
    // and 7 10).
    hipArray_t array = nullptr;
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    CHECK(hipMallocArray(&array, &f, 16, 4, hipArrayDefault));
    unsigned int array_type = 0;
    EXPECT_OK(hipPointerGetAttribute(&array_type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     reinterpret_cast<hipDeviceptr_t>(array)));
    EXPECT_EQ(array_type, abi == 5 ? 2 : 10);
    CHECK(hipFreeArray(array));

    // Once registered, the same memory is host memory.
    CHECK(hipHostRegister(mine.data(), mine.size(), 0));
    EXPECT_OK(hipPointerGetAttributes(&attr, mine.data() + 4));
    EXPECT_EQ((int)attr.type, host_type);
    CHECK(hipHostUnregister(mine.data()));

    hipError_t null_result = abi >= 7 ? hipSuccess : hipErrorInvalidValue;
    attr.device = 1234;
    EXPECT_ERR(hipPointerGetAttributes(&attr, nullptr), null_result);
    if (abi >= 7) {
        EXPECT_EQ((int)attr.type, 0);
        EXPECT_EQ(attr.device, -2);
    }
    EXPECT_ERR(hipPointerGetAttributes(nullptr, dev), null_result);

    CHECK(hipFree(dev));
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(managed));
    return finish("pointer_attributes");
}
