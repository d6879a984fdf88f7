// Shared checking helpers for the c_tests/api programs: every check runs, each failure is
// printed with what differed, and the program exits 1 if any failed.
#ifndef C_TESTS_API_CHECK_H
#define C_TESTS_API_CHECK_H

#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

static int failures = 0;

static const char* err_name(hipError_t e) {
    const char* n = hipGetErrorName(e);
    return n ? n : "(null)";
}

// `got` must be `want`; names both on failure. Clears the last error either way so one
// check's failure does not leak into the next.
#define EXPECT_ERR(call, want)                                                                   \
    do {                                                                                         \
        hipError_t got_ = (call);                                                                \
        if (got_ != (want)) {                                                                    \
            std::fprintf(stderr, "FAIL %s:%d %s: expected %s, got %s\n", __FILE__, __LINE__,     \
                         #call, err_name(want), err_name(got_));                                 \
            ++failures;                                                                          \
        }                                                                                        \
        (void)hipGetLastError();                                                                 \
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
        std::fprintf(stderr, "%s: FAILED, %d check(s) wrong\n", name, failures);
        return 1;
    }
    std::printf("%s: PASSED\n", name);
    return 0;
}

#endif // C_TESTS_API_CHECK_H
