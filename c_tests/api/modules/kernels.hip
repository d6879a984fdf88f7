// Kernels loaded at run time by modules.hip (built by tests/c_tests_api.rs into a raw code
// object and an offload bundle). extern "C" keeps the names unmangled.
#include <hip/hip_runtime.h>

__device__ int module_counter = 5;

extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
    if (i == 0) atomicAdd(&module_counter, 1);
}

struct Pair {
    int a;
    double b;
};

// Mixed argument sizes and alignments, for the packed `extra` buffer.
extern "C" __global__ void mixed(char c, Pair p, long long* out) {
    out[0] = c;
    out[1] = p.a;
    out[2] = (long long)p.b;
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 128)))
reverse_lds(int* data) {
    extern __shared__ int tile[];
    tile[threadIdx.x] = data[threadIdx.x];
    __syncthreads();
    data[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
