// grid_2d_3d: every work-item of a 2D and a 3D launch (with partial blocks in
// every dimension) writes its global coordinates; the host checks each cell
// was written exactly once with the right values.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                         hipGetErrorName(err_));                                       \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

__global__ void grid2d(unsigned* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&out[y * w + x], 1u + (unsigned)(x << 8) + (unsigned)(y << 20));
}

__global__ void grid3d(unsigned* out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < w && y < h && z < d) {
        unsigned tag = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        out[(z * h + y) * w + x] = (unsigned)(x | y << 8 | z << 16) ^ (tag << 24) ^
                                   (gridDim.x << 28);
    }
}

int main() {
    int bad = 0;
    {
        const int w = 100, h = 37;
        unsigned* d;
        CHECK(hipMalloc(&d, w * h * sizeof(unsigned)));
        CHECK(hipMemset(d, 0, w * h * sizeof(unsigned)));
        dim3 block(16, 8);
        dim3 grid((w + 15) / 16, (h + 7) / 8);
        hipLaunchKernelGGL(grid2d, grid, block, 0, 0, d, w, h);
        CHECK(hipDeviceSynchronize());
        std::vector<unsigned> out(w * h);
        CHECK(hipMemcpy(out.data(), d, w * h * sizeof(unsigned), hipMemcpyDeviceToHost));
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                unsigned want = 1u + (unsigned)(x << 8) + (unsigned)(y << 20);
                if (out[y * w + x] != want && bad++ < 10)
                    std::fprintf(stderr, "2d (%d,%d): %#x want %#x\n", x, y, out[y * w + x], want);
            }
        CHECK(hipFree(d));
    }
    {
        const int w = 19, h = 11, dd = 7;
        unsigned* d;
        CHECK(hipMalloc(&d, w * h * dd * sizeof(unsigned)));
        dim3 block(8, 4, 2);
        dim3 grid((w + 7) / 8, (h + 3) / 4, (dd + 1) / 2);
        hipLaunchKernelGGL(grid3d, grid, block, 0, 0, d, w, h, dd);
        CHECK(hipDeviceSynchronize());
        std::vector<unsigned> out(w * h * dd);
        CHECK(hipMemcpy(out.data(), d, out.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
        for (int z = 0; z < dd; ++z)
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    unsigned tag = (x % 8) + 8 * ((y % 4) + 4 * (z % 2));
                    unsigned want = (unsigned)(x | y << 8 | z << 16) ^ (tag << 24) ^ (grid.x << 28);
                    unsigned got = out[(z * h + y) * w + x];
                    if (got != want && bad++ < 10)
                        std::fprintf(stderr, "3d (%d,%d,%d): %#x want %#x\n", x, y, z, got, want);
                }
        CHECK(hipFree(d));
    }
    if (bad) {
        std::fprintf(stderr, "grid_2d_3d: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("grid_2d_3d: PASSED\n");
    return 0;
}
