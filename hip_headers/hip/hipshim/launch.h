// hipshim HIP headers: kernel launch.
//
// clang lowers `kernel<<<grid, block, shmem, stream>>>(args...)` in HIP mode to
//   __hipPushCallConfiguration(grid, block, shmem, stream);   // at the call site
//   stub(args...);                                            // the host-side stub, which calls
//     __hipPopCallConfiguration(&grid, &block, &shmem, &stream);
//     hipLaunchKernel(<registered handle>, grid, block, argv, shmem, stream);
// It looks these functions up by name, so the names and signatures are fixed.
#ifndef HIPSHIM_LAUNCH_H
#define HIPSHIM_LAUNCH_H

#include "hip_error.h"
#include "hip_types.h"

// Also declared by api_event.h (the same type); the launches with events need it first.
typedef struct ihipEvent_t* hipEvent_t;

extern "C" {
hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                      hipStream_t stream = 0);
hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                     hipStream_t* stream);

// Launch the kernel whose host handle is `function_address`; `args` holds one
// pointer per kernel argument, pointing at the argument's value.
hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
                           void** args, size_t sharedMemBytes, hipStream_t stream);

// hipLaunchKernel between two optional events recorded on `stream` right before and after
// the kernel; `flags` 0 or hipExtAnyOrderLaunch.
#define hipExtAnyOrderLaunch 1
hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
                              void** args, size_t sharedMemBytes, hipStream_t stream,
                              hipEvent_t startEvent, hipEvent_t stopEvent, int flags);

typedef enum hipAccessProperty {
    hipAccessPropertyNormal = 0,
    hipAccessPropertyStreaming = 1,
    hipAccessPropertyPersisting = 2
} hipAccessProperty;

// A caching hint (hipshim keeps it on graph kernel nodes; it has no effect).
typedef struct hipAccessPolicyWindow {
    void* base_ptr;
    hipAccessProperty hitProp;
    float hitRatio;
    hipAccessProperty missProp;
    size_t num_bytes;
} hipAccessPolicyWindow;

// Launch attributes (ROCm 7): a list of {id, value} handed to hipLaunchKernelExC and
// hipDrvLaunchKernelEx. hipshim acts on hipLaunchAttributeCooperative; the other ids are
// rejected with hipErrorInvalidConfiguration, as AMD's runtime does.
typedef enum hipLaunchAttributeID {
    hipLaunchAttributeIgnore = 0,
    hipLaunchAttributeAccessPolicyWindow = 1,
    hipLaunchAttributeCooperative = 2,
    hipLaunchAttributeSynchronizationPolicy = 3,
    hipLaunchAttributePriority = 8,
    hipLaunchAttributeMemSyncDomainMap = 9,
    hipLaunchAttributeMemSyncDomain = 10,
    hipLaunchAttributeMax
} hipLaunchAttributeID;

// How a host thread waits for a stream (hipStreamSetAttribute): BlockingSync sleeps at once,
// the others spin for a while first.
typedef enum hipSynchronizationPolicy {
    hipSyncPolicyAuto = 1,
    hipSyncPolicySpin = 2,
    hipSyncPolicyYield = 3,
    hipSyncPolicyBlockingSync = 4,
} hipSynchronizationPolicy;

// 64 bytes whatever the attribute, so the list has a fixed stride.
typedef union hipLaunchAttributeValue {
    char pad[64];
    hipAccessPolicyWindow accessPolicyWindow;
    int cooperative;
    hipSynchronizationPolicy syncPolicy;
    int priority;
} hipLaunchAttributeValue;

// Stream attributes are launch attributes: the synchronization policy can be set and read,
// the priority read.
typedef hipLaunchAttributeID hipStreamAttrID;
typedef hipLaunchAttributeValue hipStreamAttrValue;
#define hipStreamAttributeSynchronizationPolicy hipLaunchAttributeSynchronizationPolicy
#define hipStreamAttributePriority hipLaunchAttributePriority

typedef struct hipLaunchAttribute_st {
    hipLaunchAttributeID id;
    char pad[8 - sizeof(hipLaunchAttributeID)];
    union {
        hipLaunchAttributeValue val;
        hipLaunchAttributeValue value;
    };
} hipLaunchAttribute;

