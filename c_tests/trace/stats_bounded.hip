// hipshim-test: targets=gfx942
// A long run with HIPSHIM_STATS on (tests/trace.rs runs it so): rounds of a kernel launch, a
// stream-ordered copy, a synchronous copy and a stream synchronisation, in chunks. The stats
// must not keep anything per call, so resident memory after the last chunk stays within a
// margin of what it was after the first (which pays for every one-time allocation). Keeping
// each packet, copy and wait as an event costs a few hundred bytes per round: over the
// chunks after the first that is several times the margin.
//
// Usage: stats_bounded [ROUNDS_PER_CHUNK [CHUNKS]]; prints the calls it made.
#include "../check.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

__global__ void bump_kernel(int* p) { p[threadIdx.x] += 1; }

// Resident set size in bytes (second field of /proc/self/statm, in pages).
static long resident_bytes() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = -1;
    if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    std::fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char** argv) {
    const long rounds = argc > 1 ? std::atol(argv[1]) : 6000;
    const long chunks = argc > 2 ? std::atol(argv[2]) : 5;
    // What the stats may still grow by after the first chunk: heap arenas settling, a few
    // pages of hsasim's. Without bounded stats the later chunks add ~10x this.
    const long margin = 2L << 20;

    int* device = nullptr;
    int* pinned = nullptr;
    CHECK(hipMalloc(&device, 64 * sizeof(int)));
    CHECK(hipMemset(device, 0, 64 * sizeof(int)));
    CHECK(hipHostMalloc(reinterpret_cast<void**>(&pinned), 64 * sizeof(int), 0));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    long after_first = 0;
    for (long chunk = 0; chunk < chunks; ++chunk) {
        for (long r = 0; r < rounds; ++r) {
            bump_kernel<<<1, 64, 0, s>>>(device);
            CHECK(hipGetLastError());
            CHECK(hipMemcpyAsync(pinned, device, 64 * sizeof(int), hipMemcpyDeviceToHost, s));
            CHECK(hipStreamSynchronize(s));
            CHECK(hipMemcpy(device, pinned, 64 * sizeof(int), hipMemcpyHostToDevice));
        }
        long now = resident_bytes();
        std::printf("stats_bounded: chunk %ld: resident %ld KiB\n", chunk, now >> 10);
        if (chunk == 0) after_first = now;
    }
    long growth = resident_bytes() - after_first;
    std::printf("stats_bounded: %ld KiB more after %ld chunks than after the first (margin %ld KiB)\n",
                growth >> 10, chunks, margin >> 10);
    EXPECT_TRUE(after_first > 0);
    EXPECT_TRUE(growth < margin);

    int check[64];
    CHECK(hipMemcpy(check, device, sizeof(check), hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; ++i) EXPECT_EQ(check[i], static_cast<int>(rounds * chunks));

    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(pinned));
    CHECK(hipFree(device));
    std::printf("stats_bounded: calls: hipLaunchKernel %ld, hipMemcpyAsync %ld, hipMemcpy %ld, "
                "hipStreamSynchronize %ld\n",
                rounds * chunks, rounds * chunks, rounds * chunks + 1, rounds * chunks);
    return finish("stats_bounded");
}
