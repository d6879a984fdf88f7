// hipshim-test: expect-stderr=0xdead0000
//
// copy_behind_fault: a copy that waits for a faulting kernel of its stream is lost work: it
// never runs, like the stream's lost kernels. It used to be started once the fault was found
// (so that its copy engine went on), and copied after the program had been told the stream
// lost its work, by when the program may have freed or reused its memory (found by the API
// fuzzer: a pool block freed after the report, the copy then refused by the HSA runtime and
// reported as a second, unrelated error).
#include "faults.h"

static const size_t BYTES = 4096;
static const int N = BYTES / sizeof(int);

int main() {
    start_watchdog(60);
    hipStream_t s;
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int *gate, *host;
    MUST(hipHostMalloc((void**)&gate, sizeof(int), 0));
    MUST(hipHostMalloc((void**)&host, BYTES, 0));
    *gate = 0;
    for (int i = 0; i < N; ++i) host[i] = -1;
    int* device;
    MUST(hipMalloc((void**)&device, BYTES));
    MUST(hipMemset(device, 0x11, BYTES));

    step("a copy behind a fault");
    hold_until<<<1, 1, 0, s>>>(gate);
    store_to_nowhere<<<1, 1, 0, s>>>(1);
    MUST(hipMemcpyAsync(host, device, BYTES, hipMemcpyDeviceToHost, s));
    *gate = 1;
    expect("hipStreamSynchronize(s)", hipStreamSynchronize(s), hipErrorIllegalAddress);
    // The program may free the copy's memory now.
    expect("hipFree", hipFree(device), hipErrorIllegalAddress);
    MUST(hipFree(device));

    step("the copy never ran and nothing more is reported");
    expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipSuccess);
    expect("hipStreamSynchronize(s) again", hipStreamSynchronize(s), hipSuccess);
    bool untouched = true;
    for (int i = 0; i < N; ++i) untouched = untouched && host[i] == -1;
    expect_true("the destination was not written", untouched);

    step("the stream works again");
    int* again;
    MUST(hipMalloc((void**)&again, BYTES));
    MUST(hipMemset(again, 0x22, BYTES));
    MUST(hipMemcpyAsync(host, again, BYTES, hipMemcpyDeviceToHost, s));
    expect("hipStreamSynchronize(s) after", hipStreamSynchronize(s), hipSuccess);
    bool copied = true;
    for (int i = 0; i < N; ++i) copied = copied && host[i] == 0x22222222;
    expect_true("a later copy arrived", copied);

    MUST(hipStreamDestroy(s));
    MUST(hipFree(again));
    MUST(hipHostFree(gate));
    MUST(hipHostFree(host));
    return finish("faults copy_behind_fault");
}