typedef struct hipLaunchConfig_st {
    dim3 gridDim;
    dim3 blockDim;
    size_t dynamicSmemBytes;
    hipStream_t stream;
    hipLaunchAttribute* attrs;
    unsigned int numAttrs;
} hipLaunchConfig_t;

typedef struct HIP_LAUNCH_CONFIG_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    hipLaunchAttribute* attrs;
    unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;

hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void** args);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f,
                                void** kernelParams, void** extra);

// Cooperative launches: the work-groups of the grid may wait for each other
// (cooperative_groups::this_grid().sync(), <hip/hip_cooperative_groups.h>), so all of them
// must be resident at once; a larger grid is hipErrorCooperativeLaunchTooLarge
// (hipOccupancyMaxActiveBlocksPerMultiprocessor times the multiprocessors is the most).
hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDim,
                                      void** kernelParams, unsigned int sharedMemBytes,
                                      hipStream_t stream);
hipError_t hipLaunchCooperativeKernel_spt(const void* f, dim3 gridDim, dim3 blockDim,
                                          void** kernelParams, unsigned int sharedMemBytes,
                                          hipStream_t stream);

// One device's part of a multi-device cooperative launch.
typedef struct hipLaunchParams_t {
    void* func;          // the kernel's host handle
    dim3 gridDim;        // in blocks
    dim3 blockDim;
    void** args;         // one pointer per kernel argument
    size_t sharedMem;    // dynamic LDS bytes
    hipStream_t stream;  // names the device
} hipLaunchParams;
#define hipCooperativeLaunchMultiDeviceNoPreSync 0x01
#define hipCooperativeLaunchMultiDeviceNoPostSync 0x02
hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* launchParamsList,
                                                 int numDevices, unsigned int flags);

// The launch API from before `<<<>>>`: push a configuration, place each argument at its
// offset in the kernel's argument layout, then launch by the kernel's host stub.
hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                            hipStream_t stream = 0);
hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset);
hipError_t hipLaunchByPtr(const void* func);

// Registration: the constructor clang generates for each HIP translation unit hands the
// runtime its fat binary, then names each kernel stub and device variable in it; the
// destructor unregisters the binary. Clang emits these calls itself (no AMD header declares
// them); they are declared here for programs that register code by hand, with the types of
// AMD's runtime.
void** __hipRegisterFatBinary(const void* wrapper);
void __hipRegisterFunction(void** modules, const void* host_function, char* device_function,
                           const char* device_name, unsigned int thread_limit, void* tid,
                           void* bid, dim3* block_dim, dim3* grid_dim, int* wave_size);
void __hipRegisterVar(void** modules, void* host_var, char* host_name, char* device_name,
                      int is_extern, size_t size, int is_constant, int is_global);
void __hipUnregisterFatBinary(void** modules);
}

// hipLaunchKernelExC, typed: each argument is converted to the kernel's parameter type
// before its address is taken.
template <typename... Params, typename... Args>
static inline hipError_t hipLaunchKernelEx(const hipLaunchConfig_t* config,
                                           void (*kernel)(Params...), Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
    return [&](Params... converted) {
        void* pointers[sizeof...(Params) > 0 ? sizeof...(Params) : 1] = {
            const_cast<void*>(static_cast<const void*>(&converted))...};
        return hipLaunchKernelExC(config, reinterpret_cast<const void*>(kernel), pointers);
    }(static_cast<Params>(args)...);
}

// The typed forms: any kernel pointer for the handle.
template <typename F>
static inline hipError_t hipLaunchCooperativeKernel(F* kernel, dim3 gridDim, dim3 blockDim,
                                                    void** kernelParams,
                                                    unsigned int sharedMemBytes,
                                                    hipStream_t stream) {
    return hipLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), gridDim, blockDim,
                                      kernelParams, sharedMemBytes, stream);
}

// The portable spelling of a triple-chevron launch.
#define hipLaunchKernelGGL(kernel, numBlocks, numThreads, memPerBlock, stream, ...)           \
    do {                                                                                      \
        kernel<<<(numBlocks), (numThreads), (memPerBlock), (stream)>>>(__VA_ARGS__);          \
    } while (0)

#endif // HIPSHIM_LAUNCH_H
