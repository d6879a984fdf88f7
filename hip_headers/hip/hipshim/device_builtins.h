// hipshim HIP headers: what kernels see of their position in the grid, and
// work-group synchronisation.
//
// threadIdx/blockIdx/blockDim/gridDim are declared objects whose .x/.y/.z are
// properties: reading one calls a device function that evaluates an amdgcn
// builtin, so no storage is ever touched.
#ifndef HIPSHIM_DEVICE_BUILTINS_H
#define HIPSHIM_DEVICE_BUILTINS_H

#include "hip_types.h"

#define HIPSHIM_DEVICE_INLINE __device__ inline __attribute__((always_inline))

// Declares TYPE, whose read-only x/y/z evaluate EXPR_X/EXPR_Y/EXPR_Z on the device.
#define HIPSHIM_COORD_TYPE(TYPE, EXPR_X, EXPR_Y, EXPR_Z)                                     \
    struct TYPE {                                                                             \
        __declspec(property(get = get_x)) uint32_t x;                                         \
        __declspec(property(get = get_y)) uint32_t y;                                         \
        __declspec(property(get = get_z)) uint32_t z;                                         \
        static HIPSHIM_DEVICE_INLINE uint32_t get_x() { return (EXPR_X); }                    \
        static HIPSHIM_DEVICE_INLINE uint32_t get_y() { return (EXPR_Y); }                    \
        static HIPSHIM_DEVICE_INLINE uint32_t get_z() { return (EXPR_Z); }                    \
        HIPSHIM_DEVICE_INLINE operator dim3() const { return dim3(get_x(), get_y(), get_z()); } \
                                                                                              \
        TYPE() = delete;                                                                      \
        TYPE(const TYPE&) = delete;                                                           \
        TYPE& operator=(const TYPE&) = delete;                                                \
        TYPE* operator&() const = delete;                                                     \
    }

// Work-item id within the work-group (the ids the hardware puts in v0 at wave start).
HIPSHIM_COORD_TYPE(__hipshim_threadIdx_t, __builtin_amdgcn_workitem_id_x(),
                   __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z());
// Work-group id within the grid (system SGPRs).
HIPSHIM_COORD_TYPE(__hipshim_blockIdx_t, __builtin_amdgcn_workgroup_id_x(),
                   __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z());
// Work-group size as launched (the dispatch packet / hidden_group_size_*).
HIPSHIM_COORD_TYPE(__hipshim_blockDim_t, __builtin_amdgcn_workgroup_size_x(),
                   __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z());
// Number of work-groups, from the device library (as AMD's headers do): it
// reads hidden_block_count_* (code object v5) or divides the dispatch packet's
// grid size by the work-group size (v4), whichever ABI the kernel is built for.
extern "C" __device__ size_t __ockl_get_num_groups(unsigned int dim);
HIPSHIM_COORD_TYPE(__hipshim_gridDim_t, (uint32_t)__ockl_get_num_groups(0),
                   (uint32_t)__ockl_get_num_groups(1), (uint32_t)__ockl_get_num_groups(2));

#undef HIPSHIM_COORD_TYPE

extern const __device__ __attribute__((weak)) __hipshim_threadIdx_t threadIdx;
extern const __device__ __attribute__((weak)) __hipshim_blockIdx_t blockIdx;
extern const __device__ __attribute__((weak)) __hipshim_blockDim_t blockDim;
extern const __device__ __attribute__((weak)) __hipshim_gridDim_t gridDim;

// Work-group barrier: make this work-item's writes visible to the work-group,
// wait for every wave, then observe the others' writes.
HIPSHIM_DEVICE_INLINE void __syncthreads() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// Memory fences at work-group, device (agent) and system scope.
HIPSHIM_DEVICE_INLINE void __threadfence_block() {
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
}
HIPSHIM_DEVICE_INLINE void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
HIPSHIM_DEVICE_INLINE void __threadfence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

// Dynamic shared memory: `extern __shared__ T name[];` is sized by the launch's
// shared-memory argument; this is AMD's macro spelling of the same.
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];

// Barrier variants that also count or vote on a predicate over the work-group.
HIPSHIM_DEVICE_INLINE int __syncthreads_count(int predicate) {
    __shared__ int __hipshim_sync_count;
    if (__builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workitem_id_y() +
            __builtin_amdgcn_workitem_id_z() == 0)
        __hipshim_sync_count = 0;
    __syncthreads();
    if (predicate)
        __hip_atomic_fetch_add(&__hipshim_sync_count, 1, __ATOMIC_RELAXED,
                               __HIP_MEMORY_SCOPE_WORKGROUP);
    __syncthreads();
    int n = __hipshim_sync_count;
    __syncthreads();
    return n;
}
HIPSHIM_DEVICE_INLINE int __syncthreads_and(int predicate) {
    return __syncthreads_count(predicate != 0) ==
           (int)(__builtin_amdgcn_workgroup_size_x() * __builtin_amdgcn_workgroup_size_y() *
                 __builtin_amdgcn_workgroup_size_z());
}
HIPSHIM_DEVICE_INLINE int __syncthreads_or(int predicate) {
    return __syncthreads_count(predicate != 0) != 0;
}

#endif // HIPSHIM_DEVICE_BUILTINS_H
