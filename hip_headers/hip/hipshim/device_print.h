// hipshim HIP headers: printf and assert in device code.
//
// Both reach the host through the hostcall protocol of the ROCm device library
// (ockl): clang lowers a device call of `printf` into __ockl_printf_begin /
// _append_args / _append_string_n calls, the runtime's hostcall service prints
// the message with the host's stdout, and a failed assert prints AMD's message
// on stderr, then traps. The runtime reports such a kernel as hipErrorAssert.
#ifndef HIPSHIM_DEVICE_PRINT_H
#define HIPSHIM_DEVICE_PRINT_H

#include <assert.h>
#include <stdio.h>

#include "hip_types.h"

// Declared for the device so that clang lowers it to the hostcall printf (the
// host printf from <stdio.h> is a separate, host-only overload).
extern "C" __device__ int printf(const char *format, ...);

extern "C" __device__ uint64_t __ockl_fprintf_stderr_begin(void);
extern "C" __device__ uint64_t __ockl_fprintf_append_string_n(uint64_t message, const char *s,
                                                              uint64_t length, uint32_t is_last);
extern "C" __device__ uint64_t __ockl_fprintf_append_args(uint64_t message, uint32_t count,
                                                          uint64_t a0, uint64_t a1, uint64_t a2,
                                                          uint64_t a3, uint64_t a4, uint64_t a5,
                                                          uint64_t a6, uint32_t is_last);

// Bytes of a C string with its terminator, as append_string_n wants them.
__device__ inline __attribute__((always_inline)) uint64_t __hipshim_cstring_bytes(const char *s) {
    const char *end = s;
    while (*end++) {
    }
    return (uint64_t)(end - s);
}

// What <assert.h>'s assert() calls when its expression is false: on the device,
// AMD's message (glibc's wording, "Device-side assertion") on stderr, then a
// trap that ends the kernel with an error.
extern "C" __device__ __attribute__((noinline, weak, noreturn)) void
__assert_fail(const char *assertion, const char *file, unsigned int line, const char *function) {
    const char format[] = "%s:%u: %s: Device-side assertion `%s' failed.\n";
    uint64_t message = __ockl_fprintf_stderr_begin();
    message = __ockl_fprintf_append_string_n(message, format, sizeof(format), 0);
    message = __ockl_fprintf_append_string_n(message, file, __hipshim_cstring_bytes(file), 0);
    message = __ockl_fprintf_append_args(message, 1, line, 0, 0, 0, 0, 0, 0, 0);
    message =
        __ockl_fprintf_append_string_n(message, function, __hipshim_cstring_bytes(function), 0);
    __ockl_fprintf_append_string_n(message, assertion, __hipshim_cstring_bytes(assertion), 1);
    __builtin_trap();
}

#endif // HIPSHIM_DEVICE_PRINT_H
