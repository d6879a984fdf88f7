// Modules, functions and occupancy.
#ifndef HIPSHIM_API_MODULE_H
#define HIPSHIM_API_MODULE_H

#include <stdint.h>

#include "hip_error.h"
#include "hip_types.h"

// The `extra` argument of hipModuleLaunchKernel: {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf,
// HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}, with the kernel's explicit
// arguments laid out in `buf` at their kernarg offsets.
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)
#define HIP_LAUNCH_PARAM_END ((void*)0x03)

// JIT options: hipModuleLoadDataEx accepts and ignores them (code objects are final);
// hipLinkCreate takes the two _Ext ones and refuses CUDA's.
typedef enum hipJitOption {
    hipJitOptionMaxRegisters = 0,
    hipJitOptionThreadsPerBlock,
    hipJitOptionWallTime,
    hipJitOptionInfoLogBuffer,
    hipJitOptionInfoLogBufferSizeBytes,
    hipJitOptionErrorLogBuffer,
    hipJitOptionErrorLogBufferSizeBytes,
    hipJitOptionOptimizationLevel,
    hipJitOptionTargetFromContext,
    hipJitOptionTarget,
    hipJitOptionFallbackStrategy,
    hipJitOptionGenerateDebugInfo,
    hipJitOptionLogVerbose,
    hipJitOptionGenerateLineInfo,
    hipJitOptionCacheMode,
    hipJitOptionSm3xOpt,
    hipJitOptionFastCompile,
    hipJitOptionGlobalSymbolNames,
    hipJitOptionGlobalSymbolAddresses,
    hipJitOptionGlobalSymbolCount,
    hipJitOptionLto,
    hipJitOptionFtz,
    hipJitOptionPrecDiv,
    hipJitOptionPrecSqrt,
    hipJitOptionFma,
    hipJitOptionPositionIndependentCode,
    hipJitOptionMinCTAPerSM,
    hipJitOptionMaxThreadsPerBlock,
    hipJitOptionOverrideDirectiveValues,
    hipJitOptionNumOptions,
    // The linker's own (hipLinkCreate): compiler options for the link, and their number.
    hipJitOptionIRtoISAOptExt = 10000,
    hipJitOptionIRtoISAOptCountExt
} hipJitOption;

// What a hipLinkAddData/AddFile input is. AMD's linker takes hipJitInputSpirv only (the others
// are hipErrorInvalidValue); hipshim's reads what such an input holds: LLVM bitcode for an AMD
// GPU, bare or in an offload bundle, is linked; SPIR-V is hipErrorNotSupported (hipshim has no
// SPIR-V reader).
typedef enum hipJitInputType {
    hipJitInputCubin = 0,
    hipJitInputPtx,
    hipJitInputFatBinary,
    hipJitInputObject,
    hipJitInputLibrary,
    hipJitInputNvvm,
    hipJitNumLegacyInputTypes,
    hipJitInputLLVMBitcode = 100,
    hipJitInputLLVMBundledBitcode = 101,
    hipJitInputLLVMArchivesOfBundledBitcode = 102,
    hipJitInputSpirv = 103,
    hipJitNumInputTypes = 10
} hipJitInputType;
typedef struct ihipLinkState_t* hipLinkState_t;

// hipFuncGetAttributes (56 bytes on LP64).
typedef struct hipFuncAttributes {
    int binaryVersion;
    int cacheModeCA;
    size_t constSizeBytes;
    size_t localSizeBytes;           // scratch bytes per thread
    int maxDynamicSharedSizeBytes;   // device LDS minus the kernel's static LDS
    int maxThreadsPerBlock;          // the kernel's launch bound
    int numRegs;                     // VGPRs per thread
    int preferredShmemCarveout;
    int ptxVersion;
    size_t sharedSizeBytes;          // static LDS
} hipFuncAttributes;

// hipFuncGetAttribute.
typedef enum hipFunction_attribute {
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
    HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
    HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
    HIP_FUNC_ATTRIBUTE_NUM_REGS,
    HIP_FUNC_ATTRIBUTE_PTX_VERSION,
    HIP_FUNC_ATTRIBUTE_BINARY_VERSION,
    HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA,
    HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
    HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    HIP_FUNC_ATTRIBUTE_MAX
} hipFunction_attribute;

#define hipOccupancyDefault 0x00
#define hipOccupancyDisableCachingOverride 0x01

