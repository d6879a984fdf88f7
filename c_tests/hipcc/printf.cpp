// Device printf in a program built by Debian's hipcc with AMD's headers (ROCm 5.2, code
// object v4): the output, in order with the host's, is compared with AMD's runtime.
#include <hip/hip_runtime.h>
#include <stdio.h>

__global__ void hello(const char *word, int base) {
    unsigned t = threadIdx.x;
    if (t % 32 == 0)
        printf("block %u thread %u: %s %d %5.2f %x|%-6s|%c\n", (unsigned)blockIdx.x, t, word, base + (int)t,
               t * 0.5, 0xA0u + t, "ab", 'a' + (int)(t / 32));
}

int main() {
    printf("host: before\n");
    char *word = nullptr;
    if (hipMalloc(&word, 8) != hipSuccess ||
        hipMemcpy(word, "words", 6, hipMemcpyHostToDevice) != hipSuccess) {
        printf("printf: setup FAILED\n");
        return 1;
    }
    hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0, word, -3);
    hipError_t e = hipDeviceSynchronize();
    printf("host: after (%s)\n", hipGetErrorName(e));
    return e == hipSuccess ? 0 : 1;
}
