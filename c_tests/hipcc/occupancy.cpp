// Built by Debian's hipcc (AMD's headers, gfx90a): prints what the occupancy calls answer
// for kernels of different register and LDS use, block sizes and dynamic LDS, one line each,
// so that the output under hipshim can be compared with the output under AMD's runtime.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void tiny(float* out) { out[threadIdx.x] = 1.0f; }

__global__ void lds_16k(float* out) {
    __shared__ float buffer[4096];
    buffer[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buffer[(threadIdx.x * 7) % 4096];
}

// Many values live at once: a large VGPR count.
__global__ void __launch_bounds__(256) registers(const float* in, float* out) {
    float v[96];
#pragma unroll
    for (int i = 0; i < 96; ++i) v[i] = in[threadIdx.x + i * 256];
    float acc = 0;
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int i = 0; i < 96; ++i) acc += v[i] * v[(i * 5 + r) % 96];
    out[threadIdx.x] = acc;
}

extern "C" __global__ void dynamic_lds(float* out) {
    extern __shared__ float shared[];
    shared[threadIdx.x] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = shared[0];
}

static void report(const char* name, const void* kernel) {
    const int blocks[] = {32, 64, 100, 128, 192, 256, 512, 1024};
    const size_t lds[] = {0, 8192, 40000};
    for (size_t dyn : lds) {
        for (int block : blocks) {
            int n = -1;
            hipError_t e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, dyn);
            std::printf("%s block %d lds %zu: %s %d\n", name, block, dyn, hipGetErrorName(e), n);
        }
        int grid = -1, block = -1;
        hipError_t e = hipOccupancyMaxPotentialBlockSize(&grid, &block, kernel, dyn, 0);
        std::printf("%s potential lds %zu: %s grid %d block %d\n", name, dyn, hipGetErrorName(e),
                    grid, block);
    }
}

int main() {
    report("tiny", reinterpret_cast<const void*>(tiny));
    report("lds_16k", reinterpret_cast<const void*>(lds_16k));
    report("registers", reinterpret_cast<const void*>(registers));
    report("dynamic_lds", reinterpret_cast<const void*>(dynamic_lds));
    return 0;
}
