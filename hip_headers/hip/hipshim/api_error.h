// Error handling.
#ifndef HIPSHIM_API_ERROR_H
#define HIPSHIM_API_ERROR_H

#include "hip_error.h"

extern "C" {

// hipGetLastError returns this thread's last error and resets it to hipSuccess;
// hipPeekAtLastError returns it and leaves it.
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char* hipGetErrorName(hipError_t error);
const char* hipGetErrorString(hipError_t error);

} // extern "C"

#endif // HIPSHIM_API_ERROR_H
