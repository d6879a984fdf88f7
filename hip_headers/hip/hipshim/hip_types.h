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

#endif // HIPSHIM_HIP_TYPES_H
