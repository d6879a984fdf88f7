// dynamic_shared: `extern __shared__` sized at launch (three sizes, next to a
// static __shared__ array), used to reverse each block's slice of an array.
#include <hip/hip_runtime.h>

#include <cmath>
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
extern __shared__ int dyn[];

__global__ void reverse_blocks(const int* in, int* out, int n) {
    __shared__ int marker[4];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    if (t < 4) marker[t] = 1000 + t;
    dyn[t] = base + t < n ? in[base + t] : -1;
    __syncthreads();
    int src = blockDim.x - 1 - t;
    if (base + t < n) out[base + t] = dyn[src] + marker[t & 3] - 1000 - (t & 3);
}

int main() {
    int bad = 0;
    for (int block : {64, 256, 1024}) {
        const int n = block * 9;
        std::vector<int> in(n), out(n);
        for (int i = 0; i < n; ++i) in[i] = i * 3 + 1;
        int *di, *dout;
        CHECK(hipMalloc(&di, n * 4));
        CHECK(hipMalloc(&dout, n * 4));
        CHECK(hipMemcpy(di, in.data(), n * 4, hipMemcpyHostToDevice));
        hipLaunchKernelGGL(reverse_blocks, dim3(n / block), dim3(block), block * sizeof(int), 0, di,
                           dout, n);
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(out.data(), dout, n * 4, hipMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) {
            int b = i / block, t = i % block;
            int want = in[b * block + block - 1 - t];
            if (out[i] != want && bad++ < 10)
                std::fprintf(stderr, "block %d: out[%d] = %d want %d\n", block, i, out[i], want);
        }
        CHECK(hipFree(di));
        CHECK(hipFree(dout));
    }
    if (bad) {
        std::fprintf(stderr, "dynamic_shared: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("dynamic_shared: PASSED\n");
    return 0;
}
