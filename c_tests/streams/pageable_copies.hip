// pageable_copies: synchronous copies of large pageable ranges, which hipshim locks for the
// copy engines (from 8 MiB on) instead of staging them, and of small ones, which it stages.
// Every byte must arrive, from and to ranges that start and end inside pages, pitched rows
// included, and nothing outside the ranges may change. The Rust test
// (tests/c_tests_streams.rs) also counts the HSA lock calls the copies made.
#include <hip/hip_runtime.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../check.h"

static const size_t MIB = size_t(1) << 20;

static uint8_t pattern(size_t i, unsigned seed) {
    return static_cast<uint8_t>((i * 2654435761u + seed) >> 13);
}

static void fill(uint8_t* p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
}

// The first index where `p` differs from the pattern, or n.
static size_t first_difference(const uint8_t* p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != pattern(i, seed)) return i;
    return n;
}

__global__ void sum_bytes(const uint8_t* p, size_t n, unsigned long long* out) {
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd(out, s);
}

// Host to device and back, `bytes` from `offset` bytes into a pageable buffer, into a second
// one at another offset; the guard bytes around both ranges stay as they were.
static void round_trip(size_t bytes, size_t offset, unsigned seed, const char* what) {
    const size_t guard = 4096;
    std::vector<uint8_t> src(offset + bytes + guard), back(offset + 7 + bytes + guard, 0xA5);
    fill(src.data() + offset, bytes, seed);
    uint8_t* dev = nullptr;
    CHECK(hipMalloc(&dev, bytes));
    CHECK(hipMemcpy(dev, src.data() + offset, bytes, hipMemcpyHostToDevice));

    // The device sees the bytes (not only the copy back).
    unsigned long long* sum = nullptr;
    CHECK(hipMalloc(&sum, sizeof(*sum)));
    CHECK(hipMemset(sum, 0, sizeof(*sum)));
    sum_bytes<<<64, 256>>>(dev, bytes, sum);
    unsigned long long got = 0, want = 0;
    CHECK(hipMemcpy(&got, sum, sizeof(got), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < bytes; ++i) want += src[offset + i];
    EXPECT_EQ(got, want);

    CHECK(hipMemcpy(back.data() + offset + 7, dev, bytes, hipMemcpyDeviceToHost));
    size_t at = first_difference(back.data() + offset + 7, bytes, seed);
    if (at != bytes) {
        std::fprintf(stderr, "FAIL %s: byte %zu of %zu came back as %u, not %u\n", what, at,
                     bytes, back[offset + 7 + at], pattern(at, seed));
        ++failures;
    }
    for (size_t i = 0; i < offset + 7; ++i) {
        if (back[i] != 0xA5) {
            std::fprintf(stderr, "FAIL %s: byte %zu before the range changed\n", what, i);
            ++failures;
            break;
        }
    }
    for (size_t i = offset + 7 + bytes; i < back.size(); ++i) {
        if (back[i] != 0xA5) {
            std::fprintf(stderr, "FAIL %s: byte %zu after the range changed\n", what, i);
            ++failures;
            break;
        }
    }
    CHECK(hipFree(sum));
    CHECK(hipFree(dev));
}

// Pitched rows whose pageable side spans 12 MiB: rows of 1,000 bytes every 4,099.
static void pitched(unsigned seed) {
    const size_t width = 1000, host_pitch = 4099, height = 12 * MIB / host_pitch;
    std::vector<uint8_t> host(host_pitch * height), back(host_pitch * height, 0x5A);
    fill(host.data(), host.size(), seed);
    uint8_t* dev = nullptr;
    size_t dev_pitch = 0;
    CHECK(hipMallocPitch(reinterpret_cast<void**>(&dev), &dev_pitch, width, height));
    CHECK(hipMemcpy2D(dev, dev_pitch, host.data(), host_pitch, width, height,
                      hipMemcpyHostToDevice));
    CHECK(hipMemcpy2D(back.data(), host_pitch, dev, dev_pitch, width, height,
                      hipMemcpyDeviceToHost));
    for (size_t r = 0; r < height; ++r) {
        for (size_t c = 0; c < host_pitch; ++c) {
            uint8_t want = c < width ? host[r * host_pitch + c] : 0x5A;
            if (back[r * host_pitch + c] != want) {
                std::fprintf(stderr, "FAIL pitched: row %zu byte %zu is %u, not %u\n", r, c,
                             back[r * host_pitch + c], want);
                ++failures;
                return;
            }
        }
    }
    CHECK(hipFree(dev));
}

// A pageable range whose tail is registered host memory: the lock of the whole range
// overlaps the registration. hsasim grants it; a runtime that refuses it gets the copy
// staged. Either way every byte arrives.
static void overlapping_a_registration(unsigned seed) {
    const size_t bytes = 16 * MIB, registered = 2 * MIB;
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        std::fprintf(stderr, "FAIL mmap\n");
        ++failures;
        return;
    }
    uint8_t* host = static_cast<uint8_t*>(map);
    fill(host, bytes, seed);
    CHECK(hipHostRegister(host + bytes - registered, registered, hipHostRegisterDefault));
    uint8_t* dev = nullptr;
    CHECK(hipMalloc(&dev, bytes));
    CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
    std::memset(host, 0, bytes);
    CHECK(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
    size_t at = first_difference(host, bytes, seed);
    if (at != bytes) {
        std::fprintf(stderr, "FAIL overlapping a registration: byte %zu of %zu differs\n", at,
                     bytes);
        ++failures;
    }
    CHECK(hipHostUnregister(host + bytes - registered));
    CHECK(hipFree(dev));
    munmap(map, bytes);
}

int main() {
    round_trip(1 * MIB, 100, 1, "1 MiB (staged)");
    round_trip(8 * MIB, 0, 2, "8 MiB from a page start");
    round_trip(24 * MIB + 12345, 3001, 3, "24 MiB inside pages");
    round_trip(64 * MIB, 64, 4, "64 MiB");
    pitched(5);
    overlapping_a_registration(6);
    return finish("pageable_copies");
}
