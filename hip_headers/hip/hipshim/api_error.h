// Error handling.
#ifndef HIPSHIM_API_ERROR_H
#define HIPSHIM_API_ERROR_H

#include "hip_error.h"

extern "C" {

// hipGetLastError returns this thread's last error and resets it to hipSuccess;
// hipPeekAtLastError returns it and leaves it. Which error is "last" depends on the ROCm ABI
// the program was built for (HIPSHIM_ABI, else the libamdhip64.so.N it loaded): up to ROCm 6
// every call sets it (success too); from ROCm 7 on it is the latest failure since it was last
// read, as in CUDA. hipExtGetLastError always gives the result of the latest call.
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
hipError_t hipExtGetLastError(void);
const char* hipGetErrorName(hipError_t error);
const char* hipGetErrorString(hipError_t error);
// Driver-API forms: the text through *errorString; hipErrorInvalidValue for an unknown code.
hipError_t hipDrvGetErrorName(hipError_t hipError, const char** errorString);
hipError_t hipDrvGetErrorString(hipError_t hipError, const char** errorString);

} // extern "C"

#endif // HIPSHIM_API_ERROR_H
