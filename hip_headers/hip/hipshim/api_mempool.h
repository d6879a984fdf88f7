// The stream-ordered allocator: hipMallocAsync/hipFreeAsync and memory pools.
#ifndef HIPSHIM_API_MEMPOOL_H
#define HIPSHIM_API_MEMPOOL_H

#include "hip_error.h"
#include "hip_types.h"

typedef struct ihipMemPoolHandle_t* hipMemPool_t;

typedef enum hipMemPoolAttr {
    hipMemPoolReuseFollowEventDependencies = 0x1,   // int, default 1
    hipMemPoolReuseAllowOpportunistic = 0x2,        // int, default 1
    hipMemPoolReuseAllowInternalDependencies = 0x3, // int, default 1
    hipMemPoolAttrReleaseThreshold = 0x4,           // uint64_t, default 0
    hipMemPoolAttrReservedMemCurrent = 0x5,         // uint64_t, read-only
    hipMemPoolAttrReservedMemHigh = 0x6,            // uint64_t, settable to 0 only
    hipMemPoolAttrUsedMemCurrent = 0x7,             // uint64_t, read-only
    hipMemPoolAttrUsedMemHigh = 0x8                 // uint64_t, settable to 0 only
} hipMemPoolAttr;

typedef enum hipMemLocationType {
    hipMemLocationTypeInvalid = 0,
    hipMemLocationTypeDevice = 1,
    // The host locations: hipMemPrefetchAsync_v2 and hipMemAdvise_v2 only (hsasim's host is
    // one NUMA node, so every one of them means the host).
    hipMemLocationTypeHost = 2,
    hipMemLocationTypeHostNuma = 3,
    hipMemLocationTypeHostNumaCurrent = 4
} hipMemLocationType;

typedef struct hipMemLocation {
    hipMemLocationType type;
    int id;
} hipMemLocation;

// Managed memory advice and prefetch (api_managed.h) with the location as a hipMemLocation
// (ROCm 7.1); prefetch flags must be 0.
extern "C" {
hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice,
                           hipMemLocation location);
hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation location,
                                  unsigned int flags, hipStream_t stream = 0);
// Prefetches of several ranges (ROCm 7.2): range i goes to prefetchLocs[k] for the last k with
// prefetchLocIdxs[k] <= i (the indices start at 0 and rise). flags 0; not the null stream.
hipError_t hipMemPrefetchBatchAsync(void** dev_ptrs, size_t* sizes, size_t count,
                                    hipMemLocation* prefetch_locs, size_t* prefetch_loc_idxs,
                                    size_t num_prefetch_locs, unsigned long long flags,
                                    hipStream_t stream);

// Batched copies (ROCm 7.1): each as hipMemcpyAsync with hipMemcpyDefault, in order on the
// stream, all checked before the first is enqueued; *failIdx is the refused copy, or SIZE_MAX.
// attrs[k] applies from attrsIdxs[k] (starting at 0, rising); numAttrs may be 0. A source
// accessed "during the API call" is read before the call returns. The flags are hints; AMD's
// swap and indirect operations are hipErrorNotSupported.
typedef enum hipMemcpyFlags {
    hipMemcpyFlagDefault = 0x0,
    hipMemcpyFlagPreferOverlapWithCompute = 0x1,
    hipMemcpyFlagExtPreferCE = 0x100,
    hipMemcpyFlagExtOpSwap = 0x200,
    hipMemcpyFlagExtOpIndirectSrc = 0x400,
    hipMemcpyFlagExtOpIndirectDst = 0x800
} hipMemcpyFlags;
typedef enum hipMemcpySrcAccessOrder {
    hipMemcpySrcAccessOrderInvalid = 0x0,
    hipMemcpySrcAccessOrderStream = 0x1,
    hipMemcpySrcAccessOrderDuringApiCall = 0x2,
    hipMemcpySrcAccessOrderAny = 0x3,
    hipMemcpySrcAccessOrderMax = 0x7FFFFFFF
} hipMemcpySrcAccessOrder;
typedef struct hipMemcpyAttributes {
    hipMemcpySrcAccessOrder srcAccessOrder;
    hipMemLocation srcLocHint;
    hipMemLocation dstLocHint;
    unsigned int flags;
} hipMemcpyAttributes;
hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count,
                               hipMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                               size_t* failIdx, hipStream_t stream = 0);
}

