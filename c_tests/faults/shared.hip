// hipshim-test: expect-stderr=0xdead0000
//
// shared: no silent lost work. When one stream faults, every stream whose queued work was
// dropped (it shared the failed queue, or waits for it) reports the fault at its own next
// synchronize, query or host-waiting copy, even when a device-wide call saw the fault
// first; work that was not dropped runs. Checked the same way under every queue policy:
// each piece of work either ran, or its stream reported the fault (exactly once). Under
// `single` and `pool:1` every stream shares the failed queue, so every one must report.
// Also: hipStreamSynchronize(0) and the null stream, host functions and copy-engine copies
// behind a fault, two faults before a synchronize, hipGetLastError after each.
#include "faults.h"

static bool all_streams_share_a_queue() {
    const char* policy = std::getenv("HIPSHIM_QUEUE_POLICY");
    return policy && (std::strcmp(policy, "single") == 0 || std::strcmp(policy, "pool:1") == 0);
}

// `reported` is what the stream's own call returned; `ran` whether its work happened.
static void expect_ran_or_reported(const char* what, hipError_t reported, bool ran) {
    char text[160];
    std::snprintf(text, sizeof text, "%s: its work ran (%s) or it reported the fault (%s)", what,
                  ran ? "yes" : "no", hipGetErrorName(reported));
    expect_true(text, ran ? reported == hipSuccess : reported == hipErrorIllegalAddress);
    if (all_streams_share_a_queue()) expect_true("... on a shared queue it was dropped", !ran);
}

static int* counts = nullptr;
static const int SLOTS = 8;

static void reset_counts() {
    MUST(hipMemset(counts, 0, SLOTS * sizeof(int)));
}

// Host memory the device reads: `hold` closes it before a scenario's launches, `release`
// opens it once they are all published.
static volatile int* gate = nullptr;

static void hold(hipStream_t s) {
    *gate = 0;
    hold_until<<<1, 1, 0, s>>>(gate);
}

static void release() {
    __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
}

static void read(int* host) {
    read_counts(counts, host, SLOTS);
}

// A device-wide call sees the fault first; then each stream reports what it lost, by
// synchronize, query, and a copy to pageable memory that waits for the stream.
static void device_wide_first() {
    step("device-wide call first");
    reset_counts();
    hipStream_t f, v[3];
    MUST(hipStreamCreateWithFlags(&f, hipStreamNonBlocking));
    for (hipStream_t& s : v) MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hold(f);
    store_to_nowhere<<<1, 64, 0, f>>>(1);
    count_run<<<1, 1, 0, f>>>(counts, 0);
    for (int i = 0; i < 3; ++i) count_run<<<1, 1, 0, v[i]>>>(counts, 1 + i);
    release();

    expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipErrorIllegalAddress);
    expect("hipGetLastError", hipGetLastError(), hipErrorIllegalAddress);
    expect("hipGetLastError is reset", hipGetLastError(), hipSuccess);
    expect("hipDeviceSynchronize reports it once", hipDeviceSynchronize(), hipSuccess);

    expect("the faulting stream: hipStreamSynchronize", hipStreamSynchronize(f),
           hipErrorIllegalAddress);
    hipError_t r1 = hipStreamSynchronize(v[0]);
    hipError_t r2 = hipStreamQuery(v[1]);
    int pageable[SLOTS] = {};
    hipError_t r3 = hipMemcpyAsync(pageable, counts, sizeof pageable, hipMemcpyDeviceToHost, v[2]);
    (void)hipGetLastError();
    for (hipStream_t s : v) {
        expect("then hipStreamSynchronize succeeds", hipStreamSynchronize(s), hipSuccess);
        expect("then hipStreamQuery succeeds", hipStreamQuery(s), hipSuccess);
    }
    expect("the faulting stream reports it once", hipStreamSynchronize(f), hipSuccess);
    expect("no device-wide report left", hipDeviceSynchronize(), hipSuccess);

    int host[SLOTS];
    read(host);
    expect_true("the kernel behind the fault never ran", host[0] == 0);
    expect_ran_or_reported("stream 1, by hipStreamSynchronize", r1, host[1] == 1);
    expect_ran_or_reported("stream 2, by hipStreamQuery", r2, host[2] == 1);
    expect_ran_or_reported("stream 3, by hipMemcpyAsync to pageable memory", r3, host[3] == 1);
    if (r3 == hipSuccess) expect_true("... and that copy was done", pageable[3] == 1);

    // Every stream works again (each on a queue that works).
    int before[SLOTS];
    std::memcpy(before, host, sizeof host);
    count_run<<<1, 1, 0, f>>>(counts, 0);
    for (int i = 0; i < 3; ++i) count_run<<<1, 1, 0, v[i]>>>(counts, 1 + i);
    expect("recovery: hipDeviceSynchronize", hipDeviceSynchronize(), hipSuccess);
    read(host);
    for (int i = 0; i < 4; ++i) expect_true("recovery: the kernel ran", host[i] == before[i] + 1);
    MUST(hipStreamDestroy(f));
    for (hipStream_t s : v) MUST(hipStreamDestroy(s));
}

