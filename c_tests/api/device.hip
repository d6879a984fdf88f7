// device: properties in both layouts (R0600 through the header, R0000 through the export
// ROCm 5 binaries call) agree with each other and with hipDeviceGetAttribute; names, PCI
// id, UUID, limits, flags, reset, hipChooseDevice, hipGetProcAddress.
#include "../check.h"

#include <cstring>
#include <string>

// ROCm 5's hipDeviceProp_t (AMD's R0000 layout, 792 bytes), as an old binary sees it.
struct PropR0000 {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    int memoryClockRate;
    int memoryBusWidth;
    size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    int computeMode;
    int clockInstructionRate;
    hipDeviceArch_t arch;
    int concurrentKernels;
    int pciDomainID;
    int pciBusID;
    int pciDeviceID;
    size_t maxSharedMemoryPerMultiProcessor;
    int isMultiGpuBoard;
    int canMapHostMemory;
    int gcnArch;
    char gcnArchName[256];
    int integrated;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    int maxTexture1DLinear;
    int maxTexture1D;
    int maxTexture2D[2];
    int maxTexture3D[3];
    unsigned int* hdpMemFlushCntl;
    unsigned int* hdpRegFlushCntl;
    size_t memPitch;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int kernelExecTimeoutEnabled;
    int ECCEnabled;
    int tccDriver;
    int cooperativeMultiDeviceUnmatchedFunc;
    int cooperativeMultiDeviceUnmatchedGridDim;
    int cooperativeMultiDeviceUnmatchedBlockDim;
    int cooperativeMultiDeviceUnmatchedSharedMem;
    int isLargeBar;
    int asicRevision;
    int managedMemory;
    int directManagedMemAccessFromHost;
    int concurrentManagedAccess;
    int pageableMemoryAccess;
    int pageableMemoryAccessUsesHostPageTables;
};
static_assert(sizeof(PropR0000) == 792, "R0000 layout");
static_assert(offsetof(PropR0000, gcnArchName) == 396, "R0000 layout");
static_assert(offsetof(PropR0000, pageableMemoryAccessUsesHostPageTables) == 788, "R0000");
static_assert(sizeof(hipDeviceProp_t) == 1472, "R0600 layout");
static_assert(offsetof(hipDeviceProp_t, gcnArchName) == 1160, "R0600 layout");
static_assert(offsetof(hipDeviceProp_t, asicRevision) == 1468, "R0600 layout");
static_assert(sizeof(hipPointerAttribute_t) == 32, "pointer attributes");
static_assert(sizeof(hipFuncAttributes) == 56, "function attributes");

extern "C" hipError_t hipGetDevicePropertiesR0000(PropR0000* prop, int device);
extern "C" hipError_t hipChooseDeviceR0000(int* device, const PropR0000* prop);

static int attr(hipDeviceAttribute_t a) {
    int v = -12345;
    EXPECT_OK(hipDeviceGetAttribute(&v, a, 0));
    return v;
}

