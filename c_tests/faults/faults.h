// Shared by the programs in c_tests/faults: a kernel that faults, a kernel whose runs are
// counted, result checks naming the step, and a watchdog that turns a hang into a failure
// naming the step; the failure count and finish() are ../check.h's.
#pragma once

#include "../check.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <unistd.h>

// A store to an address no allocation covers: hipErrorIllegalAddress at the next sync.
__global__ void store_to_nowhere(int value) {
    int* nowhere = reinterpret_cast<int*>(0xdead0000ull);
    nowhere[threadIdx.x] = value;
}

// Holds its queue until the host sets `*gate`: everything launched meanwhile is published
// before the fault that follows it can fire, so which work a fault drops does not depend on
// how fast the device is (on a shared queue, a stream's first kernel launched after the fault
// fired would get a fresh queue and run).
__global__ void hold_until(volatile int* gate) {
    while (*gate == 0) {
    }
}

// Counts its own runs: slot `which` of `counts` goes up by one per run.
__global__ void count_run(int* counts, int which) {
    if (threadIdx.x == 0) atomicAdd(&counts[which], 1);
}

static const char* volatile current_step = "start";

static void step(const char* name) {
    current_step = name;
}

static void on_alarm(int) {
    // Only async-signal-safe calls here.
    const char* head = "FAIL: no answer (hang) at step: ";
    write(2, head, strlen(head));
    const char* name = current_step;
    write(2, name, strlen(name));
    write(2, "\n", 1);
    _exit(3);
}

// A hang fails the program within `seconds`, well inside the test runner's timeout.
static void start_watchdog(unsigned seconds) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::signal(SIGALRM, on_alarm);
    alarm(seconds);
}

static bool expect(const char* what, hipError_t got, hipError_t want) {
    if (got != want) {
        std::fprintf(stderr, "FAIL [%s] %s: expected %s, got %s\n", current_step, what,
                     hipGetErrorName(want), hipGetErrorName(got));
        ++failures;
        return false;
    }
    std::printf("ok   [%s] %s -> %s\n", current_step, what, hipGetErrorName(got));
    return true;
}

static void expect_true(const char* what, bool ok) {
    if (!ok) {
        std::fprintf(stderr, "FAIL [%s] %s\n", current_step, what);
        ++failures;
    } else {
        std::printf("ok   [%s] %s\n", current_step, what);
    }
}

#define MUST(call)                                                                      \
    do {                                                                                \
        hipError_t must_status = (call);                                                \
        if (must_status != hipSuccess) {                                                \
            std::fprintf(stderr, "FAIL [%s] %s: %s\n", current_step, #call,             \
                         hipGetErrorName(must_status));                                 \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

// Polls until the answer is no longer hipErrorNotReady (the watchdog bounds the wait).
template <typename Poll>
static hipError_t poll_until_answered(Poll poll) {
    for (;;) {
        hipError_t status = poll();
        if (status != hipErrorNotReady) return status;
        sched_yield();
    }
}

// Reads the run counters (a synchronous copy: a device-wide call, so only after the checks
// of device-wide reports).
static void read_counts(const int* dev, int* host, int n) {
    MUST(hipMemcpy(host, dev, n * sizeof(int), hipMemcpyDeviceToHost));
}
