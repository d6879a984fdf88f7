// Shared by the real-world programs: a failing call ends the program with its text, its
// location and the status it returned.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#define HIP_CHECK(call)                                                              \
    do {                                                                             \
        hipError_t e_ = (call);                                                      \
        if (e_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, \
                         #call, hipGetErrorString(e_), (int)e_);                     \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

// For a library whose calls return a status enum with one success value.
#define STATUS_CHECK(call, success, status_name)                                         \
    do {                                                                                 \
        auto s_ = (call);                                                                \
        if (s_ != (success)) {                                                           \
            std::fprintf(stderr, "%s:%d: %s failed: %s %d\n", __FILE__, __LINE__, #call, \
                         status_name, (int)s_);                                          \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)
