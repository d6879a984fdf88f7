// rocRAND's XORWOW generator on hipshim (Debian's librocrand1, AMD-built
// gfx90a code), checked bit for bit against a CPU XORWOW written from
// Marsaglia's definition ("Xorshift RNGs", J. Stat. Softw. 8(14), 2003: the
// xorshift of five words plus a Weyl sequence d += 362437) and the
// cuRAND-compatible seeding that rocRAND documents in rocrand_xorwow.h.
//
// What makes this a hard test for the simulator is the generator's set-up:
// rocRAND gives each of its 512 x 256 engines its own subsequence, 2^67
// steps apart, and each engine's init kernel jumps there by multiplying its
// 160-bit state with precomputed 160x160 GF(2) jump matrices (tens of
// thousands of instructions per thread). The CPU reference builds the same
// jump independently: the one-step transition as a GF(2) matrix, squared 67
// times, then applied once per engine to walk from subsequence e to e + 1.
//
// Layout (one generate call, offset 0): element i comes from engine
// e = i mod E, as that engine's (i div E)-th output, E = 512 * 256; a second
// call continues each engine where it stopped, starting at the engine after
// the last one used.
//
// Prints "rocrand_xorwow: PASSED" and exits 0, or says what differed.

#include "checks.h"

#include <hip/hip_runtime.h>
#include <rocrand/rocrand.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define RAND_CHECK(call) STATUS_CHECK(call, ROCRAND_STATUS_SUCCESS, "rocrand_status")

// ---- CPU XORWOW ----------------------------------------------------------------

struct State {
    uint32_t x[5];
};

// One xorshift step (the linear part; the Weyl counter is kept separately).
static State step(State s) {
    uint32_t t = s.x[0] ^ (s.x[0] >> 2);
    State r;
    r.x[0] = s.x[1];
    r.x[1] = s.x[2];
    r.x[2] = s.x[3];
    r.x[3] = s.x[4];
    r.x[4] = (s.x[4] ^ (s.x[4] << 4)) ^ (t ^ (t << 1));
    return r;
}

// A linear map of the 160-bit state over GF(2), by the images of the unit
// vectors (bit b = word b / 32, bit b % 32).
struct Map {
    State col[160];

    State apply(const State& v) const {
        State r = {{0, 0, 0, 0, 0}};
        for (int b = 0; b < 160; ++b)
            if (v.x[b / 32] >> (b % 32) & 1)
                for (int k = 0; k < 5; ++k) r.x[k] ^= col[b].x[k];
        return r;
    }
    // (this o this)
    Map squared() const {
        Map m;
        for (int b = 0; b < 160; ++b) m.col[b] = apply(col[b]);
        return m;
    }
    static Map one_step() {
        Map m;
        for (int b = 0; b < 160; ++b) {
            State u = {{0, 0, 0, 0, 0}};
            u.x[b / 32] = 1u << (b % 32);
            m.col[b] = step(u);
        }
        return m;
    }
};

struct Engine {
    State s;
    uint32_t d;
    uint32_t next() {
        s = step(s);
        d += 362437u;
        return d + s.x[4];
    }
};

// Engine states for subsequences 0 .. count-1 of `seed`.
static std::vector<Engine> cpu_engines(uint64_t seed, size_t count) {
    Engine e;
    e.s = {{123456789u, 362436069u, 521288629u, 88675123u, 5783321u}};
    e.d = 6615241u;
    const uint32_t s0 = (uint32_t)seed ^ 0x2c7f967fu;
    const uint32_t s1 = (uint32_t)(seed >> 32) ^ 0xa03697cbu;
    const uint32_t t0 = 1228688033u * s0;
    const uint32_t t1 = 2073658381u * s1;
    e.s.x[0] += t0;
    e.s.x[1] ^= t0;
    e.s.x[2] += t1;
    e.s.x[3] ^= t1;
    e.s.x[4] += t0;
    e.d += t1 + t0;

    // 2^67 steps: the one-step map squared 67 times. The Weyl counter moves
    // by 362437 * 2^67, which is 0 mod 2^32.
    Map jump = Map::one_step();
    for (int i = 0; i < 67; ++i) jump = jump.squared();

    std::vector<Engine> engines(count);
    for (size_t i = 0; i < count; ++i) {
        engines[i] = e;
        e.s = jump.apply(e.s);
    }
    return engines;
}

// ---- checks -----------------------------------------------------------------

static int failures = 0;

static void compare(const char* what, const std::vector<uint32_t>& got,
                    const std::vector<uint32_t>& want) {
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            if (bad < 8)
                std::fprintf(stderr, "%s: element %zu: got 0x%08x, want 0x%08x\n", what, i,
                             got[i], want[i]);
            ++bad;
        }
    }
    if (bad) {
        std::fprintf(stderr, "%s: %zu of %zu elements differ from the CPU XORWOW\n", what, bad,
                     got.size());
        ++failures;
    } else {
        std::printf("%s: %zu elements match\n", what, got.size());
    }
}

int main() {
    const size_t engines_n = 512 * 256;
    const uint64_t seed = 0xfeedface12345678ull;
    const size_t n1 = engines_n + engines_n / 2 + 5;  // 1.5 outputs per engine
    const size_t n2 = engines_n / 4 + 3;

    unsigned int* d_out;
    HIP_CHECK(hipMalloc(&d_out, (n1 + n2) * sizeof(uint32_t)));
    rocrand_generator gen;
    RAND_CHECK(rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_XORWOW));
    RAND_CHECK(rocrand_set_seed(gen, seed));
    RAND_CHECK(rocrand_generate(gen, d_out, n1));
    RAND_CHECK(rocrand_generate(gen, d_out + n1, n2));
    std::vector<uint32_t> got(n1 + n2);
    HIP_CHECK(hipMemcpy(got.data(), d_out, got.size() * sizeof(uint32_t),
                        hipMemcpyDeviceToHost));
    RAND_CHECK(rocrand_destroy_generator(gen));
    HIP_CHECK(hipFree(d_out));

    std::vector<Engine> engines = cpu_engines(seed, engines_n);
    // First call: element i from engine i mod E.
    std::vector<uint32_t> want(n1 + n2);
    for (size_t i = 0; i < n1; ++i) want[i] = engines[i % engines_n].next();
    // Second call: starts at the engine after the last one used.
    const size_t start = n1 % engines_n;
    for (size_t i = 0; i < n2; ++i) want[n1 + i] = engines[(start + i) % engines_n].next();

    compare("xorwow first call",
            std::vector<uint32_t>(got.begin(), got.begin() + n1),
            std::vector<uint32_t>(want.begin(), want.begin() + n1));
    compare("xorwow second call (continuation)",
            std::vector<uint32_t>(got.begin() + n1, got.end()),
            std::vector<uint32_t>(want.begin() + n1, want.end()));

    if (failures) {
        std::fprintf(stderr, "rocrand_xorwow: FAILED (%d checks)\n", failures);
        return 1;
    }
    std::printf("rocrand_xorwow: PASSED\n");
    return 0;
}
