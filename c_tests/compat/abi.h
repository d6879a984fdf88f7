// The ROCm ABI a c_tests/compat program expects hipshim to follow: EXPECT_ABI (set by the
// runner when the ABI comes from how the library was loaded), else HIPSHIM_ABI, else 6.
#ifndef C_TESTS_COMPAT_ABI_H
#define C_TESTS_COMPAT_ABI_H

#include <cstdlib>

static int expected_abi() {
    const char* names[] = {"EXPECT_ABI", "HIPSHIM_ABI"};
    for (const char* name : names) {
        const char* v = std::getenv(name);
        if (v && *v) return std::atoi(v);
    }
    return 6;
}

#endif
