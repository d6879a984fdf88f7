// Compile-only check: a plain C++ compiler (no HIP mode) may include the
// headers for host code that calls the runtime API.
#include <hip/hip_runtime.h>

#include <cstdio>

int main() {
    int count = 0;
    hipError_t err = hipGetDeviceCount(&count);
    float* p = nullptr;
    if (err == hipSuccess) {
        err = hipMalloc(&p, 16 * sizeof(float));
    }
    const dim3 grid(4, 2);
    std::printf("%s %d %u\n", hipGetErrorName(err), count, grid.x * grid.y * grid.z);
    return hipFree(p) == hipSuccess ? 0 : 1;
}
