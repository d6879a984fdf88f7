// Initialisation, versions and device management.
#ifndef HIPSHIM_API_DEVICE_H
#define HIPSHIM_API_DEVICE_H

#include "hip_error.h"
#include "hip_types.h"

extern "C" {

hipError_t hipInit(unsigned int flags);
hipError_t hipDriverGetVersion(int* driverVersion);
hipError_t hipRuntimeGetVersion(int* runtimeVersion);

hipError_t hipGetDeviceCount(int* count);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device);

} // extern "C"

#endif // HIPSHIM_API_DEVICE_H
