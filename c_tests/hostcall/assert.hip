// hipshim-test: expect-stderr=Device-side expect-stderr=check_small(int
// A failed device assert: AMD's message on stderr, the kernel's failure reported as
// hipErrorAssert by the synchronising call and by hipGetLastError, and the process goes on:
// it can launch again and gets right answers (ROCm 7 semantics; no abort).
#include <hip/hip_runtime.h>
#include <stdio.h>

__global__ void check_small(int *values) {
    unsigned lane = threadIdx.x;
    assert(values[lane] < 3);
    values[lane] += 10;
}

__global__ void store(int *out, int value) { *out = value; }

#define FAIL(...)                                  \
    do {                                           \
        fprintf(stderr, "assert: FAILED: " __VA_ARGS__); \
        return 1;                                  \
    } while (0)

int main() {
    int *values = nullptr;
    int host[4] = {0, 1, 2, 0};
    if (hipMalloc(&values, sizeof host) != hipSuccess ||
        hipMemcpy(values, host, sizeof host, hipMemcpyHostToDevice) != hipSuccess)
        FAIL("setup\n");

    // An assert that holds changes nothing.
    check_small<<<1, 4>>>(values);
    hipError_t e = hipDeviceSynchronize();
    if (e != hipSuccess)
        FAIL("a passing assert: %s\n", hipGetErrorName(e));

    host[2] = 7;
    if (hipMemcpy(values, host, sizeof host, hipMemcpyHostToDevice) != hipSuccess)
        FAIL("copy\n");
    printf("assert: launching a kernel whose assert fails\n");
    check_small<<<1, 4>>>(values);
    e = hipDeviceSynchronize();
    if (e != hipErrorAssert)
        FAIL("the synchronize after a failed assert returned %s, not hipErrorAssert\n",
             hipGetErrorName(e));
    e = hipGetLastError();
    if (e != hipErrorAssert)
        FAIL("hipGetLastError after a failed assert returned %s, not hipErrorAssert\n",
             hipGetErrorName(e));
    e = hipGetLastError();
    if (e != hipSuccess)
        FAIL("hipGetLastError reported %s a second time\n", hipGetErrorName(e));

    // The process and the device go on.
    int *out = nullptr;
    int answer = 0;
    if (hipMalloc(&out, sizeof(int)) != hipSuccess)
        FAIL("allocation after the assert\n");
    store<<<1, 1>>>(out, 42);
    e = hipMemcpy(&answer, out, sizeof answer, hipMemcpyDeviceToHost);
    if (e != hipSuccess || answer != 42)
        FAIL("a launch after the assert: %s, answer %d\n", hipGetErrorName(e), answer);
    printf("assert: PASSED\n");
    return 0;
}
