// hipshim-test: expect-stderr=0xdead0000
//
// chain: a fault reaches every stream whose work waits for it, through any chain of
// hipStreamWaitEvent. Stream 0 faults; stream i waits for an event recorded on stream i-1
// (1 to 4 hops), then launches a kernel and records an event. Whichever call looks first
// (stream sync, stream query, event sync, event query, device sync), nothing hangs and:
// - every stream of the chain reports hipErrorIllegalAddress once, at its own next
//   hipStreamSynchronize/hipStreamQuery, then succeeds;
// - every event recorded behind the fault reports it for as long as it stands;
// - device-wide calls (hipDeviceSynchronize) report it once;
// - hipGetLastError returns it once, then hipSuccess;
// - the kernels queued behind the fault never run, and afterwards every stream works.
// Policy-independent: tests/c_tests_faults.rs runs it under each HIPSHIM_QUEUE_POLICY.
#include "faults.h"

enum First { STREAM_SYNC, STREAM_QUERY, EVENT_SYNC, EVENT_QUERY, DEVICE_SYNC, FIRSTS };
static const char* const first_names[] = {"stream sync", "stream query", "event sync",
                                          "event query", "device sync"};

static const int MAX_HOPS = 4;

static void chain(int hops, First first) {
    char name[96];
    std::snprintf(name, sizeof name, "%d hop(s), %s first", hops, first_names[first]);
    step(name);
    const int n = hops + 1;
    hipStream_t s[MAX_HOPS + 1];
    hipEvent_t e[MAX_HOPS + 1];
    int* counts = nullptr;
    MUST(hipMalloc(&counts, n * sizeof(int)));
    MUST(hipMemset(counts, 0, n * sizeof(int)));
    for (int i = 0; i < n; ++i) {
        MUST(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
        MUST(hipEventCreate(&e[i]));
    }

    store_to_nowhere<<<1, 64, 0, s[0]>>>(hops);
    count_run<<<1, 1, 0, s[0]>>>(counts, 0);
    MUST(hipEventRecord(e[0], s[0]));
    for (int i = 1; i < n; ++i) {
        MUST(hipStreamWaitEvent(s[i], e[i - 1], 0));
        count_run<<<1, 1, 0, s[i]>>>(counts, i);
        MUST(hipEventRecord(e[i], s[i]));
    }
    expect("launches are asynchronous", hipGetLastError(), hipSuccess);

    const int last = hops;
    bool stream_reported[MAX_HOPS + 1] = {};
    bool device_reported = false;
    switch (first) {
    case STREAM_SYNC:
        expect("hipStreamSynchronize(last stream)", hipStreamSynchronize(s[last]),
               hipErrorIllegalAddress);
        stream_reported[last] = true;
        break;
    case STREAM_QUERY:
        expect("hipStreamQuery(last stream) until answered",
               poll_until_answered([&] { return hipStreamQuery(s[last]); }),
               hipErrorIllegalAddress);
        stream_reported[last] = true;
        break;
    case EVENT_SYNC:
        expect("hipEventSynchronize(last event)", hipEventSynchronize(e[last]),
               hipErrorIllegalAddress);
        break;
    case EVENT_QUERY:
        expect("hipEventQuery(last event) until answered",
               poll_until_answered([&] { return hipEventQuery(e[last]); }),
               hipErrorIllegalAddress);
        break;
    default:
        expect("hipDeviceSynchronize", hipDeviceSynchronize(), hipErrorIllegalAddress);
        device_reported = true;
        break;
    }
    expect("hipGetLastError returns the fault", hipGetLastError(), hipErrorIllegalAddress);
    expect("hipGetLastError then reads success", hipGetLastError(), hipSuccess);

    for (int i = 0; i < n; ++i) {
        expect("hipEventQuery of an event behind the fault", hipEventQuery(e[i]),
               hipErrorIllegalAddress);
        expect("hipEventSynchronize of an event behind the fault", hipEventSynchronize(e[i]),
               hipErrorIllegalAddress);
        expect("... and it keeps saying so", hipEventQuery(e[i]), hipErrorIllegalAddress);
    }
    for (int i = 0; i < n; ++i) {
        if (!stream_reported[i]) {
            // Odd streams are asked by query, even ones by synchronize.
            if (i % 2)
                expect("hipStreamQuery of a stream that lost work", hipStreamQuery(s[i]),
                       hipErrorIllegalAddress);
            else
                expect("hipStreamSynchronize of a stream that lost work",
                       hipStreamSynchronize(s[i]), hipErrorIllegalAddress);
        }
        expect("... reported once: hipStreamSynchronize", hipStreamSynchronize(s[i]), hipSuccess);
        expect("... reported once: hipStreamQuery", hipStreamQuery(s[i]), hipSuccess);
    }
    if (!device_reported)
        expect("hipDeviceSynchronize reports the fault", hipDeviceSynchronize(),
               hipErrorIllegalAddress);
    expect("hipDeviceSynchronize reports it once", hipDeviceSynchronize(), hipSuccess);
    (void)hipGetLastError();

    int host[MAX_HOPS + 1];
    read_counts(counts, host, n);
    for (int i = 0; i < n; ++i) expect_true("a kernel queued behind the fault never ran", host[i] == 0);

    // The same chain without the fault: every stream works again.
    count_run<<<1, 1, 0, s[0]>>>(counts, 0);
    MUST(hipEventRecord(e[0], s[0]));
    for (int i = 1; i < n; ++i) {
        MUST(hipStreamWaitEvent(s[i], e[i - 1], 0));
        count_run<<<1, 1, 0, s[i]>>>(counts, i);
        MUST(hipEventRecord(e[i], s[i]));
    }
    expect("recovery: hipEventSynchronize(last event)", hipEventSynchronize(e[last]), hipSuccess);
    for (int i = 0; i < n; ++i) {
        expect("recovery: hipStreamSynchronize", hipStreamSynchronize(s[i]), hipSuccess);
        expect("recovery: hipEventQuery", hipEventQuery(e[i]), hipSuccess);
    }
    expect("recovery: hipDeviceSynchronize", hipDeviceSynchronize(), hipSuccess);
    read_counts(counts, host, n);
    for (int i = 0; i < n; ++i) expect_true("recovery: each kernel ran once", host[i] == 1);
    expect("recovery: no error left", hipGetLastError(), hipSuccess);

    for (int i = 0; i < n; ++i) {
        MUST(hipEventDestroy(e[i]));
        MUST(hipStreamDestroy(s[i]));
    }
    MUST(hipFree(counts));
}

int main() {
    start_watchdog(60);
    for (int hops = 1; hops <= MAX_HOPS; ++hops)
        for (int first = 0; first < FIRSTS; ++first) chain(hops, static_cast<First>(first));
    return finish("chain");
}
