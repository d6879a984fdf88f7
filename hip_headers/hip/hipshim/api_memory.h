// Memory management: allocation, copies, fills, pointer queries.
#ifndef HIPSHIM_API_MEMORY_H
#define HIPSHIM_API_MEMORY_H

#include "hip_error.h"
#include "hip_types.h"

extern "C" {

hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipFree(void* ptr);
hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemset(void* dst, int value, size_t sizeBytes);

} // extern "C"

// Typed convenience overloads (inline wrappers around the C entry points).
template <class T>
static inline hipError_t hipMalloc(T** ptr, size_t size) {
    return hipMalloc(reinterpret_cast<void**>(ptr), size);
}

#endif // HIPSHIM_API_MEMORY_H
