// hipshim HIP headers: basic types shared by host and device code.
#ifndef HIPSHIM_HIP_TYPES_H
#define HIPSHIM_HIP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "host_defines.h"

// Grid and block extents. Host and device code both use it, and it is passed by
// value to the launch hooks, so its layout (three uint32_t) is ABI.
typedef struct dim3 {
    uint32_t x;
    uint32_t y;
    uint32_t z;
    constexpr __host__ __device__ dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1)
        : x(x_), y(y_), z(z_) {}
} dim3;

// Direction of a copy. hipMemcpyDefault lets the runtime infer it from the
// pointers.
typedef enum hipMemcpyKind {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3,
    hipMemcpyDefault = 4,
} hipMemcpyKind;

// A device ordinal as the driver-style API takes it.
typedef int hipDevice_t;

// Opaque handles: the runtime owns the objects behind them.
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
// A library (hipLibraryLoad*) and one of its kernels; hipshim accepts a hipKernel_t wherever
// a hipFunction_t is taken (hipModuleLaunchKernel, hipFuncGetAttribute), as AMD's runtime does.
typedef struct ihipLibrary_t* hipLibrary_t;
typedef struct ihipKernel_t* hipKernel_t;

// A device address as the driver-style API (hipMemcpyHtoD, hipModuleGetGlobal) takes it.
typedef void* hipDeviceptr_t;

// 16 bytes identifying a device (hipDeviceGetUuid, hipDeviceProp_t::uuid).
typedef struct hipUUID_t {
    char bytes[16];
} hipUUID;

// Feature bits of a device (hipDeviceProp_t::arch): 17 one-bit fields, 4 bytes.
typedef struct {
    unsigned hasGlobalInt32Atomics : 1;
    unsigned hasGlobalFloatAtomicExch : 1;
    unsigned hasSharedInt32Atomics : 1;
    unsigned hasSharedFloatAtomicExch : 1;
    unsigned hasFloatAtomicAdd : 1;
    unsigned hasGlobalInt64Atomics : 1;
    unsigned hasSharedInt64Atomics : 1;
    unsigned hasDoubles : 1;
    unsigned hasWarpVote : 1;
    unsigned hasWarpBallot : 1;
    unsigned hasWarpShuffle : 1;
    unsigned hasFunnelShift : 1;
    unsigned hasThreadFenceSystem : 1;
    unsigned hasSyncThreadsExt : 1;
    unsigned hasSurfaceFuncs : 1;
    unsigned has3dGrid : 1;
    unsigned hasDynamicParallelism : 1;
} hipDeviceArch_t;

#endif // HIPSHIM_HIP_TYPES_H
