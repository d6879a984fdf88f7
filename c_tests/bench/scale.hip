// hipshim-test: targets=gfx942
// Scale rounds for `cargo bench --bench scale`: what creating and destroying many streams or
// events costs in time, and what memory the process keeps once they are gone.
//
// Usage: scale streams N      create N streams, then destroy them in creation order
//        scale events N       create N events, record each on a stream, then destroy them
// Prints one line: "<what> N create_ms C destroy_ms D rss_start_kb S rss_peak_kb P
// rss_after_kb A": the resident set size after the runtime started (S), with all N alive (P)
// and after they were destroyed and the device synchronised (A).
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t err_ = (call);                                                          \
        if (err_ != hipSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                         hipGetErrorName(err_), static_cast<int>(err_));                   \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

namespace {

using Clock = std::chrono::steady_clock;

// Resident set size in KiB (/proc/self/statm's second field is in pages).
long rss_kb() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return -1;
    long size = 0, resident = 0;
    int read = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    if (read != 2) return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void report(const char* what, size_t n, double create_ms, double destroy_ms, long start,
            long peak, long after) {
    std::printf("%s %zu create_ms %.1f destroy_ms %.1f rss_start_kb %ld rss_peak_kb %ld "
                "rss_after_kb %ld\n",
                what, n, create_ms, destroy_ms, start, peak, after);
}

void streams(size_t n) {
    std::vector<hipStream_t> all(n);
    long start = rss_kb();
    auto t0 = Clock::now();
    for (auto& s : all) CHECK(hipStreamCreate(&s));
    double create_ms = ms_since(t0);
    long peak = rss_kb();
    t0 = Clock::now();
    for (auto s : all) CHECK(hipStreamDestroy(s));
    double destroy_ms = ms_since(t0);
    CHECK(hipDeviceSynchronize());
    std::vector<hipStream_t>().swap(all);
    report("streams", n, create_ms, destroy_ms, start, peak, rss_kb());
}

void events(size_t n) {
    std::vector<hipEvent_t> all(n);
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    long start = rss_kb();
    auto t0 = Clock::now();
    for (auto& e : all) {
        CHECK(hipEventCreate(&e));
        CHECK(hipEventRecord(e, stream));
    }
    double create_ms = ms_since(t0);
    CHECK(hipStreamSynchronize(stream));
    long peak = rss_kb();
    t0 = Clock::now();
    for (auto e : all) CHECK(hipEventDestroy(e));
    double destroy_ms = ms_since(t0);
    CHECK(hipDeviceSynchronize());
    std::vector<hipEvent_t>().swap(all);
    report("events", n, create_ms, destroy_ms, start, peak, rss_kb());
    CHECK(hipStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s streams|events N\n", argv[0]);
        return 2;
    }
    size_t n = std::strtoull(argv[2], nullptr, 10);
    // Start the runtime (and the device) before the first reading.
    CHECK(hipFree(nullptr));
    CHECK(hipDeviceSynchronize());
    if (!std::strcmp(argv[1], "streams")) {
        streams(n);
    } else if (!std::strcmp(argv[1], "events")) {
        events(n);
    } else {
        std::fprintf(stderr, "unknown round %s\n", argv[1]);
        return 2;
    }
    return 0;
}
