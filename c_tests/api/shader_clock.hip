// shader_clock: clock64() counts at the rate hipDeviceAttributeClockRate reports, as AMD's
// headers say ("GPU core cycle count ... the maximum frequency can be queried through
// hipDeviceAttributeClockRate") and as programs that wait with
// `while (clock64() - start < ms * clockRate)` assume; hipDeviceAttributeClockInstructionRate
// names the same counter's rate.
// One thread reads both device clocks, spins until the 100 MHz wall clock has moved 50 ms,
// and reads both again: shader cycles per wall tick must be clockRate / wallClockRate. A
// counter of nanoseconds (the old behaviour) gives 10 where gfx90a expects 17 and gfx942 21.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>

__global__ void sample_clocks(unsigned long long wall_ticks, unsigned long long* out) {
    const unsigned long long wall0 = wall_clock64();
    const unsigned long long cycles0 = clock64();
    unsigned long long wall1 = wall0;
    while (wall1 - wall0 < wall_ticks) wall1 = wall_clock64();
    const unsigned long long cycles1 = clock64();
    out[0] = wall1 - wall0;
    out[1] = cycles1 - cycles0;
}

static int attribute(hipDeviceAttribute_t which, const char* name) {
    int value = 0;
    if (hipDeviceGetAttribute(&value, which, 0) != hipSuccess || value <= 0) {
        std::fprintf(stderr, "FAIL %s: %d\n", name, value);
        return -1;
    }
    return value;
}

int main() {
    const int clock_khz = attribute(hipDeviceAttributeClockRate, "hipDeviceAttributeClockRate");
    const int wall_khz =
        attribute(hipDeviceAttributeWallClockRate, "hipDeviceAttributeWallClockRate");
    const int instruction_khz = attribute(hipDeviceAttributeClockInstructionRate,
                                          "hipDeviceAttributeClockInstructionRate");
    if (clock_khz < 0 || wall_khz < 0 || instruction_khz < 0) return 1;
    if (instruction_khz != clock_khz) {
        std::fprintf(stderr, "FAIL clockInstructionRate %d kHz, clockRate %d kHz: clock64() has one rate\n",
                     instruction_khz, clock_khz);
        return 1;
    }
    unsigned long long* sample = nullptr;
    if (hipMalloc(&sample, 2 * sizeof(unsigned long long)) != hipSuccess) return 1;
    const unsigned long long wall_ticks = 50ull * wall_khz;  // 50 ms
    sample_clocks<<<1, 1>>>(wall_ticks, sample);
    if (hipDeviceSynchronize() != hipSuccess) return 1;
    unsigned long long host[2];
    if (hipMemcpy(host, sample, sizeof host, hipMemcpyDeviceToHost) != hipSuccess) return 1;
    hipFree(sample);
    const double measured = double(host[1]) / double(host[0]);
    const double expected = double(clock_khz) / double(wall_khz);
    std::printf("clockRate %d kHz, wall clock %d kHz: %llu cycles over %llu wall ticks = %.2f per tick (expected %.2f)\n",
                clock_khz, wall_khz, host[1], host[0], measured, expected);
    // The two reads of each pair are adjacent instructions; 15% leaves room for the host
    // descheduling the interpreter between them, far less than a wrong rate's 40-50%.
    if (std::fabs(measured - expected) > 0.15 * expected) {
        std::fprintf(stderr, "FAIL clock64() does not count at clockRate\n");
        return 1;
    }
    std::printf("shader_clock: PASSED\n");
    return 0;
}
