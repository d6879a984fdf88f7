// policy_bench: the program `hipshim bench policies` runs once per queue policy.
//
//   policy_bench [--streams K] [--kernels M] [--work US] [--churn] [--go FILE]
//
// K non-blocking streams each get M kernels, launched round-robin (kernel m of every stream
// before kernel m+1 of any). Each kernel is one work-item that spins until US microseconds
// of device wall-clock time have passed, recording its own start and end with
// wall_clock64(). Waiting on time rather than counting iterations makes a kernel's length
// independent of how fast the device (or hsasim's interpreter on an oversubscribed host)
// executes instructions: two kernels overlap exactly when their queues run them at once.
//
// --churn replaces every other stream (0, 2, 4, ...) with a new one after the first streams
// got their queues, as a program whose streams come and go does. That is where pool
// strategies part: least-loaded gives the new streams the queues that fell idle,
// round-robin keeps cycling and stacks some of them on queues still serving old streams.
//
// --go FILE lines up several copies (`hipshim bench processes`): once its streams have their
// queues, a copy creates FILE.ready.PID and waits for FILE to exist before it launches the
// measured kernels.
//
// Output on stdout, one record per line (parsed by hipshim; fields are key=value):
//   config streams=K kernels=M work_us=US churn=0|1 clock_hz=F clock_attr_khz=A
//   host launch_ns=L total_ns=T
//   kernel stream=S index=I start=T0 end=T1        (device ticks at clock_hz)
// clock_hz is measured against the host clock (two timestamps 100 ms apart), because the
// rate a runtime reports (hipDeviceAttributeWallClockRate, printed as clock_attr_khz) is
// not trustworthy everywhere; `--attr-clock` takes the reported rate instead, for a device
// whose clock is not the host's (hsasim's virtual time, where sleeping on the host moves no
// device time). Exit status 0 on success, 1 with a message on failure.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,    \
                         #call, hipGetErrorName(err_), static_cast<int>(err_));        \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

typedef unsigned long long u64;

// Spins until `ticks` of wall clock have passed; writes the start and end times.
__global__ void busy(u64 ticks, u64* times) {
    u64 start = wall_clock64();
    u64 now = start;
    while (now - start < ticks) {
        now = wall_clock64();
    }
    times[0] = start;
    times[1] = now;
}

// One wall-clock sample.
__global__ void sample(u64* out) { *out = wall_clock64(); }

static u64 host_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A device timestamp and the host time it was taken at (midpoint of launch..sync).
static void device_time(u64* dev_slot, u64* device_ticks, double* host_mid) {
    u64 before = host_ns();
    sample<<<1, 1>>>(dev_slot);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    u64 after = host_ns();
    CHECK(hipMemcpy(device_ticks, dev_slot, sizeof(u64), hipMemcpyDeviceToHost));
    *host_mid = 0.5 * (double(before) + double(after));
}

static long arg_value(int argc, char** argv, int* i) {
    if (*i + 1 >= argc) {
        std::fprintf(stderr, "policy_bench: %s needs a value\n", argv[*i]);
        std::exit(2);
    }
    char* end = nullptr;
    long v = std::strtol(argv[++*i], &end, 10);
    if (*end != '\0' || v <= 0) {
        std::fprintf(stderr, "policy_bench: %s wants a positive number, not %s\n", argv[*i - 1],
                     argv[*i]);
        std::exit(2);
    }
    return v;
}

