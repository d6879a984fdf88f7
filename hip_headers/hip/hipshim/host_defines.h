// hipshim HIP headers: platform macros and function/variable attribute macros.
//
// These headers are written for hipshim and target a stock clang in HIP mode
// (`clang++ -x hip -nogpuinc ...`); they do not need any ROCm header.
#ifndef HIPSHIM_HOST_DEFINES_H
#define HIPSHIM_HOST_DEFINES_H

#if !defined(__cplusplus)
#error "the hipshim HIP headers support C++ only"
#endif

// The platform macros HIP programs test for.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#ifndef __HIP_PLATFORM_HCC__
#define __HIP_PLATFORM_HCC__ 1
#endif

// Marks these headers (as opposed to AMD's) for programs that care.
#define __HIPSHIM_HEADERS__ 1

#if defined(__HIP__)
// Execution-space and memory-space attributes understood by clang in HIP mode.
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
// A variable in managed memory, the same address on the host and on every device (clang
// registers it with __hipRegisterManagedVar).
#define __managed__ __attribute__((managed))

// clang maps CUDA-style launch bounds onto amdgpu-flat-work-group-size.
// clang ignores CUDA's launch_bounds attribute for AMDGPU: the bound must become the
// kernel's flat work-group size range (it lands in the code object's metadata as
// .max_flat_workgroup_size, which the runtime checks launches against). HIP's optional
// second argument is the minimum number of waves per execution unit.
#define __hipshim_launch_bounds_1(max_threads) \
    __attribute__((amdgpu_flat_work_group_size(1, max_threads)))
#define __hipshim_launch_bounds_2(max_threads, min_waves_per_eu) \
    __attribute__((amdgpu_flat_work_group_size(1, max_threads), amdgpu_waves_per_eu(min_waves_per_eu)))
#define __hipshim_launch_bounds_pick(_1, _2, name, ...) name
#define __launch_bounds__(...) \
    __hipshim_launch_bounds_pick(__VA_ARGS__, __hipshim_launch_bounds_2, __hipshim_launch_bounds_1, )(__VA_ARGS__)
#else
// A host-only C++ compiler (g++, clang++ without -x hip) including the API:
// everything is host code.
#define __host__
#define __device__
#define __global__
#define __shared__
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#endif

#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))

// Ignoring a hipError_t is discouraged; C++17 lets that be a warning.
#if __cplusplus >= 201703L
#define HIPSHIM_NODISCARD [[nodiscard]]
#else
#define HIPSHIM_NODISCARD
#endif

#endif // HIPSHIM_HOST_DEFINES_H
