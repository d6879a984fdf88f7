// Compile-only check of hip_headers/: uses the whole device and host surface
// the headers declare (built for every target, linked, never run).
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

#include <cstdio>

template <typename T>
__global__ void __launch_bounds__(256) fill(T* out, T value) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

__constant__ float scale = 2.0f;

__device__ __forceinline__ unsigned linear_thread() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__global__ void coords(unsigned* out) {
    __shared__ unsigned tile[1024];
    const unsigned t = linear_thread();
    const dim3 g = gridDim;
    const dim3 b = blockIdx;
    tile[t] = g.x * g.y * g.z + b.x + b.y + b.z + static_cast<unsigned>(scale);
    __syncthreads();
    __threadfence_block();
    out[t] = tile[blockDim.x * blockDim.y * blockDim.z - 1 - t];
    __threadfence();
    __threadfence_system();
}

__host__ __device__ inline int both(int x) { return x + 1; }

// The cooperative groups surface.
__global__ void groups(unsigned* out) {
    namespace cg = cooperative_groups;
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    cg::multi_grid_group multi = cg::this_multi_grid();
    auto tile = cg::tiled_partition<32>(block);
    out[grid.thread_rank()] = block.size() + block.thread_rank() + block.group_index().x +
                              block.thread_index().x + block.group_dim().x + grid.size() +
                              grid.is_valid() + multi.num_grids() + multi.grid_rank() +
                              multi.thread_rank() + multi.size() + multi.is_valid() +
                              tile.shfl_down(tile.thread_rank(), 1u) + tile.shfl_up(1u, 1u) +
                              cg::group_size(tile) + cg::thread_rank(block);
    cg::sync(block);
    tile.sync();
    if (grid.is_valid()) grid.sync();
    if (multi.is_valid()) multi.sync();
}

int main() {
    int version = 0, driver = 0, count = 0, device = 0;
    char name[64];
    hipError_t err = hipInit(0);
    err = hipRuntimeGetVersion(&version);
    err = hipDriverGetVersion(&driver);
    err = hipGetDeviceCount(&count);
    err = hipSetDevice(0);
    err = hipGetDevice(&device);
    err = hipDeviceGetName(name, sizeof name, device);

    unsigned* out = nullptr;
    err = hipMalloc(&out, 1024 * sizeof(unsigned));
    err = hipMemset(out, 0, 1024 * sizeof(unsigned));
    hipStream_t stream = nullptr;
    coords<<<dim3(2, 2, 1), dim3(8, 8, 4), 0, stream>>>(out);
    hipLaunchKernelGGL(fill<unsigned>, dim3(4), dim3(256), 0, 0, out, 7u);
    hipLaunchKernelGGL(coords, 1, 64, 0, stream, out);
    void* args[] = {&out};
    err = hipLaunchKernel(reinterpret_cast<const void*>(&coords), dim3(1), dim3(64), args, 0,
                          stream);
    err = hipLaunchCooperativeKernel(groups, dim3(2), dim3(64), args, 0, stream);
    err = hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&groups), dim3(2), dim3(64),
                                     args, 0, stream);
    err = hipDeviceSynchronize();
    unsigned host[1024];
    err = hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost);
    err = hipFree(out);
    err = hipPeekAtLastError();
    err = hipGetLastError();
    std::printf("%s %s %d\n", hipGetErrorName(err), hipGetErrorString(err), both(1));
    return 0;
}