// Blocking streams and the null stream: hipStreamSynchronize(0) waits for the blocking
// streams and reports their fault like a device-wide call; a null-stream kernel launched
// after the fault waits for the faulting stream (legacy ordering), so it is lost under every
// policy and the null stream reports it.
static void null_stream_first() {
    step("hipStreamSynchronize(0) first");
    reset_counts();
    hipStream_t f, v;
    MUST(hipStreamCreate(&f));
    MUST(hipStreamCreate(&v));
    hold(f);
    store_to_nowhere<<<1, 64, 0, f>>>(2);
    count_run<<<1, 1, 0, v>>>(counts, 1);
    count_run<<<1, 1>>>(counts, 2);
    release();

    expect("hipStreamSynchronize(0)", hipStreamSynchronize(nullptr), hipErrorIllegalAddress);
    expect("hipStreamSynchronize(0) reports it once", hipStreamSynchronize(nullptr), hipSuccess);
    expect("the device-wide report was that one", hipDeviceSynchronize(), hipSuccess);
    expect("the faulting stream still reports it", hipStreamSynchronize(f),
           hipErrorIllegalAddress);
    hipError_t rv = hipStreamSynchronize(v);
    expect("then it succeeds", hipStreamSynchronize(v), hipSuccess);
    (void)hipGetLastError();
    int host[SLOTS];
    read(host);
    expect_ran_or_reported("a blocking stream", rv, host[1] == 1);
    expect_true("the null-stream kernel that waited for the fault never ran", host[2] == 0);

    count_run<<<1, 1>>>(counts, 2);
    count_run<<<1, 1, 0, f>>>(counts, 3);
    expect("recovery: hipStreamSynchronize(0)", hipStreamSynchronize(nullptr), hipSuccess);
    read(host);
    expect_true("recovery: the null stream and the faulting stream run", host[2] == 1 && host[3] == 1);
    MUST(hipStreamDestroy(f));
    MUST(hipStreamDestroy(v));
}

static void set_flag(void* flag) {
    *static_cast<volatile int*>(flag) = 1;
}

