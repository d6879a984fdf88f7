// hipshim HIP headers: the host API of libamdhip64.
//
// Declarations only; hipshim's libamdhip64.so (or AMD's) provides them. Grouped
// by area in the order of AMD's documentation so each area can grow in place.
#ifndef HIP_HIP_RUNTIME_API_H
#define HIP_HIP_RUNTIME_API_H

#include <stddef.h>

#include "hipshim/hip_error.h"
#include "hipshim/hip_types.h"
#include "hipshim/host_defines.h"
#include "hipshim/launch.h"

extern "C" {

// ---- Initialisation and version ----
hipError_t hipInit(unsigned int flags);
hipError_t hipDriverGetVersion(int* driverVersion);
hipError_t hipRuntimeGetVersion(int* runtimeVersion);

// ---- Device management ----
hipError_t hipGetDeviceCount(int* count);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device);

// ---- Error handling ----
// hipGetLastError returns this thread's last error and resets it to hipSuccess;
// hipPeekAtLastError returns it and leaves it.
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char* hipGetErrorName(hipError_t error);
const char* hipGetErrorString(hipError_t error);

// ---- Memory management ----
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

#endif // HIP_HIP_RUNTIME_API_H
