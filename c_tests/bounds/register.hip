// bounds/register: hipHostRegister of memory that is not (all) mapped fails with AMD's error
// instead of pinning pages that do not exist (which would let a later copy or kernel fault
// the process): an unmapped range, a range whose second page is unmapped, a range that runs
// off the end of a mapping. The mapped part alone still registers and copies.
// hipshim-test: targets=gfx942 expect-stderr=hsa_amd_memory_lock
#include "../check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

// What AMD's runtime returns when the HSA runtime cannot lock the range: hipErrorInvalidValue
// since after ROCm 5.2 (hip-tests 5.4 check it); Debian's ROCm 5.2 libamdhip64.so.5 on
// hsasim calls hsa_amd_memory_lock_to_pool, gets HSA_STATUS_ERROR and returned
// hipErrorOutOfMemory.
static const hipError_t LOCK_FAILED = hipErrorInvalidValue;

int main() {
    // Start the runtime first: its own mappings could otherwise fill the hole made below.
    EXPECT_OK(hipFree(nullptr));
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char* two = (unsigned char*)mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_TRUE(two != MAP_FAILED);
    EXPECT_EQ(munmap(two + page, page), 0);

    // Partly unmapped: the second page is gone.
    EXPECT_ERR(hipHostRegister(two, 2 * page, hipHostRegisterDefault), LOCK_FAILED);
    EXPECT_ERR(hipHostRegister(two + page / 2, page, hipHostRegisterDefault), LOCK_FAILED);
    // Wholly unmapped.
    EXPECT_ERR(hipHostRegister(two + page, page, hipHostRegisterDefault), LOCK_FAILED);
    // Far past the mapping (but no address overflow).
    EXPECT_ERR(hipHostRegister(two, (size_t)1 << 46, hipHostRegisterMapped), LOCK_FAILED);
    // A failed registration leaves nothing behind: the range is not registered. (AMD's 5.2
    // runtime aborts in hipHostUnregister here, "Memobj map does not have ptr".)
    EXPECT_ERR(hipHostUnregister(two), hipErrorHostMemoryNotRegistered);
    void* dptr = nullptr;
    EXPECT_ERR(hipHostGetDevicePointer(&dptr, two, 0), hipErrorInvalidValue);

    // The mapped page alone registers, copies and unregisters.
    for (size_t k = 0; k < page; ++k) two[k] = (unsigned char)k;
    EXPECT_OK(hipHostRegister(two, page, hipHostRegisterDefault));
    unsigned char* dev = nullptr;
    EXPECT_OK(hipMalloc(&dev, page));
    EXPECT_OK(hipMemcpy(dev, two, page, hipMemcpyDefault));
    std::vector<unsigned char> back(page);
    EXPECT_OK(hipMemcpy(back.data(), dev, page, hipMemcpyDefault));
    EXPECT_EQ(back[page - 1], (unsigned char)(page - 1));
    EXPECT_OK(hipHostUnregister(two));
    EXPECT_OK(hipFree(dev));
    EXPECT_EQ(munmap(two, page), 0);
    return finish("bounds/register");
}
