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

extern "C" {
hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                      hipStream_t stream = 0);
hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                     hipStream_t* stream);

// Launch the kernel whose host handle is `function_address`; `args` holds one
// pointer per kernel argument, pointing at the argument's value.
hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
                           void** args, size_t sharedMemBytes, hipStream_t stream);
}

// The portable spelling of a triple-chevron launch.
#define hipLaunchKernelGGL(kernel, numBlocks, numThreads, memPerBlock, stream, ...)           \
    do {                                                                                      \
        kernel<<<(numBlocks), (numThreads), (memPerBlock), (stream)>>>(__VA_ARGS__);          \
    } while (0)

#endif // HIPSHIM_LAUNCH_H