extern "C" {

// A module is an ELF code object or an offload bundle (a file, or bytes in memory).
hipError_t hipModuleLoad(hipModule_t* module, const char* fname);
hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
hipError_t hipModuleLoadDataEx(hipModule_t* module, const void* image, unsigned int numOptions,
                               hipJitOption* options, void** optionValues);
// ROCm 7.1: an offload bundle (or a code object), loaded as hipModuleLoadData loads it.
hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname);
hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t hmod,
                              const char* name);
// How many kernels the module's code object lists.
hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t mod);

// The linker (ROCm 6.4): inputs linked into one code object for hipModuleLoadData, valid until
// the link is destroyed or completed again. Options: hipJitOptionIRtoISAOptExt (an array of
// compiler options, e.g. "-mcpu=gfx90a") with hipJitOptionIRtoISAOptCountExt (their number);
// CUDA's options are hipErrorInvalidValue. A link of nothing makes a code object without
// kernels; a failed link is hipErrorInvalidConfiguration (the log has the diagnostics).
hipError_t hipLinkCreate(unsigned int numOptions, hipJitOption* options, void** optionValues,
                         hipLinkState_t* stateOut);
hipError_t hipLinkAddData(hipLinkState_t state, hipJitInputType type, void* data, size_t size,
                          const char* name, unsigned int numOptions, hipJitOption* options,
                          void** optionValues);
hipError_t hipLinkAddFile(hipLinkState_t state, hipJitInputType type, const char* path,
                          unsigned int numOptions, hipJitOption* options, void** optionValues);
hipError_t hipLinkComplete(hipLinkState_t state, void** hipBinOut, size_t* sizeOut);
hipError_t hipLinkDestroy(hipLinkState_t state);

// Libraries: a code object or offload bundle loaded for every device (on the current one now,
// on others at first use). JIT options are refused (numJitOptions must be 0); library options
// are accepted and ignored.
typedef enum hipLibraryOption_e {
    hipLibraryHostUniversalFunctionAndDataTable = 0,
    hipLibraryBinaryIsPreserved = 1
} hipLibraryOption;
hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption* jitOptions,
                              void** jitOptionsValues, unsigned int numJitOptions,
                              hipLibraryOption* libraryOptions, void** libraryOptionValues,
                              unsigned int numLibraryOptions);
hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* fileName,
                                  hipJitOption* jitOptions, void** jitOptionsValues,
                                  unsigned int numJitOptions, hipLibraryOption* libraryOptions,
                                  void** libraryOptionValues, unsigned int numLibraryOptions);
hipError_t hipLibraryUnload(hipLibrary_t library);
hipError_t hipLibraryGetKernel(hipKernel_t* pKernel, hipLibrary_t library, const char* name);
hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library);
// Writes at most numKernels handles: the first kernels when the array is smaller.
hipError_t hipLibraryEnumerateKernels(hipKernel_t* kernels, unsigned int numKernels,
                                      hipLibrary_t library);
hipError_t hipKernelGetLibrary(hipLibrary_t* library, hipKernel_t kernel);
// The name is valid while the kernel's library is loaded.
hipError_t hipKernelGetName(const char** name, hipKernel_t kernel);
// Grid dimensions in blocks. Either kernelParams (one pointer per argument) or extra.
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, hipStream_t stream,
                                 void** kernelParams, void** extra);

// hipModuleLaunchKernel of a kernel whose work-groups may synchronise grid-wide (see
// hipLaunchCooperativeKernel); arguments as kernelParams only.
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX,
                                            unsigned int gridDimY, unsigned int gridDimZ,
                                            unsigned int blockDimX, unsigned int blockDimY,
                                            unsigned int blockDimZ, unsigned int sharedMemBytes,
                                            hipStream_t stream, void** kernelParams);
// One device's part of a multi-device cooperative module launch.
typedef struct hipFunctionLaunchParams_t {
    hipFunction_t function;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    void** kernelParams;
} hipFunctionLaunchParams;
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams* launchParamsList,
                                                       unsigned int numDevices,
                                                       unsigned int flags);

hipError_t hipFuncGetAttributes(struct hipFuncAttributes* attr, const void* func);
hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t hfunc);

// Grid in work-items (a partial last work-group where the block does not divide it); the
// optional events are recorded right before and after the kernel on `hStream`.
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
                                    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                    hipStream_t hStream, void** kernelParams, void** extra,
                                    hipEvent_t startEvent = nullptr,
                                    hipEvent_t stopEvent = nullptr, uint32_t flags = 0);

