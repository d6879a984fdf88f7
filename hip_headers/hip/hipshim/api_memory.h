// Memory management: allocation, copies, fills, pointer queries, device symbols.
#ifndef HIPSHIM_API_MEMORY_H
#define HIPSHIM_API_MEMORY_H

#include "hip_error.h"
#include "hip_types.h"

// hipHostMalloc flags. Every combination gives pinned, fine-grained host memory that
// every device can access; coherent together with non-coherent is an error.
#define hipHostMallocDefault 0x0
#define hipHostMallocPortable 0x1
#define hipHostMallocMapped 0x2
#define hipHostMallocWriteCombined 0x4
#define hipHostMallocNumaUser 0x20000000
#define hipHostMallocCoherent 0x40000000
#define hipHostMallocNonCoherent 0x80000000
#define hipHostAllocDefault 0x0
#define hipHostAllocPortable 0x1
#define hipHostAllocMapped 0x2
#define hipHostAllocWriteCombined 0x4

// hipHostRegister flags.
#define hipHostRegisterDefault 0x0
#define hipHostRegisterPortable 0x1
#define hipHostRegisterMapped 0x2
#define hipHostRegisterIoMemory 0x4
#define hipHostRegisterReadOnly 0x08

// hipMallocManaged flags (global or host attachment; both accepted).
#define hipMemAttachGlobal 0x01
#define hipMemAttachHost 0x02
#define hipMemAttachSingle 0x04

// Where memory lives (ROCm 6 numbering, which hipPointerGetAttributes reports unless the
// program runs with ROCm 5's ABI: Host 0, Device 1, Array 2, Unified 3).
typedef enum hipMemoryType {
    hipMemoryTypeUnregistered = 0,
    hipMemoryTypeHost = 1,
    hipMemoryTypeDevice = 2,
    hipMemoryTypeManaged = 3,
    hipMemoryTypeArray = 10,
    hipMemoryTypeUnified = 11
} hipMemoryType;

// hipPointerGetAttributes (32 bytes; ROCm 5 called the first field memoryType).
typedef struct hipPointerAttribute_t {
    union {
        enum hipMemoryType memoryType;
        enum hipMemoryType type;
    };
    int device; // hipInvalidDeviceId for memory the runtime does not know
    void* devicePointer;
    void* hostPointer;
    int isManaged;
    unsigned allocationFlags;
} hipPointerAttribute_t;

typedef enum hipPointer_attribute {
    HIP_POINTER_ATTRIBUTE_CONTEXT = 1,
    HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
    HIP_POINTER_ATTRIBUTE_DEVICE_POINTER,
    HIP_POINTER_ATTRIBUTE_HOST_POINTER,
    HIP_POINTER_ATTRIBUTE_P2P_TOKENS,
    HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS,
    HIP_POINTER_ATTRIBUTE_BUFFER_ID,
    HIP_POINTER_ATTRIBUTE_IS_MANAGED,
    HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE,
    HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
    HIP_POINTER_ATTRIBUTE_RANGE_SIZE,
    HIP_POINTER_ATTRIBUTE_MAPPED,
    HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
    HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
    HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS,
    HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE
} hipPointer_attribute;

// The device hipPointerGetAttributes reports for memory the runtime does not know.
#define hipInvalidDeviceId ((int)-2)

// Names a device variable for the symbol functions (AMD: the variable itself; the typed
// overloads below take its address).
#define HIP_SYMBOL(X) X

// hipExtMallocWithFlags flags: one value each, not a bit set. Fine-grained (and uncached)
// memory is coherent between the host and the devices while kernels run; signal memory is 8
// zeroed bytes of it, for hipStreamWaitValue*. Contiguous is plain device memory.
#define hipDeviceMallocDefault 0x0
#define hipDeviceMallocFinegrained 0x1
#define hipMallocSignalMemory 0x2
#define hipDeviceMallocUncached 0x3
#define hipDeviceMallocContiguous 0x4

extern "C" {

hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipExtMallocWithFlags(void** ptr, size_t sizeBytes, unsigned int flags);
hipError_t hipFree(void* ptr);
hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height);
hipError_t hipMemAllocPitch(hipDeviceptr_t* dptr, size_t* pitch, size_t widthInBytes,
                            size_t height, unsigned int elementSizeBytes);
hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipHostAlloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipHostFree(void* ptr);
hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags = hipMemAttachGlobal);
hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned int flags);
hipError_t hipHostUnregister(void* hostPtr);
hipError_t hipHostGetDevicePointer(void** devPtr, void* hstPtr, unsigned int flags);
hipError_t hipHostGetFlags(unsigned int* flagsPtr, void* hostPtr);
// Older names of hipHostMalloc and hipHostFree, deprecated by AMD and still exported.
[[deprecated("use hipHostMalloc")]] hipError_t hipMallocHost(void** ptr, size_t size);
[[deprecated("use hipHostMalloc")]] hipError_t hipMemAllocHost(void** ptr, size_t size);
[[deprecated("use hipHostFree")]] hipError_t hipFreeHost(void* ptr);

hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t sizeBytes);
hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes);
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes);
hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                       size_t height, hipMemcpyKind kind);
hipError_t hipMemset(void* dst, int value, size_t sizeBytes);
hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count);
hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count);
hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count);
hipError_t hipMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height);

