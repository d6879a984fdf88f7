// hipshim-test: env=HSASIM_TIME=host
//
// wall_clock: wall_clock64() ticks at the rate hipDeviceAttributeWallClockRate reports.
// Two kernels read the device's wall clock 200 ms of host time apart; converted with the
// reported rate, the device must have seen at least most of those 200 ms (a rate that is
// too high, e.g. the shader clock's, makes the interval look ten times shorter). On host
// time only: under virtual time a host sleep moves no device time.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <thread>

__global__ void read_wall_clock(unsigned long long* out) { *out = wall_clock64(); }

int main() {
    int khz = 0;
    if (hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, 0) != hipSuccess || khz <= 0) {
        std::fprintf(stderr, "FAIL hipDeviceAttributeWallClockRate: %d\n", khz);
        return 1;
    }
    unsigned long long* ticks = nullptr;
    if (hipMalloc(&ticks, 2 * sizeof(unsigned long long)) != hipSuccess) return 1;
    read_wall_clock<<<1, 1>>>(ticks);
    if (hipDeviceSynchronize() != hipSuccess) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    read_wall_clock<<<1, 1>>>(ticks + 1);
    if (hipDeviceSynchronize() != hipSuccess) return 1;
    unsigned long long host[2];
    hipMemcpy(host, ticks, sizeof host, hipMemcpyDeviceToHost);
    hipFree(ticks);
    const double device_ms = double(host[1] - host[0]) / double(khz);
    std::printf("wall clock rate %d kHz; device saw %.1f ms across a 200 ms host sleep\n", khz,
                device_ms);
    // The host slept 200 ms between the two reads; scheduling can only add time.
    if (device_ms < 150.0 || device_ms > 60000.0) {
        std::fprintf(stderr, "FAIL wall_clock64 and hipDeviceAttributeWallClockRate disagree\n");
        return 1;
    }
    std::printf("wall_clock: PASSED\n");
    return 0;
}