int main() {
    int count = 0;
    EXPECT_OK(hipGetDeviceCount(&count));
    EXPECT_TRUE(count >= 1);

    hipDeviceProp_t p;
    std::memset(&p, 0xcc, sizeof p);
    EXPECT_OK(hipGetDeviceProperties(&p, 0));
    PropR0000 old;
    std::memset(&old, 0xcc, sizeof old);
    EXPECT_OK(hipGetDevicePropertiesR0000(&old, 0));

    std::printf("device 0: %s (%s), %d CUs, wave %d, LDS %zu, %zu MiB, cc %d.%d\n", p.name,
                p.gcnArchName, p.multiProcessorCount, p.warpSize, p.sharedMemPerBlock,
                p.totalGlobalMem >> 20, p.major, p.minor);

    // Both layouts say the same.
    EXPECT_TRUE(std::strcmp(p.name, old.name) == 0);
    EXPECT_TRUE(std::strcmp(p.gcnArchName, old.gcnArchName) == 0);
    EXPECT_EQ(p.totalGlobalMem, old.totalGlobalMem);
    EXPECT_EQ(p.sharedMemPerBlock, old.sharedMemPerBlock);
    EXPECT_EQ(p.warpSize, old.warpSize);
    EXPECT_EQ(p.maxThreadsPerBlock, old.maxThreadsPerBlock);
    EXPECT_EQ(p.maxThreadsDim[2], old.maxThreadsDim[2]);
    EXPECT_EQ(p.maxGridSize[0], old.maxGridSize[0]);
    EXPECT_EQ(p.clockRate, old.clockRate);
    EXPECT_EQ(p.major, old.major);
    EXPECT_EQ(p.minor, old.minor);
    EXPECT_EQ(p.multiProcessorCount, old.multiProcessorCount);
    EXPECT_EQ(p.l2CacheSize, old.l2CacheSize);
    EXPECT_EQ(p.pciBusID, old.pciBusID);
    EXPECT_EQ(p.memPitch, old.memPitch);
    EXPECT_EQ(p.managedMemory, old.managedMemory);
    EXPECT_EQ(p.asicRevision, old.asicRevision);
    EXPECT_EQ(old.pageableMemoryAccessUsesHostPageTables, p.pageableMemoryAccessUsesHostPageTables);

    // Plausible values for a gfx9 GPU.
    const char* gfx = std::getenv("HSASIM_GFX");
    std::string arch = p.gcnArchName;
    EXPECT_TRUE(gfx == nullptr || arch.rfind(gfx, 0) == 0);
    EXPECT_EQ(p.warpSize, 64);
    EXPECT_EQ(p.maxThreadsPerBlock, 1024);
    EXPECT_EQ(p.major, 9);
    EXPECT_TRUE(p.multiProcessorCount > 0);
    EXPECT_TRUE(p.sharedMemPerBlock >= 32768);
    EXPECT_EQ(old.gcnArch, arch.rfind("gfx942", 0) == 0 ? 942 : 910);
    EXPECT_EQ(p.minor, arch.rfind("gfx942", 0) == 0 ? 4 : 0);
    EXPECT_EQ(p.arch.hasDoubles, 1);
    EXPECT_EQ(p.arch.hasDynamicParallelism, 0);
    // As AMD's device macros say for its targets.
    EXPECT_EQ(p.arch.hasFunnelShift, 0);
    EXPECT_EQ(p.arch.hasSyncThreadsExt, 0);

    // Attributes agree with the properties.
    EXPECT_EQ(attr(hipDeviceAttributeMultiprocessorCount), p.multiProcessorCount);
    EXPECT_EQ(attr(hipDeviceAttributeWarpSize), p.warpSize);
    EXPECT_EQ(attr(hipDeviceAttributeMaxThreadsPerBlock), p.maxThreadsPerBlock);
    EXPECT_EQ(attr(hipDeviceAttributeMaxBlockDimX), p.maxThreadsDim[0]);
    EXPECT_EQ(attr(hipDeviceAttributeMaxGridDimY), p.maxGridSize[1]);
    EXPECT_EQ(attr(hipDeviceAttributeMaxSharedMemoryPerBlock), (int)p.sharedMemPerBlock);
    EXPECT_EQ(attr(hipDeviceAttributeClockRate), p.clockRate);
    EXPECT_EQ(attr(hipDeviceAttributeMemoryClockRate), p.memoryClockRate);
    EXPECT_EQ(attr(hipDeviceAttributeMemoryBusWidth), p.memoryBusWidth);
    EXPECT_EQ(attr(hipDeviceAttributeComputeCapabilityMajor), p.major);
    EXPECT_EQ(attr(hipDeviceAttributeComputeCapabilityMinor), p.minor);
    EXPECT_EQ(attr(hipDeviceAttributeL2CacheSize), p.l2CacheSize);
    EXPECT_EQ(attr(hipDeviceAttributePciBusId), p.pciBusID);
    EXPECT_EQ(attr(hipDeviceAttributePciDeviceId), p.pciDeviceID);
    EXPECT_EQ(attr(hipDeviceAttributePciDomainID), p.pciDomainID);
    EXPECT_EQ(attr(hipDeviceAttributeMaxThreadsPerMultiProcessor), p.maxThreadsPerMultiProcessor);
    EXPECT_EQ(attr(hipDeviceAttributeManagedMemory), p.managedMemory);
    EXPECT_EQ(attr(hipDeviceAttributeCanMapHostMemory), 1);
    EXPECT_EQ(attr(hipDeviceAttributeMaxRegistersPerBlock), p.regsPerBlock);
    EXPECT_EQ(attr(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor),
              (int)p.maxSharedMemoryPerMultiProcessor);
    EXPECT_EQ(attr(hipDeviceAttributeClockInstructionRate), p.clockInstructionRate);
    EXPECT_EQ(attr(hipDeviceAttributeTotalGlobalMem),
              p.totalGlobalMem > 0x7fffffff ? 0x7fffffff : (int)p.totalGlobalMem);
    EXPECT_EQ(attr(hipDeviceAttributeAsyncEngineCount), p.asyncEngineCount);
    EXPECT_EQ(attr(hipDeviceAttributeEccEnabled), p.ECCEnabled);
    int v = 0;
    EXPECT_ERR(hipDeviceGetAttribute(&v, hipDeviceAttributeLuid, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetAttribute(&v, static_cast<hipDeviceAttribute_t>(5000), 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, count), hipErrorInvalidDevice);
    EXPECT_ERR(hipDeviceGetAttribute(nullptr, hipDeviceAttributeWarpSize, 0), hipErrorInvalidValue);

    // Names, PCI id, UUID, memory, compute capability.
    char name[256];
    EXPECT_OK(hipDeviceGetName(name, sizeof name, 0));
    EXPECT_TRUE(std::strcmp(name, p.name) == 0);
    char shortname[4];
    EXPECT_OK(hipDeviceGetName(shortname, sizeof shortname, 0));
    EXPECT_EQ(std::strlen(shortname), 3);
    char bus[32];
    EXPECT_OK(hipDeviceGetPCIBusId(bus, sizeof bus, 0));
    char expect_bus[32];
    std::snprintf(expect_bus, sizeof expect_bus, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID,
                  p.pciDeviceID);
    EXPECT_TRUE(std::strcmp(bus, expect_bus) == 0);
    int found = -1;
    EXPECT_OK(hipDeviceGetByPCIBusId(&found, bus));
    EXPECT_EQ(found, 0);
    EXPECT_ERR(hipDeviceGetByPCIBusId(&found, "ffff:ff:1f.0"), hipErrorInvalidDevice);
    hipUUID uuid;
    EXPECT_OK(hipDeviceGetUuid(&uuid, 0));
    EXPECT_TRUE(std::memcmp(uuid.bytes, p.uuid.bytes, 16) == 0);
    size_t total = 0;
    EXPECT_OK(hipDeviceTotalMem(&total, 0));
    EXPECT_EQ(total, p.totalGlobalMem);
    int major = 0, minor = 0;
    EXPECT_OK(hipDeviceComputeCapability(&major, &minor, 0));
    EXPECT_EQ(major, p.major);
    EXPECT_EQ(minor, p.minor);
    hipDevice_t dev = -1;
    EXPECT_OK(hipDeviceGet(&dev, 0));
    EXPECT_EQ(dev, 0);

    // Limits: recorded and read back; an unknown limit is unsupported.
    size_t limit = 0;
    EXPECT_OK(hipDeviceGetLimit(&limit, hipLimitStackSize));
    EXPECT_TRUE(limit > 0);
    EXPECT_OK(hipDeviceSetLimit(hipLimitStackSize, 4096));
    EXPECT_OK(hipDeviceGetLimit(&limit, hipLimitStackSize));
    EXPECT_EQ(limit, 4096);
    EXPECT_OK(hipDeviceSetLimit(hipLimitMallocHeapSize, 1 << 20));
    EXPECT_OK(hipDeviceGetLimit(&limit, hipLimitMallocHeapSize));
    EXPECT_EQ(limit, 1 << 20);
    EXPECT_OK(hipDeviceSetLimit(hipLimitPrintfFifoSize, 2 << 20));
    EXPECT_ERR(hipDeviceGetLimit(&limit, static_cast<hipLimit_t>(7)), hipErrorUnsupportedLimit);
    EXPECT_ERR(hipDeviceSetLimit(static_cast<hipLimit_t>(7), 1), hipErrorUnsupportedLimit);

    // Flags.
    unsigned flags = 99;
    EXPECT_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync | hipDeviceMapHost));
    EXPECT_OK(hipGetDeviceFlags(&flags));
    EXPECT_EQ(flags, hipDeviceScheduleBlockingSync);  // AMD answers the scheduling part only
    EXPECT_ERR(hipSetDeviceFlags(hipDeviceScheduleSpin | hipDeviceScheduleYield),
               hipErrorInvalidValue);
    EXPECT_ERR(hipSetDeviceFlags(0x1000), hipErrorInvalidValue);

    // Reset frees allocations and forgets limits and flags.
    void* buf = nullptr;
    EXPECT_OK(hipMalloc(&buf, 1 << 20));
    EXPECT_OK(hipDeviceReset());
    hipPointerAttribute_t pa;
    EXPECT_OK(hipPointerGetAttributes(&pa, buf));
    EXPECT_EQ(pa.type, hipMemoryTypeUnregistered);
    EXPECT_OK(hipGetDeviceFlags(&flags));
    EXPECT_EQ(flags, 0);
    EXPECT_OK(hipDeviceGetLimit(&limit, hipLimitStackSize));
    EXPECT_TRUE(limit != 4096);
    EXPECT_OK(hipMalloc(&buf, 256)); // the device still works
    EXPECT_OK(hipFree(buf));

    // hipChooseDevice: both layouts.
    hipDeviceProp_t want;
    std::memset(&want, 0, sizeof want);
    want.major = 9;
    int chosen = -1;
    EXPECT_OK(hipChooseDevice(&chosen, &want));
    EXPECT_TRUE(chosen >= 0 && chosen < count);
    PropR0000 want_old;
    std::memset(&want_old, 0, sizeof want_old);
    want_old.multiProcessorCount = 1;
    chosen = -1;
    EXPECT_OK(hipChooseDeviceR0000(&chosen, &want_old));
    EXPECT_TRUE(chosen >= 0 && chosen < count);
    EXPECT_ERR(hipChooseDevice(nullptr, &want), hipErrorInvalidValue);

    // hipGetProcAddress: our own exports, version-selected property layouts.
    void* fn = nullptr;
    hipDriverProcAddressQueryResult status = HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    EXPECT_OK(hipGetProcAddress("hipMalloc", &fn, 600, 0, &status));
    EXPECT_TRUE(fn == reinterpret_cast<void*>(static_cast<hipError_t (*)(void**, size_t)>(&hipMalloc)));
    EXPECT_EQ(status, HIP_GET_PROC_ADDRESS_SUCCESS);
    EXPECT_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 600, 0, &status));
    EXPECT_TRUE(fn == reinterpret_cast<void*>(&hipGetDevicePropertiesR0600));
    EXPECT_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 502, 0, &status));
    EXPECT_TRUE(fn != reinterpret_cast<void*>(&hipGetDevicePropertiesR0600) && fn != nullptr);
    EXPECT_ERR(hipGetProcAddress("notAHipFunction", &fn, 600, 0, &status), hipErrorInvalidValue);
    EXPECT_EQ(status, HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT_ERR(hipGetProcAddress(nullptr, &fn, 600, 0, nullptr), hipErrorInvalidValue);

    return finish("device");
}
