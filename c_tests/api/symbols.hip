// symbols: __device__ and __constant__ variables registered by __hipRegisterVar, reached by
// hipMemcpyToSymbol/FromSymbol, hipGetSymbolAddress and hipGetSymbolSize, and seen by kernels.
#include "../check.h"

__device__ int counter;
__device__ float table[64];
__constant__ int coefficients[8];
__device__ double untouched = 2.5;

__global__ void use_symbols(int* out) {
    int i = threadIdx.x;
    out[i] = coefficients[i % 8] * (int)table[i];
    if (i == 0) atomicAdd(&counter, 1);
}

int main() {
    // Initialised globals keep their initial value.
    double d = 0;
    EXPECT_OK(hipMemcpyFromSymbol(&d, HIP_SYMBOL(untouched), sizeof d));
    EXPECT_TRUE(d == 2.5);

    size_t size = 0;
    EXPECT_OK(hipGetSymbolSize(&size, HIP_SYMBOL(table)));
    EXPECT_EQ(size, 64 * sizeof(float));
    EXPECT_OK(hipGetSymbolSize(&size, HIP_SYMBOL(coefficients)));
    EXPECT_EQ(size, 8 * sizeof(int));

    float t[64];
    for (int i = 0; i < 64; ++i) t[i] = (float)i;
    int c[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int zero = 0;
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(table), t, sizeof t));
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), c, 4 * sizeof(int)));
    // With an offset: the second half.
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), c + 4, 4 * sizeof(int),
                                4 * sizeof(int), hipMemcpyHostToDevice));
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(counter), &zero, sizeof zero));

    int* out = nullptr;
    EXPECT_OK(hipMalloc(&out, 64 * sizeof(int)));
    use_symbols<<<1, 64>>>(out);
    use_symbols<<<1, 64>>>(out);
    EXPECT_OK(hipDeviceSynchronize());
    int host[64];
    EXPECT_OK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < 64; ++i) ok &= host[i] == c[i % 8] * i;
    EXPECT_TRUE(ok);
    int count = 0;
    EXPECT_OK(hipMemcpyFromSymbol(&count, HIP_SYMBOL(counter), sizeof count));
    EXPECT_EQ(count, 2);
    int tail[2] = {};
    EXPECT_OK(hipMemcpyFromSymbol(tail, HIP_SYMBOL(coefficients), sizeof tail, 6 * sizeof(int),
                                  hipMemcpyDeviceToHost));
    EXPECT_EQ(tail[0], 7);
    EXPECT_EQ(tail[1], 8);

    // The symbol's address is device memory: usable with hipMemcpy and pointer queries.
    void* addr = nullptr;
    EXPECT_OK(hipGetSymbolAddress(&addr, HIP_SYMBOL(table)));
    EXPECT_TRUE(addr != nullptr);
    float back[64];
    EXPECT_OK(hipMemcpy(back, addr, sizeof back, hipMemcpyDeviceToHost));
    EXPECT_TRUE(back[63] == 63.0f);
    hipPointerAttribute_t attr;
    EXPECT_OK(hipPointerGetAttributes(&attr, addr));
    EXPECT_EQ(attr.type, hipMemoryTypeDevice);
    // Device to device into a symbol.
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), out, sizeof(int), 0,
                                hipMemcpyDeviceToDevice));
    EXPECT_OK(hipMemcpyFromSymbol(&count, HIP_SYMBOL(coefficients), sizeof count));
    EXPECT_EQ(count, host[0]);

    // Stream-ordered forms, on the null stream.
    int seven[2] = {7, 7}, read[2] = {};
    EXPECT_OK(hipMemcpyToSymbolAsync(HIP_SYMBOL(coefficients), seven, sizeof seven,
                                     2 * sizeof(int), hipMemcpyHostToDevice, nullptr));
    EXPECT_OK(hipMemcpyFromSymbolAsync(read, HIP_SYMBOL(coefficients), sizeof read,
                                       2 * sizeof(int), hipMemcpyDeviceToHost, nullptr));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_EQ(read[0], 7);
    EXPECT_EQ(read[1], 7);
    EXPECT_ERR(hipMemcpyToSymbolAsync(HIP_SYMBOL(coefficients), seven, sizeof seven,
                                      7 * sizeof(int), hipMemcpyHostToDevice, nullptr),
               hipErrorInvalidValue);

    // Errors: an address that is not a registered symbol, and ranges past the end.
    int not_a_symbol = 0;
    const void* bogus = &not_a_symbol;
    EXPECT_ERR(hipGetSymbolAddress(&addr, bogus), hipErrorInvalidSymbol);
    EXPECT_ERR(hipGetSymbolSize(&size, bogus), hipErrorInvalidSymbol);
    EXPECT_ERR(hipMemcpyToSymbol(bogus, c, 4), hipErrorInvalidSymbol);
    EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), c, 8 * sizeof(int), 4),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyFromSymbol(t, HIP_SYMBOL(table), sizeof t + 4), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(counter), &zero, 4, 0, hipMemcpyDeviceToHost),
               hipErrorInvalidMemcpyDirection);
    EXPECT_ERR(hipGetSymbolAddress(nullptr, HIP_SYMBOL(table)), hipErrorInvalidValue);

    EXPECT_OK(hipFree(out));
    return finish("symbols");
}