// Out-of-queue work (a host function, a copy-engine copy) behind a fault: the stream reports
// the fault instead of waiting for it forever, the host function never runs, and the copy
// engine is not held up (a copy engine runs its jobs in order: the copy behind the fault is
// let go, with an undefined result, so later copies of every stream still run). Stream `w`
// waits for the fault (lost under every policy); stream `u` does the same work without
// waiting (lost only where it shares the failed queue).
static void out_of_queue_work() {
    step("host function and copy behind a fault");
    reset_counts();
    int* src = nullptr;
    int* dst = nullptr;
    MUST(hipMalloc(&src, 2 * sizeof(int)));
    MUST(hipMalloc(&dst, 2 * sizeof(int)));
    int ones[2] = {1, 1};
    int zeros[2] = {0, 0};
    MUST(hipMemcpy(src, ones, sizeof ones, hipMemcpyHostToDevice));
    MUST(hipMemcpy(dst, zeros, sizeof zeros, hipMemcpyHostToDevice));
    hipStream_t f, w, u;
    hipEvent_t fault;
    MUST(hipStreamCreateWithFlags(&f, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&w, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&u, hipStreamNonBlocking));
    MUST(hipEventCreate(&fault));
    static int w_flag = 0, u_flag = 0;
    w_flag = u_flag = 0;

    hold(f);
    store_to_nowhere<<<1, 64, 0, f>>>(3);
    MUST(hipEventRecord(fault, f));
    MUST(hipStreamWaitEvent(w, fault, 0));
    MUST(hipLaunchHostFunc(w, set_flag, &w_flag));
    MUST(hipMemcpyAsync(dst, src, sizeof(int), hipMemcpyDeviceToDevice, w));
    count_run<<<1, 1, 0, u>>>(counts, 1);
    MUST(hipLaunchHostFunc(u, set_flag, &u_flag));
    MUST(hipMemcpyAsync(dst + 1, src + 1, sizeof(int), hipMemcpyDeviceToDevice, u));
    release();

    expect("the stream waiting for the fault: hipStreamSynchronize", hipStreamSynchronize(w),
           hipErrorIllegalAddress);
    hipError_t ru = hipStreamSynchronize(u);
    expect("the faulting stream", hipStreamSynchronize(f), hipErrorIllegalAddress);
    expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipErrorIllegalAddress);
    (void)hipGetLastError();
    int copied[2];
    MUST(hipMemcpy(copied, dst, sizeof copied, hipMemcpyDeviceToHost));
    int host[SLOTS];
    read(host);
    expect_true("the host function behind the fault never ran", w_flag == 0);
    bool u_ran = host[1] == 1 && u_flag == 1 && copied[1] == 1;
    bool u_dropped = host[1] == 0 && u_flag == 0;
    expect_true("the other stream's work ran entirely or not at all", u_ran || u_dropped);
    expect_ran_or_reported("the other stream", ru, u_ran);

    MUST(hipLaunchHostFunc(w, set_flag, &w_flag));
    MUST(hipMemcpyAsync(dst, src, sizeof(int), hipMemcpyDeviceToDevice, w));
    expect("recovery: hipStreamSynchronize", hipStreamSynchronize(w), hipSuccess);
    MUST(hipMemcpy(copied, dst, sizeof copied, hipMemcpyDeviceToHost));
    expect_true("recovery: the host function and the copy ran", w_flag == 1 && copied[0] == 1);
    MUST(hipEventDestroy(fault));
    MUST(hipStreamDestroy(f));
    MUST(hipStreamDestroy(w));
    MUST(hipStreamDestroy(u));
    MUST(hipFree(src));
    MUST(hipFree(dst));
}

