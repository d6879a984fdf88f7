// A program that ends with work in flight, as tests/process_lifetime.rs drives it:
//   normal       queue slow kernels and return from main without waiting for them
//   thread-exit  another thread calls exit() while this one keeps launching
//   kill         print READY once work is queued, then keep launching until killed
// A second argument `ipc` also exports an allocation (hipIpcGetMemHandle) and an interprocess
// event, recorded behind the queued work, and keeps both to the end (cli/tests/
// device_lifetime.rs runs it attached to a device service, where both live in the service).
#include "../check.h"

#include <cstring>
#include <thread>

__global__ void spin(unsigned long long ticks, int* out) {
    unsigned long long t0 = __builtin_amdgcn_s_memrealtime();
    while (__builtin_amdgcn_s_memrealtime() - t0 < ticks) {
    }
    atomicAdd(out, 1);
}

static const unsigned long long ONE_MS = 100000ull; // of the 100 MHz real-time clock

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "normal";
    const bool ipc = argc > 2 && std::strcmp(argv[2], "ipc") == 0;
    int* out = nullptr;
    CHECK(hipMalloc(&out, sizeof(int)));
    CHECK(hipMemset(out, 0, sizeof(int)));
    hipStream_t stream;
    CHECK(hipStreamCreate(&stream));
    int* pinned = nullptr;
    CHECK(hipHostMalloc(&pinned, 1 << 20));
    for (int i = 0; i < 8; ++i) {
        hipLaunchKernelGGL(spin, dim3(1), dim3(64), 0, stream, 20 * ONE_MS, out);
        CHECK(hipMemcpyAsync(pinned, out, sizeof(int), hipMemcpyDeviceToHost, stream));
    }
    if (ipc) {
        void* exported = nullptr;
        CHECK(hipMalloc(&exported, 1 << 20));
        hipIpcMemHandle_t mem_handle;
        CHECK(hipIpcGetMemHandle(&mem_handle, exported));
        hipEvent_t event;
        CHECK(hipEventCreateWithFlags(&event, hipEventInterprocess | hipEventDisableTiming));
        CHECK(hipEventRecord(event, stream));
        hipIpcEventHandle_t event_handle;
        CHECK(hipIpcGetEventHandle(&event_handle, event));
    }
    if (std::strcmp(mode, "normal") == 0) return 0;
    if (std::strcmp(mode, "thread-exit") == 0) {
        std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::exit(0);
        }).detach();
    } else {
        std::printf("READY\n");
        std::fflush(stdout);
    }
    for (;;) {
        hipLaunchKernelGGL(spin, dim3(1), dim3(64), 0, stream, ONE_MS, out);
        (void)hipStreamQuery(stream);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}
