// rocRAND's Philox4x32-10 generator on hipshim (Debian's librocrand1, AMD-built
// gfx90a code), checked bit for bit against a CPU Philox4x32-10 written from
// the algorithm's published definition (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11; the Random123 constants).
//
// rocRAND's layout: the generator's stream is the sequence of 32-bit words
//   word(k) = philox4x32_10(counter = k / 4, key = {seed lo, seed hi})[k % 4]
// where the 128-bit counter is little-endian over (x, y, z, w); the generator
// starts at word(offset), and every generate call continues where the
// previous one stopped. Kernels split that stream over threads, with a head
// and a tail when the output is not aligned to four elements; the result
// must not depend on that.
//
// Checks:
//   - rocrand_generate (uint32): exact, aligned and misaligned output, odd
//     sizes, continuation across calls, a reseeded generator, an offset;
//   - rocrand_generate_uniform (float): exact, (float)v * 2^-32 + 2^-32 with
//     the multiply-add fused as the device code does (either rounding is
//     reported if it differs);
//   - rocrand_generate_normal (float): Box-Muller on consecutive words; the
//     device uses a fast sin/cos, so a small absolute tolerance, plus mean
//     and variance of the sample.
//
// Prints "rocrand_philox: PASSED" and exits 0, or says what differed.

#include "checks.h"

#include <hip/hip_runtime.h>
#include <rocrand/rocrand.h>

#include <cmath>
#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define RAND_CHECK(call) STATUS_CHECK(call, ROCRAND_STATUS_SUCCESS, "rocrand_status")

// ---- CPU Philox4x32-10 -----------------------------------------------------

struct Block {
    uint32_t v[4];
};

static Block philox4x32_10(uint64_t counter_lo, uint64_t counter_hi, uint64_t seed) {
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    const uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    uint32_t c0 = (uint32_t)counter_lo, c1 = (uint32_t)(counter_lo >> 32);
    uint32_t c2 = (uint32_t)counter_hi, c3 = (uint32_t)(counter_hi >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += W0;
            k1 += W1;
        }
        uint64_t p0 = (uint64_t)M0 * c0;
        uint64_t p1 = (uint64_t)M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    return Block{{c0, c1, c2, c3}};
}

// Words [start, start + n) of the stream for `seed` (subsequence 0).
static std::vector<uint32_t> cpu_words(uint64_t seed, uint64_t start, size_t n) {
    std::vector<uint32_t> out(n);
    uint64_t cached = ~0ull;
    Block b{};
    for (size_t i = 0; i < n; ++i) {
        uint64_t k = start + i;
        if (k / 4 != cached) {
            cached = k / 4;
            b = philox4x32_10(cached, 0, seed);
        }
        out[i] = b.v[k % 4];
    }
    return out;
}

// ---- checks -----------------------------------------------------------------

static int failures = 0;

static void fail(const char* what, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char* what, const char* fmt, ...) {
    std::fprintf(stderr, "%s: ", what);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    ++failures;
}

static void compare_words(const char* what, const std::vector<uint32_t>& got,
                          const std::vector<uint32_t>& want) {
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            if (bad < 8)
                std::fprintf(stderr, "%s: word %zu: got 0x%08x, want 0x%08x\n", what, i, got[i],
                             want[i]);
            ++bad;
        }
    }
    if (bad)
        fail(what, "%zu of %zu words differ from the CPU Philox4x32-10", bad, got.size());
    else
        std::printf("%s: %zu words match\n", what, got.size());
}

// Generates `n` words into `dst` (device) and returns them.
static std::vector<uint32_t> generate(rocrand_generator gen, unsigned int* dst, size_t n) {
    RAND_CHECK(rocrand_generate(gen, dst, n));
    std::vector<uint32_t> out(n);
    HIP_CHECK(hipMemcpy(out.data(), dst, n * sizeof(uint32_t), hipMemcpyDeviceToHost));
    return out;
}

