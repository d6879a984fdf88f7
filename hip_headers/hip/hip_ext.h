// hipshim HIP headers: AMD's extensions to the launch API (AMD ships them as <hip/hip_ext.h>).
#ifndef HIP_HIP_EXT_H
#define HIP_HIP_EXT_H

#include "hip_runtime.h"

// hipExtLaunchKernel, typed: the kernel's arguments are passed as they are, converted to its
// parameter types first (as a triple-chevron launch does), and their addresses handed over.
template <typename... Params, typename... Args>
static inline hipError_t hipExtLaunchKernelGGL(void (*kernel)(Params...), dim3 numBlocks,
                                               dim3 dimBlocks, size_t sharedMemBytes,
                                               hipStream_t stream, hipEvent_t startEvent,
                                               hipEvent_t stopEvent, unsigned int flags,
                                               Args... args) {
    static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
    // One local per parameter, in order, of the parameter's own type.
    auto launch = [&](Params... converted) {
        void* pointers[sizeof...(Params) > 0 ? sizeof...(Params) : 1] = {
            const_cast<void*>(static_cast<const void*>(&converted))...};
        return hipExtLaunchKernel(reinterpret_cast<const void*>(kernel), numBlocks, dimBlocks,
                                  pointers, sharedMemBytes, stream, startEvent, stopEvent,
                                  static_cast<int>(flags));
    };
    return launch(static_cast<Params>(args)...);
}

#endif // HIP_HIP_EXT_H
