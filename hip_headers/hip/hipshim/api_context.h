// Contexts as AMD's runtime has them: one primary context per device; a hipCtx_t names a
// device, and the (deprecated) hipCtx* calls move the calling thread's current device.
// Cache and shared-memory configurations are checked and otherwise ignored (gfx9 has one:
// hipFuncCachePreferNone, four-byte LDS banks).
#ifndef HIPSHIM_API_CONTEXT_H
#define HIPSHIM_API_CONTEXT_H

#include "hip_error.h"
#include "hip_types.h"
#include "api_module.h"

typedef struct ihipCtx_t* hipCtx_t;

extern "C" {

hipError_t hipDevicePrimaryCtxRetain(hipCtx_t* pctx, hipDevice_t dev);
hipError_t hipDevicePrimaryCtxRelease(hipDevice_t dev);
hipError_t hipDevicePrimaryCtxGetState(hipDevice_t dev, unsigned int* flags, int* active);
// hipErrorContextAlreadyInUse while the primary context is retained.
hipError_t hipDevicePrimaryCtxSetFlags(hipDevice_t dev, unsigned int flags);
hipError_t hipDevicePrimaryCtxReset(hipDevice_t dev);

hipError_t hipCtxCreate(hipCtx_t* ctx, unsigned int flags, hipDevice_t device);
hipError_t hipCtxDestroy(hipCtx_t ctx);
hipError_t hipCtxPushCurrent(hipCtx_t ctx);
hipError_t hipCtxPopCurrent(hipCtx_t* ctx);
hipError_t hipCtxSetCurrent(hipCtx_t ctx);
hipError_t hipCtxGetCurrent(hipCtx_t* ctx);
hipError_t hipCtxGetDevice(hipDevice_t* device);
hipError_t hipCtxGetFlags(unsigned int* flags);
hipError_t hipCtxSynchronize(void);
hipError_t hipCtxGetApiVersion(hipCtx_t ctx, unsigned int* apiVersion);
hipError_t hipCtxGetCacheConfig(hipFuncCache_t* cacheConfig);
hipError_t hipCtxSetCacheConfig(hipFuncCache_t cacheConfig);
hipError_t hipCtxGetSharedMemConfig(hipSharedMemConfig* pConfig);
hipError_t hipCtxSetSharedMemConfig(hipSharedMemConfig config);
hipError_t hipCtxEnablePeerAccess(hipCtx_t peerCtx, unsigned int flags);
hipError_t hipCtxDisablePeerAccess(hipCtx_t peerCtx);

hipError_t hipDeviceGetCacheConfig(hipFuncCache_t* cacheConfig);
hipError_t hipDeviceSetCacheConfig(hipFuncCache_t cacheConfig);
hipError_t hipDeviceGetSharedMemConfig(hipSharedMemConfig* pConfig);
hipError_t hipDeviceSetSharedMemConfig(hipSharedMemConfig config);
// Checks the list (existing devices, none twice, at least one).
hipError_t hipSetValidDevices(int* device_arr, int len);

} // extern "C"

#endif // HIPSHIM_API_CONTEXT_H