int main(int argc, char** argv) {
    const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (1u << 18) + 3;
    const uint64_t seed = 0x0123456789abcdefull;

    unsigned int* d_words;
    float* d_floats;
    HIP_CHECK(hipMalloc(&d_words, (n + 8) * sizeof(uint32_t)));
    HIP_CHECK(hipMalloc(&d_floats, (n + 8) * sizeof(float)));

    rocrand_generator gen;
    RAND_CHECK(rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
    RAND_CHECK(rocrand_set_seed(gen, seed));

    // 1. Aligned output, then a continuation into a misaligned pointer with
    //    an odd length (head and tail paths), then an aligned one again.
    uint64_t pos = 0;
    compare_words("uint32 aligned", generate(gen, d_words, n), cpu_words(seed, pos, n));
    pos += n;
    const size_t n2 = n / 3 + 1;
    compare_words("uint32 continued, misaligned by 1", generate(gen, d_words + 1, n2),
                  cpu_words(seed, pos, n2));
    pos += n2;
    compare_words("uint32 continued, misaligned by 3", generate(gen, d_words + 3, 7),
                  cpu_words(seed, pos, 7));
    pos += 7;

    // 2. Reseeding restarts the stream; an offset starts it later.
    const uint64_t seed2 = 42;
    RAND_CHECK(rocrand_set_seed(gen, seed2));
    compare_words("uint32 after reseed", generate(gen, d_words, n), cpu_words(seed2, 0, n));
    rocrand_generator gen2;
    RAND_CHECK(rocrand_create_generator(&gen2, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
    RAND_CHECK(rocrand_set_seed(gen2, seed2));
    const uint64_t offset = 1000003;
    RAND_CHECK(rocrand_set_offset(gen2, offset));
    compare_words("uint32 with offset", generate(gen2, d_words + 2, n2),
                  cpu_words(seed2, offset, n2));
    RAND_CHECK(rocrand_destroy_generator(gen2));

    // 3. Uniform floats: the same words mapped to (0, 1].
    RAND_CHECK(rocrand_set_seed(gen, seed));
    RAND_CHECK(rocrand_generate_uniform(gen, d_floats, n));
    {
        std::vector<float> got(n);
        HIP_CHECK(hipMemcpy(got.data(), d_floats, n * sizeof(float), hipMemcpyDeviceToHost));
        std::vector<uint32_t> w = cpu_words(seed, 0, n);
        const float c = 2.3283064e-10f;  // rocRAND's 2^-32 constant
        size_t fused = 0, separate = 0, neither = 0;
        for (size_t i = 0; i < n; ++i) {
            float f = std::fmaf((float)w[i], c, c);
            volatile float prod = (float)w[i] * c;
            float s = prod + c;
            bool is_fused = std::memcmp(&got[i], &f, 4) == 0;
            bool is_separate = std::memcmp(&got[i], &s, 4) == 0;
            fused += is_fused;
            separate += is_separate;
            if (!is_fused && !is_separate) {
                if (neither < 8)
                    std::fprintf(stderr,
                                 "uniform float: element %zu (word 0x%08x): got %.9g, want "
                                 "%.9g (fused) or %.9g\n",
                                 i, w[i], got[i], f, s);
                ++neither;
            }
        }
        if (neither || fused != n)
            fail("uniform float",
                 "%zu of %zu differ from the fused multiply-add (%zu match the unfused one, "
                 "%zu neither)",
                 n - fused, n, separate, neither);
        else
            std::printf("uniform float: %zu values match (fused multiply-add)\n", n);
    }

    // 4. Normal floats: Box-Muller on word pairs (2i, 2i+1).
    const float mean = 1.5f, stddev = 2.0f;
    RAND_CHECK(rocrand_set_seed(gen, seed2));
    const size_t nn = n & ~size_t(1);
    RAND_CHECK(rocrand_generate_normal(gen, d_floats, nn, mean, stddev));
    {
        std::vector<float> got(nn);
        HIP_CHECK(hipMemcpy(got.data(), d_floats, nn * sizeof(float), hipMemcpyDeviceToHost));
        std::vector<uint32_t> w = cpu_words(seed2, 0, nn);
        const float c = 2.3283064e-10f, c2pi = 2.3283064e-10f * 6.2831855f;
        size_t bad = 0;
        double worst = 0, sum = 0, sum2 = 0;
        for (size_t i = 0; i < nn; i += 2) {
            double u = std::fmaf((float)w[i], c, c);
            double v = std::fmaf((float)w[i + 1], c2pi, c2pi);
            double s = std::sqrt(-2.0 * std::log(u));
            double want[2] = {mean + stddev * std::sin(v) * s, mean + stddev * std::cos(v) * s};
            for (int j = 0; j < 2; ++j) {
                double g = got[i + j];
                sum += g;
                sum2 += (g - mean) * (g - mean);
                // fast sin/cos/log on the device: ~1e-6 absolute on the unit
                // circle, scaled by s * stddev (at most ~13).
                double err = std::fabs(g - want[j]);
                if (err > worst) worst = err;
                if (!(err <= 5e-5)) {
                    if (bad < 8)
                        std::fprintf(stderr,
                                     "normal float: element %zu: got %.9g, want %.9g\n", i + j,
                                     g, want[j]);
                    ++bad;
                }
            }
        }
        double m = sum / nn, var = sum2 / nn;
        // Standard error of the mean: stddev / sqrt(nn); of the variance:
        // stddev^2 * sqrt(2 / nn). Six of them.
        double m_tol = 6 * stddev / std::sqrt((double)nn);
        double v_tol = 6 * stddev * stddev * std::sqrt(2.0 / nn);
        if (bad)
            fail("normal float", "%zu of %zu values differ from CPU Box-Muller by > 5e-5", bad,
                 nn);
        else if (std::fabs(m - mean) > m_tol || std::fabs(var - stddev * stddev) > v_tol)
            fail("normal float", "sample mean %.6f (want %.1f +- %.4f), variance %.6f (want "
                 "%.1f +- %.4f)", m, mean, m_tol, var, stddev * stddev, v_tol);
        else
            std::printf("normal float: %zu values match (worst error %.3g), mean %.5f, "
                        "variance %.5f\n", nn, worst, m, var);
    }

    RAND_CHECK(rocrand_destroy_generator(gen));
    HIP_CHECK(hipFree(d_words));
    HIP_CHECK(hipFree(d_floats));
    if (failures) {
        std::fprintf(stderr, "rocrand_philox: FAILED (%d checks)\n", failures);
        return 1;
    }
    std::printf("rocrand_philox: PASSED\n");
    return 0;
}
