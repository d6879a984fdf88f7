// The checking helpers every c_tests program shares (tests/common/ctest.rs hashes this file
// into each program's build key). EXPECT_* checks all run: each failure is printed with what
// differed and counted, and finish() makes the exit status 1 if any failed. CHECK is for the
// calls a program cannot go on without: it exits at once.
#ifndef C_TESTS_CHECK_H
#define C_TESTS_CHECK_H

#include <hip/hip_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

// Atomic: some programs check from several host threads.
static std::atomic<int> failures{0};

static const char* err_name(hipError_t e) {
    const char* n = hipGetErrorName(e);
    return n ? n : "(null)";
}

// `got` must be `want`; names both on failure. Leaves the last error as the call set it, for
// a program whose next check reads it.
#define EXPECT_ERR_KEEP(call, want)                                                              \
    do {                                                                                         \
        hipError_t got_ = (call);                                                                \
        if (got_ != (want)) {                                                                    \
            std::fprintf(stderr, "FAIL %s:%d %s: expected %s, got %s\n", __FILE__, __LINE__,     \
                         #call, err_name(want), err_name(got_));                                 \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

// As EXPECT_ERR_KEEP, then clears the last error so one check's failure does not leak into
// the next.
#define EXPECT_ERR(call, want)                                                                   \
    do {                                                                                         \
        EXPECT_ERR_KEEP(call, want);                                                             \
        (void)hipGetLastError();                                                                 \
    } while (0)

// The call must succeed, or the program stops here (exit 1).
#define CHECK(call)                                                                              \
    do {                                                                                         \
        hipError_t err_ = (call);                                                                \
        if (err_ != hipSuccess) {                                                                \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,       \
                         err_name(err_), static_cast<int>(err_));                                \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

#define EXPECT_OK(call) EXPECT_ERR(call, hipSuccess)

#define EXPECT_TRUE(cond)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            std::fprintf(stderr, "FAIL %s:%d %s\n", __FILE__, __LINE__, #cond);                  \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

#define EXPECT_EQ(a, b)                                                                          \
    do {                                                                                         \
        long long a_ = (long long)(a), b_ = (long long)(b);                                      \
        if (a_ != b_) {                                                                          \
            std::fprintf(stderr, "FAIL %s:%d %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a,  \
                         #b, a_, b_);                                                            \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

static int finish(const char* name) {
    if (failures != 0) {
        std::fprintf(stderr, "%s: FAILED, %d check(s) wrong\n", name, failures.load());
        return 1;
    }
    std::printf("%s: PASSED\n", name);
    return 0;
}

#endif // C_TESTS_CHECK_H
