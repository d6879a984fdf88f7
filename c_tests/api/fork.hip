// HIP and fork(): a child forked before the first HIP call may use HIP; a child forked after
// HIP was initialised gets hipErrorNotInitialized from every call (as CUDA does) instead of
// hanging on device threads that do not exist in it, and exits normally; a child that execs
// gets a working HIP; the parent keeps working throughout.
// hipshim-test: expect-stderr=fork() expect-stderr=hipErrorNotInitialized

#include "../check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>

__global__ void fill(int* out, int value) { out[threadIdx.x] = value + threadIdx.x; }

// Runs one kernel and checks its result; returns true when everything worked.
static bool kernel_works(int value) {
    int* d = nullptr;
    if (hipMalloc(&d, 64 * sizeof(int)) != hipSuccess) return false;
    fill<<<1, 64>>>(d, value);
    int h[64] = {};
    bool ok = hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost) == hipSuccess;
    for (int i = 0; ok && i < 64; ++i) ok = h[i] == value + i;
    return hipFree(d) == hipSuccess && ok;
}

// Waits for `child` for at most 60 s (a hang is the defect this test exists for); returns its
// exit status, or -1 if it had to be killed or died of a signal.
static int reap(pid_t child) {
    for (int tenths = 0; tenths < 600; ++tenths) {
        int status = 0;
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        timespec pause{0, 100 * 1000 * 1000};
        nanosleep(&pause, nullptr);
    }
    std::fprintf(stderr, "FAIL child %d still running after 60 s: killed\n", (int)child);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -1;
}

// In a child forked after initialisation: every call fails cleanly, and exit() returns.
static int child_after_init() {
    int* d = nullptr;
    EXPECT_ERR(hipMalloc(&d, 256), hipErrorNotInitialized);
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
    hipStream_t s = nullptr;
    EXPECT_ERR(hipStreamCreate(&s), hipErrorNotInitialized);
    int count = -1;
    EXPECT_ERR(hipGetDeviceCount(&count), hipErrorNotInitialized);
    fill<<<1, 1>>>(nullptr, 0);
    EXPECT_ERR(hipGetLastError(), hipErrorNotInitialized);
    EXPECT_ERR(hipGetLastError(), hipSuccess);
    return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--exec-child") == 0) {
        // A new program image: HIP starts afresh.
        return kernel_works(3) ? 42 : 1;
    }

    // 1. Forked before any HIP call: the child initialises its own runtime.
    pid_t early = fork();
    if (early == 0) _exit(kernel_works(1) ? 0 : 1);
    EXPECT_EQ(reap(early), 0);

    // The parent initialises HIP and uses the device.
    EXPECT_TRUE(kernel_works(2));

    // 2. Forked after: clean errors, a normal exit (atexit handlers included).
    pid_t late = fork();
    if (late == 0) std::exit(child_after_init());
    EXPECT_EQ(reap(late), 0);

    // 3. Forked after, then exec: the new image uses HIP normally.
    pid_t execd = fork();
    if (execd == 0) {
        char arg[] = "--exec-child";
        char* args[] = {argv[0], arg, nullptr};
        execv("/proc/self/exe", args);
        _exit(2);
    }
    EXPECT_EQ(reap(execd), 42);

    // The parent's runtime is untouched by its children.
    EXPECT_TRUE(kernel_works(4));
    return finish("fork");
}
