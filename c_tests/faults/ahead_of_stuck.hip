// hipshim-test: expect-stderr=0xdead0000
//
// ahead_of_stuck: a stream made to wait for an event of a failed queue has its queue stuck at
// that wait, but the work it queued ahead of the wait still runs. The stream's
// synchronisation, a device-wide one and hipFree must wait for that work before they report
// the fault: the program is told the stream's work is over, and frees what that work writes
// (found by the API fuzzer: a fill ahead of such a wait ran after hipFree had given its
// buffer back, and faulted).
#include "faults.h"

#include <thread>

// Opens `gate` after `ms` milliseconds, from another host thread, while the main thread waits.
static std::thread open_later(volatile int* gate, int ms) {
    return std::thread([gate, ms] {
        usleep(ms * 1000);
        *gate = 1;
    });
}

int main() {
    start_watchdog(60);
    hipStream_t a, s;
    MUST(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    int *gate, *done;
    MUST(hipHostMalloc((void**)&gate, sizeof(int), 0));
    MUST(hipHostMalloc((void**)&done, sizeof(int), 0));
    int *runs, *buffer;
    MUST(hipMalloc((void**)&runs, sizeof(int)));
    MUST(hipMemset(runs, 0, sizeof(int)));
    hipEvent_t lost;
    MUST(hipEventCreateWithFlags(&lost, hipEventDisableTiming));

    step("an event behind a fault");
    store_to_nowhere<<<1, 1, 0, a>>>(1);
    MUST(hipEventRecord(lost, a));
    expect("hipStreamSynchronize(a)", hipStreamSynchronize(a), hipErrorIllegalAddress);

    step("hipStreamSynchronize waits for the work ahead of the stuck wait");
    *gate = 0;
    *done = 0;
    hold_until<<<1, 1, 0, s>>>(gate);
    count_run<<<1, 1, 0, s>>>(done, 0);
    MUST(hipStreamWaitEvent(s, lost, 0));
    count_run<<<1, 1, 0, s>>>(runs, 0);
    std::thread opener = open_later(gate, 300);
    expect("hipStreamSynchronize(s)", hipStreamSynchronize(s), hipErrorIllegalAddress);
    expect_true("the kernel ahead of the wait ran before the stream reported",
                __atomic_load_n(done, __ATOMIC_SEQ_CST) == 1);
    opener.join();

    step("hipDeviceSynchronize waits for it too");
    *gate = 0;
    *done = 0;
    hold_until<<<1, 1, 0, s>>>(gate);
    count_run<<<1, 1, 0, s>>>(done, 0);
    MUST(hipStreamWaitEvent(s, lost, 0));
    count_run<<<1, 1, 0, s>>>(runs, 0);
    opener = open_later(gate, 300);
    hipError_t first = hipDeviceSynchronize();
    expect_true("hipDeviceSynchronize reports a fault",
                first == hipErrorIllegalAddress || first == hipErrorLaunchFailure);
    expect_true("the kernel ahead of the wait ran before hipDeviceSynchronize returned",
                __atomic_load_n(done, __ATOMIC_SEQ_CST) == 1);
    opener.join();
    for (int i = 0; i < 4 && hipDeviceSynchronize() != hipSuccess; ++i) {
    }
    hipStreamSynchronize(s);

    step("hipFree waits for it before the memory goes back");
    MUST(hipMalloc((void**)&buffer, sizeof(int)));
    *gate = 0;
    *done = 0;
    hold_until<<<1, 1, 0, s>>>(gate);
    count_run<<<1, 1, 0, s>>>(buffer, 0);
    count_run<<<1, 1, 0, s>>>(done, 0);
    MUST(hipStreamWaitEvent(s, lost, 0));
    count_run<<<1, 1, 0, s>>>(runs, 0);
    opener = open_later(gate, 300);
    hipError_t freed = hipFree(buffer);
    expect_true("hipFree returns success or the fault",
                freed == hipSuccess || freed == hipErrorIllegalAddress);
    expect_true("the kernels ahead of the wait ran before hipFree returned",
                __atomic_load_n(done, __ATOMIC_SEQ_CST) == 1);
    opener.join();
    if (freed != hipSuccess) MUST(hipFree(buffer));

    step("a fill ahead of the stuck wait, held up on the callback thread");
    // The fill runs on the callback thread, behind another stream's host function that takes
    // a while: when the stream finds its wait lost, the fill has yet to run.
    hipStream_t b;
    MUST(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    int* filled;
    MUST(hipHostMalloc((void**)&filled, 64 * sizeof(int), 0));
    std::memset(filled, 0, 64 * sizeof(int));
    MUST(hipLaunchHostFunc(b, [](void*) { usleep(300 * 1000); }, nullptr));
    MUST(hipMemsetD32Async((hipDeviceptr_t)filled, 7, 64, s));
    MUST(hipStreamWaitEvent(s, lost, 0));
    count_run<<<1, 1, 0, s>>>(runs, 0);
    hipError_t reported = hipStreamSynchronize(s);
    expect_true("hipStreamSynchronize(s) reports the fault",
                reported == hipErrorIllegalAddress);
    expect_true("the fill ahead of the wait was done before the stream reported",
                __atomic_load_n(&filled[63], __ATOMIC_SEQ_CST) == 7);
    MUST(hipStreamSynchronize(b));
    MUST(hipStreamDestroy(b));
    // The device-wide report of the stream's loss is still owed: hipHostFree may give it.
    if (hipHostFree(filled) != hipSuccess) MUST(hipHostFree(filled));

    step("work behind the stuck wait never ran");
    for (int i = 0; i < 4 && hipDeviceSynchronize() != hipSuccess; ++i) {
    }
    hipStreamSynchronize(s);
    int host_runs = -1;
    read_counts(runs, &host_runs, 1);
    expect_true("no kernel behind the stuck wait ran", host_runs == 0);

    step("teardown");
    MUST(hipEventDestroy(lost));
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(s));
    MUST(hipFree(runs));
    MUST(hipHostFree(gate));
    MUST(hipHostFree(done));
    return finish("faults ahead_of_stuck");
}
