// hipshim HIP headers: cooperative groups, the device side of cooperative launches.
//
// namespace cooperative_groups: the work-group (thread_block, this_thread_block()), the whole
// grid (grid_group, this_grid()), every grid of a multi-device launch (multi_grid_group,
// this_multi_grid()) and power-of-two tiles of a work-group within one wave
// (thread_block_tile<N>, tiled_partition<N>()), each with sync(), size() and thread_rank().
//
// Grid-wide sync needs a cooperative launch (hipLaunchCooperativeKernel): all work-groups
// resident at once, and a runtime that tells the kernel so through its hidden multigrid-sync
// argument, which the device library reads (grid_group::is_valid() is false in an ordinary
// launch, and sync() there would wait forever). The grid and multi-grid parts call the
// device library's own functions (ockl), which know where that argument is in either code
// object version.
#ifndef HIP_HIP_COOPERATIVE_GROUPS_H
#define HIP_HIP_COOPERATIVE_GROUPS_H

#include "hip_runtime.h"

#if defined(__HIP__)

extern "C" {
__device__ int __ockl_grid_is_valid(void);
__device__ void __ockl_grid_sync(void);
__device__ int __ockl_multi_grid_is_valid(void);
__device__ void __ockl_multi_grid_sync(void);
__device__ unsigned int __ockl_multi_grid_num_grids(void);
__device__ unsigned int __ockl_multi_grid_grid_rank(void);
__device__ unsigned int __ockl_multi_grid_size(void);
__device__ unsigned int __ockl_multi_grid_thread_rank(void);
}

#define HIPSHIM_CG static __device__ inline __attribute__((always_inline))
#define HIPSHIM_CG_MEMBER __device__ inline __attribute__((always_inline))

namespace cooperative_groups {

namespace detail {
HIPSHIM_CG unsigned int block_threads() {
    return blockDim.x * blockDim.y * blockDim.z;
}
// The work-item's place in its work-group, x fastest (the order of the lanes of its waves).
HIPSHIM_CG unsigned int block_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
HIPSHIM_CG unsigned int block_index() {
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
HIPSHIM_CG unsigned int grid_blocks() {
    return gridDim.x * gridDim.y * gridDim.z;
}
} // namespace detail

// The work-items of one work-group.
class thread_block {
  public:
    static HIPSHIM_CG_MEMBER void sync() { __syncthreads(); }
    static HIPSHIM_CG_MEMBER unsigned int size() { return detail::block_threads(); }
    static HIPSHIM_CG_MEMBER unsigned int num_threads() { return detail::block_threads(); }
    static HIPSHIM_CG_MEMBER unsigned int thread_rank() { return detail::block_rank(); }
    static HIPSHIM_CG_MEMBER dim3 group_index() { return blockIdx; }
    static HIPSHIM_CG_MEMBER dim3 thread_index() { return threadIdx; }
    static HIPSHIM_CG_MEMBER dim3 group_dim() { return blockDim; }
    static HIPSHIM_CG_MEMBER bool is_valid() { return true; }
};

// Every work-item of the grid; sync() needs a cooperative launch.
class grid_group {
  public:
    static HIPSHIM_CG_MEMBER void sync() { __ockl_grid_sync(); }
    static HIPSHIM_CG_MEMBER unsigned int size() {
        return detail::grid_blocks() * detail::block_threads();
    }
    static HIPSHIM_CG_MEMBER unsigned int num_threads() { return size(); }
    static HIPSHIM_CG_MEMBER unsigned int thread_rank() {
        return detail::block_index() * detail::block_threads() + detail::block_rank();
    }
    static HIPSHIM_CG_MEMBER bool is_valid() { return __ockl_grid_is_valid() != 0; }
    static HIPSHIM_CG_MEMBER unsigned int num_blocks() { return detail::grid_blocks(); }
    static HIPSHIM_CG_MEMBER unsigned int block_rank() { return detail::block_index(); }
    static HIPSHIM_CG_MEMBER dim3 group_dim() { return blockDim; }
};

// Every work-item of every grid of a multi-device cooperative launch.
class multi_grid_group {
  public:
    static HIPSHIM_CG_MEMBER void sync() { __ockl_multi_grid_sync(); }
    static HIPSHIM_CG_MEMBER unsigned int num_grids() { return __ockl_multi_grid_num_grids(); }
    static HIPSHIM_CG_MEMBER unsigned int grid_rank() { return __ockl_multi_grid_grid_rank(); }
    static HIPSHIM_CG_MEMBER unsigned int size() { return __ockl_multi_grid_size(); }
    static HIPSHIM_CG_MEMBER unsigned int num_threads() { return size(); }
    static HIPSHIM_CG_MEMBER unsigned int thread_rank() { return __ockl_multi_grid_thread_rank(); }
    static HIPSHIM_CG_MEMBER bool is_valid() { return __ockl_multi_grid_is_valid() != 0; }
};

// N consecutive work-items of a work-group (by thread_rank), N a power of two up to the wave
// size, so a tile lies within one wave and its lanes are the tile's ranks.
template <unsigned int N>
class thread_block_tile {
    static_assert(N > 0 && (N & (N - 1)) == 0 && N <= warpSize,
                  "a tile is a power of two of work-items, at most a wave");