// Two faults before anyone looks: one device-wide report, and each stream reports its own.
static void two_faults() {
    step("two faults before a synchronize");
    hipStream_t a, b;
    MUST(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    MUST(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    store_to_nowhere<<<1, 64, 0, a>>>(4);
    store_to_nowhere<<<1, 64, 0, b>>>(5);
    expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipErrorIllegalAddress);
    expect("one device-wide report for both", hipDeviceSynchronize(), hipSuccess);
    expect("first stream", hipStreamQuery(a), hipErrorIllegalAddress);
    expect("second stream", hipStreamSynchronize(b), hipErrorIllegalAddress);
    expect("first stream, again", hipStreamSynchronize(a), hipSuccess);
    expect("second stream, again", hipStreamQuery(b), hipSuccess);
    // The ROCm 6 ABI this program is built for: the last error is the last call's result
    // (ROCm 7 and CUDA keep the fault until it is read; c_tests/compat/last_error.hip).
    expect("hipGetLastError: the last call's result", hipGetLastError(), hipSuccess);
    expect("hipStreamQuery again", hipStreamQuery(a), hipSuccess);
    store_to_nowhere<<<1, 64, 0, a>>>(6);
    expect("hipStreamSynchronize after a third fault", hipStreamSynchronize(a), hipErrorIllegalAddress);
    expect("hipGetLastError: the fault, as the last call's result", hipGetLastError(), hipErrorIllegalAddress);
    expect("hipGetLastError is reset", hipGetLastError(), hipSuccess);
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
}

// A synchronous copy is a null-stream operation: it neither waits for a non-blocking stream
// nor reports that stream's fault (the stream does, at its own next call). hipFree waits for
// the whole device before its own work: it reports a fault like hipDeviceSynchronize, and then
// has not done its work; called again, it does it.
static void implicit_device_wait() {
    step("a synchronous copy passes a non-blocking stream's fault; free sees it first");
    int* buf = nullptr;
    MUST(hipMalloc(&buf, sizeof(int)));
    MUST(hipMemset(buf, 0, sizeof(int)));
    hipStream_t f;
    MUST(hipStreamCreateWithFlags(&f, hipStreamNonBlocking));
    store_to_nowhere<<<1, 64, 0, f>>>(8);
    int value = -1;
    expect("hipMemcpy", hipMemcpy(&value, buf, sizeof value, hipMemcpyDeviceToHost), hipSuccess);
    expect_true("... copied", value == 0);
    expect("the stream reports the fault", hipStreamSynchronize(f), hipErrorIllegalAddress);
    store_to_nowhere<<<1, 64, 0, f>>>(9);
    expect("hipFree", hipFree(buf), hipErrorIllegalAddress);
    expect("hipFree again frees", hipFree(buf), hipSuccess);
    expect("the stream reports the second fault", hipStreamSynchronize(f), hipErrorIllegalAddress);
    (void)hipGetLastError();
    MUST(hipStreamDestroy(f));
}

// hipDeviceReset is the way back to a clean slate: it succeeds after faults, and afterwards no
// call reports them any more (CUDA's reset clears its errors as well).
static void reset_after_fault() {
    step("hipDeviceReset after faults");
    (void)hipGetLastError();
    hipStream_t s;
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    store_to_nowhere<<<1, 64>>>(6);
    store_to_nowhere<<<1, 64, 0, s>>>(7);
    expect("hipDeviceReset", hipDeviceReset(), hipSuccess);
    expect("hipStreamSynchronize(0) after the reset", hipStreamSynchronize(nullptr), hipSuccess);
    expect("hipDeviceSynchronize after the reset", hipDeviceSynchronize(), hipSuccess);
    expect("hipGetLastError after the reset", hipGetLastError(), hipSuccess);
    int* fresh = nullptr;
    MUST(hipMalloc(&fresh, sizeof(int)));
    MUST(hipMemset(fresh, 0, sizeof(int)));
    count_run<<<1, 1>>>(fresh, 0);
    int ran = 0;
    MUST(hipMemcpy(&ran, fresh, sizeof ran, hipMemcpyDeviceToHost));
    expect_true("the device works after the reset", ran == 1);
    MUST(hipFree(fresh));
}

int main() {
    start_watchdog(60);
    MUST(hipMalloc(&counts, SLOTS * sizeof(int)));
    MUST(hipHostMalloc((void**)&gate, sizeof(int), hipHostMallocDefault));
    for (int round = 0; round < 2; ++round) {
        device_wide_first();
        null_stream_first();
        out_of_queue_work();
        two_faults();
        implicit_device_wait();
    }
    MUST(hipFree(counts));
    reset_after_fault();
    return finish("shared");
}