int main(int argc, char** argv) {
    long streams = 4, kernels = 8, work_us = 10000;
    bool churn = false;
    bool attr_clock = false;
    const char* go = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--streams")) {
            streams = arg_value(argc, argv, &i);
        } else if (!std::strcmp(argv[i], "--kernels")) {
            kernels = arg_value(argc, argv, &i);
        } else if (!std::strcmp(argv[i], "--work")) {
            work_us = arg_value(argc, argv, &i);
        } else if (!std::strcmp(argv[i], "--churn")) {
            churn = true;
        } else if (!std::strcmp(argv[i], "--attr-clock")) {
            attr_clock = true;
        } else if (!std::strcmp(argv[i], "--go") && i + 1 < argc) {
            go = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: policy_bench [--streams K] [--kernels M] [--work US] [--churn] "
                         "[--attr-clock] [--go FILE]\n");
            return 2;
        }
    }

    u64* clock_slot;
    CHECK(hipMalloc(&clock_slot, sizeof(u64)));
    int attr_khz = 0;
    CHECK(hipDeviceGetAttribute(&attr_khz, hipDeviceAttributeWallClockRate, 0));

    // Measure the wall clock's rate: two samples ~100 ms apart (the first also loads the
    // code object, so it is taken twice).
    u64 c0, c1;
    double h0, h1;
    device_time(clock_slot, &c0, &h0);
    device_time(clock_slot, &c0, &h0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    device_time(clock_slot, &c1, &h1);
    if (c1 <= c0 || (!attr_clock && h1 <= h0)) {
        std::fprintf(stderr, "policy_bench: device wall clock does not advance (%llu, %llu)\n",
                     c0, c1);
        return 1;
    }
    double clock_hz = attr_clock ? double(attr_khz) * 1e3 : double(c1 - c0) * 1e9 / (h1 - h0);
    if (clock_hz <= 0) {
        std::fprintf(stderr, "policy_bench: no wall clock rate (reported %d kHz)\n", attr_khz);
        return 1;
    }
    u64 ticks = u64(double(work_us) * clock_hz / 1e6);

    std::vector<hipStream_t> s(streams);
    for (auto& stream : s) {
        CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    }
    const size_t n = size_t(streams) * size_t(kernels);
    u64* times;
    CHECK(hipMalloc(&times, 2 * n * sizeof(u64)));
    CHECK(hipMemset(times, 0, 2 * n * sizeof(u64)));

    // Warm-up: each stream's first packet is where the policy assigns it a queue (and a
    // dedicated queue is created); keep that out of the measurement.
    for (long k = 0; k < streams; ++k) {
        busy<<<1, 1, 0, s[k]>>>(0, times);
    }
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    if (churn) {
        for (long k = 0; k < streams; k += 2) {
            CHECK(hipStreamDestroy(s[k]));
        }
        for (long k = 0; k < streams; k += 2) {
            CHECK(hipStreamCreateWithFlags(&s[k], hipStreamNonBlocking));
            busy<<<1, 1, 0, s[k]>>>(0, times);
        }
        CHECK(hipGetLastError());
        CHECK(hipDeviceSynchronize());
    }

    if (go) {
        std::string ready = std::string(go) + ".ready." + std::to_string(getpid());
        FILE* f = std::fopen(ready.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "policy_bench: cannot create %s\n", ready.c_str());
            return 1;
        }
        std::fclose(f);
        u64 give_up = host_ns() + 120ull * 1000000000ull;
        while (access(go, F_OK) != 0) {
            if (host_ns() > give_up) {
                std::fprintf(stderr, "policy_bench: %s did not appear in 120 s\n", go);
                return 1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    u64 t0 = host_ns();
    for (long m = 0; m < kernels; ++m) {
        for (long k = 0; k < streams; ++k) {
            busy<<<1, 1, 0, s[k]>>>(ticks, times + 2 * (size_t(k) * kernels + m));
        }
    }
    CHECK(hipGetLastError());
    u64 t_launched = host_ns();
    CHECK(hipDeviceSynchronize());
    u64 t1 = host_ns();

    std::vector<u64> host(2 * n);
    CHECK(hipMemcpy(host.data(), times, 2 * n * sizeof(u64), hipMemcpyDeviceToHost));

    std::printf(
        "config streams=%ld kernels=%ld work_us=%ld churn=%d clock_hz=%.0f clock_attr_khz=%d\n",
        streams, kernels, work_us, churn ? 1 : 0, clock_hz, attr_khz);
    std::printf("host launch_ns=%llu total_ns=%llu\n", t_launched - t0, t1 - t0);
    for (long k = 0; k < streams; ++k) {
        for (long m = 0; m < kernels; ++m) {
            const u64* t = &host[2 * (size_t(k) * kernels + m)];
            if (t[1] < t[0] + ticks) {
                std::fprintf(stderr,
                             "policy_bench: kernel %ld of stream %ld did not run its time "
                             "(start %llu end %llu)\n",
                             m, k, t[0], t[1]);
                return 1;
            }
            std::printf("kernel stream=%ld index=%ld start=%llu end=%llu\n", k, m, t[0], t[1]);
        }
    }
    for (auto& stream : s) {
        CHECK(hipStreamDestroy(stream));
    }
    CHECK(hipFree(times));
    CHECK(hipFree(clock_slot));
    return 0;
}
