// hipshim-test: expect-stderr=hostcall: expect-stderr=unknown
// A kernel asking the hostcall service for a service it does not offer: the host logs it and
// answers 0, so the device neither hangs nor faults, and the kernel's other work stands.
#include <hip/hip_runtime.h>
#include <stdio.h>

typedef long hostcall_answer __attribute__((ext_vector_type(2)));

// The device library's hostcall entry point (ockl): service id, then 8 words per lane.
extern "C" __device__ hostcall_answer __ockl_hostcall_preview(unsigned service, long a0, long a1,
                                                              long a2, long a3, long a4, long a5,
                                                              long a6, long a7);

__global__ void ask(long *answers) {
    unsigned lane = threadIdx.x;
    hostcall_answer got = __ockl_hostcall_preview(99, lane, 1, 2, 3, 4, 5, 6, 7);
    answers[2 * lane] = got.x;
    answers[2 * lane + 1] = got.y;
}

int main() {
    const int lanes = 64;
    long *answers = nullptr;
    if (hipMalloc(&answers, 2 * lanes * sizeof(long)) != hipSuccess) return 1;
    if (hipMemset(answers, 0x5a, 2 * lanes * sizeof(long)) != hipSuccess) return 1;
    ask<<<1, lanes>>>(answers);
    hipError_t sync = hipDeviceSynchronize();
    long host[2 * lanes];
    if (hipMemcpy(host, answers, sizeof host, hipMemcpyDeviceToHost) != hipSuccess) return 1;
    int wrong = 0;
    for (int i = 0; i < 2 * lanes; ++i) wrong += host[i] != 0;
    printf("unknown service: sync %s, %d of %d answer words not 0\n", hipGetErrorName(sync),
           wrong, 2 * lanes);
    if (sync != hipSuccess || wrong != 0) {
        fprintf(stderr, "unknown_service: FAILED\n");
        return 1;
    }
    printf("unknown_service: PASSED\n");
    return 0;
}
