// x_only_ids: a kernel that reads only threadIdx.x, launched with 2D and 3D blocks. The
// compiler asks the hardware for the x id alone and uses v0 unmasked, so the device must
// leave the y/z fields of v0 zero; every (x, y, z) thread then counts into slot x.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void count_by_x(unsigned* counts) { atomicAdd(&counts[threadIdx.x], 1u); }

static int check(const char* what, dim3 block) {
    unsigned* counts = nullptr;
    if (hipMalloc(&counts, block.x * sizeof(unsigned)) != hipSuccess ||
        hipMemset(counts, 0, block.x * sizeof(unsigned)) != hipSuccess) {
        std::fprintf(stderr, "FAIL %s: cannot set up memory\n", what);
        return 1;
    }
    count_by_x<<<3, block>>>(counts);
    hipError_t err = hipDeviceSynchronize();
    if (err != hipSuccess) {
        std::fprintf(stderr, "FAIL %s: kernel failed: %s\n", what, hipGetErrorName(err));
        return 1;
    }
    unsigned host[1024];
    hipMemcpy(host, counts, block.x * sizeof(unsigned), hipMemcpyDeviceToHost);
    hipFree(counts);
    const unsigned want = 3 * block.y * block.z;
    for (unsigned x = 0; x < block.x; ++x) {
        if (host[x] != want) {
            std::fprintf(stderr, "FAIL %s: slot %u counted %u threads, expected %u\n", what, x,
                         host[x], want);
            return 1;
        }
    }
    std::printf("ok   %s\n", what);
    return 0;
}

int main() {
    int failures = check("block 64x4", dim3(64, 4, 1)) + check("block 16x16x2", dim3(16, 16, 2)) +
                   check("block 5x3x7", dim3(5, 3, 7));
    if (failures) return 1;
    std::printf("x_only_ids: PASSED\n");
    return 0;
}