// Settings CUDA devices use and AMD's do not: validated, then without effect.
typedef enum hipFuncAttribute {
    hipFuncAttributeMaxDynamicSharedMemorySize = 8,
    hipFuncAttributePreferredSharedMemoryCarveout = 9,
    hipFuncAttributeMax
} hipFuncAttribute;
typedef enum hipFuncCache_t {
    hipFuncCachePreferNone,
    hipFuncCachePreferShared,
    hipFuncCachePreferL1,
    hipFuncCachePreferEqual
} hipFuncCache_t;
typedef enum hipSharedMemConfig {
    hipSharedMemBankSizeDefault,
    hipSharedMemBankSizeFourByte,
    hipSharedMemBankSizeEightByte
} hipSharedMemConfig;
hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value);
hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t config);
hipError_t hipFuncSetSharedMemConfig(const void* func, hipSharedMemConfig config);

// The kernel's mangled name (null for a bad handle); by handle, or by its host stub.
const char* hipKernelNameRef(const hipFunction_t f);
const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t stream);
// The hipFunction_t of the kernel registered for a host stub.
hipError_t hipGetFuncBySymbol(hipFunction_t* functionPtr, const void* symbolPtr);

// Occupancy per compute unit from the kernel's VGPR/SGPR/LDS use and the device's limits.
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f,
                                                        int blockSize, size_t dynSharedMemPerBlk);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, const void* f, int blockSize, size_t dynSharedMemPerBlk,
    unsigned int flags = hipOccupancyDefault);
hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, const void* f,
                                             size_t dynSharedMemPerBlk, int blockSizeLimit);
hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, hipFunction_t f,
                                                              int blockSize,
                                                              size_t dynSharedMemPerBlk);
// ROCm 7.2: the most dynamic shared memory per block that lets numBlocks blocks of
// blockSize threads run on one compute unit at once.
hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* f,
                                                    int numBlocks, int blockSize);
hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, hipFunction_t f, int blockSize, size_t dynSharedMemPerBlk,
    unsigned int flags = hipOccupancyDefault);
hipError_t hipModuleOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, hipFunction_t f,
                                                   size_t dynSharedMemPerBlk, int blockSizeLimit);
// The flags (hipOccupancyDefault, hipOccupancyDisableCachingOverride) change nothing; any
// other value is hipErrorInvalidValue, as for every WithFlags form.
hipError_t hipModuleOccupancyMaxPotentialBlockSizeWithFlags(int* gridSize, int* blockSize,
                                                            hipFunction_t f,
                                                            size_t dynSharedMemPerBlk,
                                                            int blockSizeLimit, unsigned int flags);

} // extern "C"

// Typed convenience overloads for kernels.
template <class T>
static inline hipError_t hipFuncSetAttribute(T* kernel, hipFuncAttribute attr, int value) {
    return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
template <class T>
static inline hipError_t hipFuncSetCacheConfig(T* kernel, hipFuncCache_t config) {
    return hipFuncSetCacheConfig(reinterpret_cast<const void*>(kernel), config);
}
template <class T>
static inline hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, T* kernel) {
    return hipFuncGetAttributes(attr, reinterpret_cast<const void*>(kernel));
}
template <class T>
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T* kernel,
                                                                      int blockSize,
                                                                      size_t dynSharedMemPerBlk) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(
        numBlocks, reinterpret_cast<const void*>(kernel), blockSize, dynSharedMemPerBlk);
}
template <class T>
static inline hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize,
                                                           T* kernel,
                                                           size_t dynSharedMemPerBlk = 0,
                                                           int blockSizeLimit = 0) {
    return hipOccupancyMaxPotentialBlockSize(gridSize, blockSize,
                                             reinterpret_cast<const void*>(kernel),
                                             dynSharedMemPerBlk, blockSizeLimit);
}
// As AMD's header: no exported function takes these flags, and they change nothing anyway.
template <class T>
static inline hipError_t hipOccupancyMaxPotentialBlockSizeWithFlags(
    int* gridSize, int* blockSize, T* kernel, size_t dynSharedMemPerBlk = 0,
    int blockSizeLimit = 0, unsigned int flags = hipOccupancyDefault) {
    (void)flags;
    return hipOccupancyMaxPotentialBlockSize(gridSize, blockSize,
                                             reinterpret_cast<const void*>(kernel),
                                             dynSharedMemPerBlk, blockSizeLimit);
}
template <class T>
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, T* kernel, int blockSize, size_t dynSharedMemPerBlk,
    unsigned int flags = hipOccupancyDefault) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, reinterpret_cast<const void*>(kernel), blockSize, dynSharedMemPerBlk, flags);
}

#endif // HIPSHIM_API_MODULE_H