hipError_t hipMemGetInfo(size_t* free, size_t* total);
hipError_t hipMemPtrGetInfo(void* ptr, size_t* size);
hipError_t hipMemGetAddressRange(hipDeviceptr_t* pbase, size_t* psize, hipDeviceptr_t dptr);
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr);
// One attribute in AMD's widths: bool (1 byte) for SYNC_MEMOPS, IS_MANAGED, MAPPED; 32 bits
// for MEMORY_TYPE, BUFFER_ID, RANGE_SIZE, DEVICE_ORDINAL, ACCESS_FLAGS; pointers otherwise.
// Unknown memory: the default value and hipErrorInvalidValue. hipDrvPointerGetAttributes
// writes the defaults and succeeds. Only SYNC_MEMOPS can be set.
hipError_t hipPointerGetAttribute(void* data, hipPointer_attribute attribute, hipDeviceptr_t ptr);
hipError_t hipDrvPointerGetAttributes(unsigned int numAttributes, hipPointer_attribute* attributes,
                                      void** data, hipDeviceptr_t ptr);
hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute attribute,
                                  hipDeviceptr_t ptr);

// Device variables (`__device__`, `__constant__`) named by their host-side symbol.
hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol);
hipError_t hipGetSymbolSize(size_t* size, const void* symbol);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes,
                             size_t offset = 0, hipMemcpyKind kind = hipMemcpyHostToDevice);
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes,
                               size_t offset = 0, hipMemcpyKind kind = hipMemcpyDeviceToHost);
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes,
                                  size_t offset, hipMemcpyKind kind, hipStream_t stream = 0);
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes,
                                    size_t offset, hipMemcpyKind kind, hipStream_t stream = 0);

// Per-thread-default-stream forms (see hip_runtime_api.h: HIP_API_PER_THREAD_DEFAULT_STREAM).
hipError_t hipMemcpy_spt(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemset_spt(void* dst, int value, size_t sizeBytes);
hipError_t hipMemcpy2D_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                           size_t height, hipMemcpyKind kind);
hipError_t hipMemset2D_spt(void* dst, size_t pitch, int value, size_t width, size_t height);
hipError_t hipMemcpyToSymbol_spt(const void* symbol, const void* src, size_t sizeBytes,
                                 size_t offset, hipMemcpyKind kind);
hipError_t hipMemcpyFromSymbol_spt(void* dst, const void* symbol, size_t sizeBytes, size_t offset,
                                   hipMemcpyKind kind);
hipError_t hipMemcpyToSymbolAsync_spt(const void* symbol, const void* src, size_t sizeBytes,
                                      size_t offset, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpyFromSymbolAsync_spt(void* dst, const void* symbol, size_t sizeBytes,
                                        size_t offset, hipMemcpyKind kind, hipStream_t stream);

} // extern "C"

// Typed convenience overloads (inline wrappers around the C entry points).
template <class T>
static inline hipError_t hipMalloc(T** ptr, size_t size) {
    return hipMalloc(reinterpret_cast<void**>(ptr), size);
}
template <class T>
static inline hipError_t hipMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height) {
    return hipMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}
template <class T>
static inline hipError_t hipHostMalloc(T** ptr, size_t size,
                                       unsigned int flags = hipHostMallocDefault) {
    return hipHostMalloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
static inline hipError_t hipMallocManaged(T** ptr, size_t size,
                                          unsigned int flags = hipMemAttachGlobal) {
    return hipMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
static inline hipError_t hipGetSymbolAddress(void** devPtr, const T& symbol) {
    return hipGetSymbolAddress(devPtr, reinterpret_cast<const void*>(&symbol));
}
template <class T>
static inline hipError_t hipGetSymbolSize(size_t* size, const T& symbol) {
    return hipGetSymbolSize(size, reinterpret_cast<const void*>(&symbol));
}
// Symbol copies taking the device variable itself, for both the plain and the
// per-thread-default-stream (`_spt`) entry points.
#define HIPSHIM_SYMBOL_COPY_TEMPLATES(suffix)                                                    \
    template <class T>                                                                           \
    static inline hipError_t hipMemcpyToSymbol##suffix(const T& symbol, const void* src,         \
                                                       size_t sizeBytes, size_t offset = 0,      \
                                                       hipMemcpyKind kind = hipMemcpyHostToDevice) { \
        return hipMemcpyToSymbol##suffix(reinterpret_cast<const void*>(&symbol), src, sizeBytes, \
                                         offset, kind);                                          \
    }                                                                                            \
    template <class T>                                                                           \
    static inline hipError_t hipMemcpyFromSymbol##suffix(void* dst, const T& symbol,             \
                                                         size_t sizeBytes, size_t offset = 0,    \
                                                         hipMemcpyKind kind = hipMemcpyDeviceToHost) { \
        return hipMemcpyFromSymbol##suffix(dst, reinterpret_cast<const void*>(&symbol), sizeBytes, \
                                           offset, kind);                                        \
    }                                                                                            \
    template <class T>                                                                           \
    static inline hipError_t hipMemcpyToSymbolAsync##suffix(const T& symbol, const void* src,    \
                                                            size_t sizeBytes, size_t offset,     \
                                                            hipMemcpyKind kind,                  \
                                                            hipStream_t stream = 0) {            \
        return hipMemcpyToSymbolAsync##suffix(reinterpret_cast<const void*>(&symbol), src,       \
                                              sizeBytes, offset, kind, stream);                  \
    }                                                                                            \
    template <class T>                                                                           \
    static inline hipError_t hipMemcpyFromSymbolAsync##suffix(void* dst, const T& symbol,        \
                                                              size_t sizeBytes, size_t offset,   \
                                                              hipMemcpyKind kind,                \
                                                              hipStream_t stream = 0) {          \
        return hipMemcpyFromSymbolAsync##suffix(dst, reinterpret_cast<const void*>(&symbol),     \
                                                sizeBytes, offset, kind, stream);                \
    }
HIPSHIM_SYMBOL_COPY_TEMPLATES()
HIPSHIM_SYMBOL_COPY_TEMPLATES(_spt)
#undef HIPSHIM_SYMBOL_COPY_TEMPLATES

#endif // HIPSHIM_API_MEMORY_H
