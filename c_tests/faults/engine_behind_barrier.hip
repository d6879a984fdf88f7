// hipshim-test: expect-stderr=0xdead0000
//
// engine_behind_barrier: a copy-engine copy queued behind a fault waits for a marker that
// never completes. Once the stream's next kernel has been published, that kernel's barrier
// (not the stream) is what waits for the copy; when the stream finds the fault, the copy must
// still be let go: a copy engine runs its jobs in order, so a job left waiting would hold up
// every later copy on that engine, of every stream (found by the API fuzzer, a hipFree that
// never returned).
#include "faults.h"

static const size_t BYTES = 4096;
static const int N = BYTES / sizeof(int);

int main() {
    start_watchdog(60);
    hipStream_t a, b;
    MUST(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    int *gate, *host;
    MUST(hipHostMalloc((void**)&gate, sizeof(int), 0));
    MUST(hipHostMalloc((void**)&host, BYTES, 0));
    *gate = 0;
    int *d1, *d2, *d3, *d4, *runs;
    MUST(hipMalloc((void**)&d1, BYTES));
    MUST(hipMalloc((void**)&d2, BYTES));
    MUST(hipMalloc((void**)&d3, BYTES));
    MUST(hipMalloc((void**)&d4, BYTES));
    MUST(hipMalloc((void**)&runs, sizeof(int)));
    MUST(hipMemset(runs, 0, sizeof(int)));

    step("work behind a fault");
    hold_until<<<1, 1, 0, a>>>(gate);
    store_to_nowhere<<<1, 1, 0, a>>>(1);
    // Waits on its engine for a marker behind the fault.
    MUST(hipMemcpyAsync(d2, d1, BYTES, hipMemcpyDeviceToDevice, a));
    // Its barrier waits for the copy: the stream's record of the copy moves to the kernel.
    count_run<<<1, 1, 0, a>>>(runs, 0);
    *gate = 1;
    expect("hipStreamSynchronize(a)", hipStreamSynchronize(a), hipErrorIllegalAddress);

    step("every copy engine still runs another stream's copies");
    for (int i = 0; i < N; ++i) host[i] = 3 * i + 1;
    for (int round = 0; round < 4; ++round) {
        MUST(hipMemcpyAsync(d3, host, BYTES, hipMemcpyHostToDevice, b));
        MUST(hipMemcpyAsync(d4, d3, BYTES, hipMemcpyDeviceToDevice, b));
        MUST(hipMemcpyAsync(host, d4, BYTES, hipMemcpyDeviceToHost, b));
    }
    expect("hipStreamSynchronize(b)", hipStreamSynchronize(b), hipSuccess);
    bool same = true;
    for (int i = 0; i < N; ++i) same = same && host[i] == 3 * i + 1;
    expect_true("the copies arrived", same);

    step("teardown");
    // A device-wide call reports the fault once more (device-wide calls have not yet).
    expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipErrorIllegalAddress);
    expect("hipDeviceSynchronize again", hipDeviceSynchronize(), hipSuccess);
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
    MUST(hipFree(d1));
    MUST(hipFree(d2));
    MUST(hipFree(d3));
    MUST(hipFree(d4));
    MUST(hipFree(runs));
    MUST(hipHostFree(gate));
    MUST(hipHostFree(host));
    return finish("faults engine_behind_barrier");
}
