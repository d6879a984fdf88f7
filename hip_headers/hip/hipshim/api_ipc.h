// Inter-process memory: a device allocation opened by another process.
#ifndef HIPSHIM_API_IPC_H
#define HIPSHIM_API_IPC_H

#include "hip_error.h"
#include "hip_types.h"
#include "launch.h"

#define hipIpcMemLazyEnablePeerAccess 0x01
#define HIP_IPC_HANDLE_SIZE 64

typedef struct hipIpcMemHandle_st {
    char reserved[HIP_IPC_HANDLE_SIZE];
} hipIpcMemHandle_t;

typedef struct hipIpcEventHandle_st {
    char reserved[HIP_IPC_HANDLE_SIZE];
} hipIpcEventHandle_t;

extern "C" {

// `devPtr` inside a hipMalloc allocation; the handle names the whole allocation.
hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* devPtr);
// In another process only; `flags` is hipIpcMemLazyEnablePeerAccess.
hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned int flags);
hipError_t hipIpcCloseMemHandle(void* devPtr);
// For an event created with hipEventInterprocess | hipEventDisableTiming; opened in another
// process only.
hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t* handle, hipEvent_t event);
hipError_t hipIpcOpenEventHandle(hipEvent_t* event, hipIpcEventHandle_t handle);

}  // extern "C"

#endif
