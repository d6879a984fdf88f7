// Virtual memory management: reserved address ranges, physical allocations and mappings
// (CUDA's driver-API model, which HIP follows).
#ifndef HIPSHIM_API_VMM_H
#define HIPSHIM_API_VMM_H

#include "api_array.h"
#include "api_mempool.h"
#include "api_texture.h"
#include "hip_error.h"
#include "hip_types.h"

typedef struct ihipMemGenericAllocationHandle* hipMemGenericAllocationHandle_t;

typedef enum hipMemAllocationGranularity_flags {
    hipMemAllocationGranularityMinimum = 0x0,
    hipMemAllocationGranularityRecommended = 0x1
} hipMemAllocationGranularity_flags;

typedef enum hipMemHandleType {
    hipMemHandleTypeGeneric = 0x0
} hipMemHandleType;

typedef struct hipMemAllocationProp {
    hipMemAllocationType type;                      // hipMemAllocationTypePinned
    hipMemAllocationHandleType requestedHandleType; // none, or a POSIX file descriptor
    hipMemLocation location;                        // a device
    void* win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
    } allocFlags;
} hipMemAllocationProp;

// hipMemMapArrayAsync: map or unmap memory to a sparse array's tiles (CUDA's model).
typedef enum hipMemOperationType {
    hipMemOperationTypeMap = 0x1,
    hipMemOperationTypeUnmap = 0x2
} hipMemOperationType;
typedef enum hipArraySparseSubresourceType {
    hipArraySparseSubresourceTypeSparseLevel = 0x0,
    hipArraySparseSubresourceTypeMiptail = 0x1
} hipArraySparseSubresourceType;
typedef struct hipArrayMapInfo {
    hipResourceType resourceType;
    union {
        hipMipmappedArray_t mipmap;
        hipArray_t array;
    } resource;
    hipArraySparseSubresourceType subresourceType;
    union {
        struct {
            unsigned int level;
            unsigned int layer;
            unsigned int offsetX, offsetY, offsetZ;
            unsigned int extentWidth, extentHeight, extentDepth;
        } sparseLevel;
        struct {
            unsigned int layer;
            unsigned long long offset;
            unsigned long long size;
        } miptail;
    } subresource;
    hipMemOperationType memOperationType;
    hipMemHandleType memHandleType;
    union {
        hipMemGenericAllocationHandle_t memHandle;
    } memHandle;
    unsigned long long offset;
    unsigned int deviceBitMask;
    unsigned int flags;
    unsigned int reserved[2];
} hipArrayMapInfo;

// hipMemGetHandleForAddressRange (ROCm 6.5).
typedef enum hipMemRangeHandleType {
    hipMemRangeHandleTypeDmaBufFd = 0x1,
    hipMemRangeHandleTypeMax = 0x7fffffff
} hipMemRangeHandleType;
typedef enum hipMemRangeFlags {
    hipMemRangeFlagDmaBufMappingTypePcie = 0x1,
    hipMemRangeFlagsMax = 0x7fffffff
} hipMemRangeFlags;

extern "C" {

hipError_t hipMemGetAllocationGranularity(size_t* granularity, const hipMemAllocationProp* prop,
                                          hipMemAllocationGranularity_flags option);
// `size` a multiple of the granularity; `flags` 0.
hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size,
                        const hipMemAllocationProp* prop, unsigned long long flags);
// The memory lives on while it is mapped.
hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle);
hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr,
                                unsigned long long flags);
hipError_t hipMemAddressFree(void* devPtr, size_t size);
hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                     unsigned long long flags);
hipError_t hipMemUnmap(void* ptr, size_t size);
hipError_t hipMemSetAccess(void* ptr, size_t size, const hipMemAccessDesc* desc, size_t count);
hipError_t hipMemGetAccess(unsigned long long* flags, const hipMemLocation* location, void* ptr);
hipError_t hipMemGetAllocationPropertiesFromHandle(hipMemAllocationProp* prop,
                                                   hipMemGenericAllocationHandle_t handle);
hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* handle, void* addr);
// hipMemHandleTypePosixFileDescriptor: `shareableHandle` receives an int (the caller closes
// it); `osHandle` is the descriptor itself, `(void*)(uintptr_t)fd`.
hipError_t hipMemExportToShareableHandle(void* shareableHandle,
                                         hipMemGenericAllocationHandle_t handle,
                                         hipMemAllocationHandleType handleType,
                                         unsigned long long flags);
hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t* handle, void* osHandle,
                                           hipMemAllocationHandleType shHandleType);

// Sparse arrays: checked (a list and a count), then hipErrorNotSupported, as in AMD's runtime,
// which has no sparse arrays either.
hipError_t hipMemMapArrayAsync(hipArrayMapInfo* mapInfoList, unsigned int count,
                               hipStream_t stream);
// A dma-buf file descriptor for a range of device memory (hipMalloc'd, pooled or mapped):
// the range and arguments are checked, then hipErrorNotSupported: hipshim does not ask ROCr
// for a dma-buf (hsa_amd_portable_export_dmabuf), and hsasim has no kernel driver to make one.
hipError_t hipMemGetHandleForAddressRange(void* handle, hipDeviceptr_t dptr, size_t size,
                                          hipMemRangeHandleType handleType,
                                          unsigned long long flags);

}  // extern "C"

#endif