  public:
    static HIPSHIM_CG_MEMBER void sync() {
        // A tile's lanes run in lock step; the fences make their memory operations visible
        // to each other.
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_wave_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    }
    static constexpr HIPSHIM_CG_MEMBER unsigned int size() { return N; }
    static constexpr HIPSHIM_CG_MEMBER unsigned int num_threads() { return N; }
    static HIPSHIM_CG_MEMBER unsigned int thread_rank() { return detail::block_rank() & (N - 1); }
    // The tile's index within its work-group.
    static HIPSHIM_CG_MEMBER unsigned int meta_group_rank() { return detail::block_rank() / N; }
    static HIPSHIM_CG_MEMBER unsigned int meta_group_size() {
        return (detail::block_threads() + N - 1) / N;
    }
    static HIPSHIM_CG_MEMBER bool is_valid() { return true; }

    template <typename T>
    HIPSHIM_CG_MEMBER T shfl(T value, int src_rank) const {
        return __shfl(value, src_rank, N);
    }
    template <typename T>
    HIPSHIM_CG_MEMBER T shfl_up(T value, unsigned int delta) const {
        return __shfl_up(value, delta, N);
    }
    template <typename T>
    HIPSHIM_CG_MEMBER T shfl_down(T value, unsigned int delta) const {
        return __shfl_down(value, delta, N);
    }
    template <typename T>
    HIPSHIM_CG_MEMBER T shfl_xor(T value, int lane_mask) const {
        return __shfl_xor(value, lane_mask, N);
    }
};

HIPSHIM_CG thread_block this_thread_block() { return thread_block(); }
HIPSHIM_CG grid_group this_grid() { return grid_group(); }
HIPSHIM_CG multi_grid_group this_multi_grid() { return multi_grid_group(); }

template <unsigned int N>
HIPSHIM_CG thread_block_tile<N> tiled_partition(const thread_block&) {
    return thread_block_tile<N>();
}

// The free-function forms.
template <class Group>
HIPSHIM_CG void sync(const Group& g) { g.sync(); }
template <class Group>
HIPSHIM_CG unsigned int group_size(const Group& g) { return g.size(); }
template <class Group>
HIPSHIM_CG unsigned int thread_rank(const Group& g) { return g.thread_rank(); }
template <class Group>
HIPSHIM_CG bool is_valid(const Group& g) { return g.is_valid(); }

} // namespace cooperative_groups

#undef HIPSHIM_CG
#undef HIPSHIM_CG_MEMBER

#endif // __HIP__

#endif // HIP_HIP_COOPERATIVE_GROUPS_H
