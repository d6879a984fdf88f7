// fill_ends_behind_copies: a stream fill whose ends are not 4-byte aligned writes them through
// a copy engine, from hipshim's callback thread (a stream fill is a host task there). Copies
// queued after the fill in the same stream wait for it. A copy engine runs its jobs in order:
// had those copies been handed to the engines at once, waiting there for the fill, with every
// engine busy the fill's end copy would queue behind one of them and wait for a copy that
// waits for the fill (a deadlock; in the API fuzzer's two-thread hang, a staged pageable copy
// holding the device's copy lock completed the circle). A host function holds the stream
// back until both copies have been queued, so the order is the same in every run.
#include <hip/hip_runtime.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <unistd.h>

#include "../check.h"

static const size_t BYTES = 4096;
static std::atomic<bool> go{false};

static void hold_until_go(void*) {
    while (!go.load()) usleep(100);
}

static void on_alarm(int) {
    const char msg[] = "FAIL: fill_ends_behind_copies: hipStreamSynchronize never returned\n";
    write(2, msg, sizeof msg - 1);
    _exit(3);
}

int main() {
    std::signal(SIGALRM, on_alarm);
    alarm(60);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    uint8_t *filled, *to_device, *from_device, *in, *out;
    CHECK(hipMalloc((void**)&filled, 64));
    CHECK(hipMalloc((void**)&to_device, BYTES));
    CHECK(hipMalloc((void**)&from_device, BYTES));
    CHECK(hipHostMalloc((void**)&in, BYTES, 0));
    CHECK(hipHostMalloc((void**)&out, BYTES, 0));
    for (size_t i = 0; i < BYTES; ++i) in[i] = uint8_t(7 * i + 1);
    std::memset(out, 0, BYTES);
    CHECK(hipMemset(filled, 0, 64));
    CHECK(hipMemset(from_device, 0x3c, BYTES));

    CHECK(hipLaunchHostFunc(s, hold_until_go, nullptr));
    // Bytes 1..10: a 3-byte head, one aligned word, a 3-byte tail.
    CHECK(hipMemsetAsync(filled + 1, 0x5a, 10, s));
    // Host-to-device and device-to-host: one on each of the device's two engines.
    CHECK(hipMemcpyAsync(to_device, in, BYTES, hipMemcpyHostToDevice, s));
    CHECK(hipMemcpyAsync(out, from_device, BYTES, hipMemcpyDeviceToHost, s));
    go.store(true);
    EXPECT_OK(hipStreamSynchronize(s));

    uint8_t got[64];
    CHECK(hipMemcpy(got, filled, 64, hipMemcpyDeviceToHost));
    bool fill_right = true;
    for (int i = 0; i < 64; ++i) fill_right = fill_right && got[i] == (i >= 1 && i <= 10 ? 0x5a : 0);
    EXPECT_TRUE(fill_right);
    bool copied = true;
    for (size_t i = 0; i < BYTES; ++i) copied = copied && out[i] == 0x3c;
    EXPECT_TRUE(copied);
    CHECK(hipMemcpy(out, to_device, BYTES, hipMemcpyDeviceToHost));
    EXPECT_TRUE(std::memcmp(out, in, BYTES) == 0);

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(filled));
    CHECK(hipFree(to_device));
    CHECK(hipFree(from_device));
    CHECK(hipHostFree(in));
    CHECK(hipHostFree(out));
    return finish("fill_ends_behind_copies");
}
