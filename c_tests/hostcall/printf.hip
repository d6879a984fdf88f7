// Device printf: many formats from several lanes, waves and work-groups, in order with the
// host's own printf before and after each kernel. tests/c_tests_hostcall.rs compares the
// whole stdout with printf.expected (exactly, but for the lines between "unordered:" markers,
// which come from work-groups and waves that may run in any order and are compared sorted).
#include <hip/hip_runtime.h>
#include <stdio.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        hipError_t e_ = (call);                                                       \
        if (e_ != hipSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

__global__ void formats(const char *device_text) {
    printf("no arguments at all\n");
    printf("ints: %d %i %u %x %X %o %c %%\n", -42, 7, 4000000000u, 0xbeef, 0xbeef, 8, 'Q');
    printf("flags: [%5d] [%-5d] [%+d] [% d] [%05d] [%#x] [%#o] [%.3d] [%*d] [%-*d]\n", 42, 42,
           42, 42, -42, 255, 8, 7, 6, 9, 4, 1);
    printf("lengths: %ld %lld %lu %llx %hd %hhu %zu %jd\n", -1234567890123L, 9007199254740993LL,
           18446744073709551615UL, 0xfedcba9876543210ULL, (short)-2, (unsigned char)200,
           (size_t)12345, (intmax_t)-5);
    printf("floats: %f %.2f %10.4f %-10.1f| %e %E %.3e %g %G %g %a %A %F\n", 3.14159265,
           2.71828, 1.5, -0.25, 123456.789, 0.000123, 6.02214076e23, 100000.0, 1e-10, 0.5,
           1.0, -2.5, 42.0f);
    printf("specials: %f %f %e\n", 1.0 / 0.0, -1.0 / 0.0, 0.0);
    printf("strings: [%s] [%10s] [%-10s] [%.3s] [%s] [%s]\n", "literal", "right", "left",
           "truncated", "", device_text);
    printf("a long string: %s and after it %d\n",
           "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-the-end", 99);
    printf("many arguments: %d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9,
           10, 11, 12);
    printf("pointer: %p\n", (void *)0x1234);
}

__global__ void lanes(int base) {
    unsigned lane = threadIdx.x;
    if (lane % 3 == 0)
        printf("lane %2u of wave 0: %d\n", lane, base + (int)lane);
}

__global__ void many(int *sum) {
    unsigned t = threadIdx.x;
    if (t % 64 == 0 || t % 64 == 63)
        printf("block %u thread %3u wave %u\n", (unsigned)blockIdx.x, t, t / 64);
    atomicAdd(sum, 1);
}

int main() {
    printf("host: before any kernel\n");
    char *text = nullptr;
    CHECK(hipMalloc(&text, 32));
    CHECK(hipMemcpy(text, "from device memory", 19, hipMemcpyHostToDevice));
    formats<<<1, 1>>>(text);
    CHECK(hipDeviceSynchronize());
    printf("host: between kernels\n");
    lanes<<<1, 20>>>(100);
    CHECK(hipStreamSynchronize(0));
    printf("host: before many\nunordered:\n");
    int *sum = nullptr;
    CHECK(hipMalloc(&sum, sizeof(int)));
    CHECK(hipMemset(sum, 0, sizeof(int)));
    many<<<3, 128>>>(sum);
    int total = 0;
    // A synchronous copy waits for the kernel too: its output is out before it returns.
    CHECK(hipMemcpy(&total, sum, sizeof(int), hipMemcpyDeviceToHost));
    printf("unordered:\nhost: after many, %d threads\n", total);
    CHECK(hipFree(sum));
    CHECK(hipFree(text));
    printf("printf: PASSED\n");
    return 0;
}