typedef enum hipMemAccessFlags {
    hipMemAccessFlagsProtNone = 0,
    hipMemAccessFlagsProtRead = 1,
    hipMemAccessFlagsProtReadWrite = 3
} hipMemAccessFlags;

typedef struct hipMemAccessDesc {
    hipMemLocation location;
    hipMemAccessFlags flags;
} hipMemAccessDesc;

typedef enum hipMemAllocationType {
    hipMemAllocationTypeInvalid = 0x0,
    hipMemAllocationTypePinned = 0x1,
    hipMemAllocationTypeMax = 0x7FFFFFFF
} hipMemAllocationType;

typedef enum hipMemAllocationHandleType {
    hipMemHandleTypeNone = 0x0,
    hipMemHandleTypePosixFileDescriptor = 0x1,
    hipMemHandleTypeWin32 = 0x2,
    hipMemHandleTypeWin32Kmt = 0x4
} hipMemAllocationHandleType;

typedef struct hipMemPoolProps {
    hipMemAllocationType allocType; // must be hipMemAllocationTypePinned
    hipMemAllocationHandleType handleTypes;
    hipMemLocation location; // a device
    void* win32SecurityAttributes;
    unsigned char reserved[64];
} hipMemPoolProps;

// What shares one pool allocation with another process (hipMemPoolExportPointer).
typedef struct hipMemPoolPtrExportData {
    unsigned char reserved[64];
} hipMemPoolPtrExportData;

extern "C" {

// From the current pool of the stream's device; usable by the stream's later work at once.
hipError_t hipMallocAsync(void** dev_ptr, size_t size, hipStream_t stream);
hipError_t hipMallocFromPoolAsync(void** dev_ptr, size_t size, hipMemPool_t mem_pool,
                                  hipStream_t stream);
// Back to the pool once `stream` reaches this point.
hipError_t hipFreeAsync(void* dev_ptr, hipStream_t stream);
hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold);
hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value);
hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value);
hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool, const hipMemAccessDesc* desc_list,
                               size_t count);
hipError_t hipMemPoolGetAccess(hipMemAccessFlags* flags, hipMemPool_t mem_pool,
                               hipMemLocation* location);
hipError_t hipMemPoolCreate(hipMemPool_t* mem_pool, const hipMemPoolProps* pool_props);
hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool);
hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* mem_pool, int device);
hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool);
hipError_t hipDeviceGetMemPool(hipMemPool_t* mem_pool, int device);

// Sharing a pool made with hipMemHandleTypePosixFileDescriptor: `shared_handle` receives an int
// descriptor (the caller's to close, and to send to the other process); the importer passes
// it back as `(void*)(intptr_t)fd`. An imported pool only takes imported pointers; hipFree or
// hipFreeAsync unmaps an imported pointer.
hipError_t hipMemPoolExportToShareableHandle(void* shared_handle, hipMemPool_t mem_pool,
                                             hipMemAllocationHandleType handle_type,
                                             unsigned int flags);
hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t* mem_pool, void* shared_handle,
                                               hipMemAllocationHandleType handle_type,
                                               unsigned int flags);
hipError_t hipMemPoolExportPointer(hipMemPoolPtrExportData* export_data, void* dev_ptr);
hipError_t hipMemPoolImportPointer(void** dev_ptr, hipMemPool_t mem_pool,
                                   hipMemPoolPtrExportData* export_data);

} // extern "C"

// CUDA-style C++ overloads.
template <class T>
static inline hipError_t hipMallocAsync(T** dev_ptr, size_t size, hipStream_t stream) {
    return hipMallocAsync(reinterpret_cast<void**>(dev_ptr), size, stream);
}
template <class T>
static inline hipError_t hipMallocAsync(T** dev_ptr, size_t size, hipMemPool_t mem_pool,
                                        hipStream_t stream) {
    return hipMallocFromPoolAsync(reinterpret_cast<void**>(dev_ptr), size, mem_pool, stream);
}

#endif // HIPSHIM_API_MEMPOOL_H
