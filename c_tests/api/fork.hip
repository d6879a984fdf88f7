// HIP and fork(): a child forked before the first HIP call may use HIP; a child forked after
// HIP was initialised gets the answers the runtime fixed when it started (devices, properties,
// attributes, the link and access between two devices, versions) with the parent's values,
// and hipErrorNotInitialized from every call that needs the device (as CUDA does) instead of
// hanging on device threads that do not exist in it, and exits normally; a child that execs
// gets a working HIP; the parent keeps working throughout.
// hipshim-test: env=HSASIM_GPUS=2 expect-stderr=fork() expect-stderr=hipErrorNotInitialized

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

// What the parent knew before it forked, for the child to compare its answers with.
struct Known {
    int count, device, cus, runtime_version;
    char arch[256];
    unsigned link_type, hops;
    int can_access, access_supported;
};

static Known ask() {
    Known k{};
    hipDeviceProp_t props{};
    EXPECT_OK(hipGetDeviceCount(&k.count));
    EXPECT_OK(hipGetDevice(&k.device));
    EXPECT_OK(hipGetDeviceProperties(&props, 0));
    std::memcpy(k.arch, props.gcnArchName, sizeof k.arch);
    EXPECT_OK(hipDeviceGetAttribute(&k.cus, hipDeviceAttributeMultiprocessorCount, 0));
    EXPECT_OK(hipRuntimeGetVersion(&k.runtime_version));
    EXPECT_OK(hipExtGetLinkTypeAndHopCount(0, 1, &k.link_type, &k.hops));
    EXPECT_OK(hipDeviceCanAccessPeer(&k.can_access, 0, 1));
    EXPECT_OK(hipDeviceGetP2PAttribute(&k.access_supported, hipDevP2PAttrAccessSupported, 0, 1));
    return k;
}

// In a child forked after initialisation: the queries answer as in the parent, everything
// that needs the device fails cleanly, and exit() returns.
static int child_after_init(const Known& parent) {
    Known k = ask();
    EXPECT_EQ(k.count, 2);
    EXPECT_EQ(k.count, parent.count);
    EXPECT_EQ(k.device, parent.device);
    EXPECT_TRUE(std::strcmp(k.arch, parent.arch) == 0);
    EXPECT_EQ(k.cus, parent.cus);
    EXPECT_EQ(k.runtime_version, parent.runtime_version);
    EXPECT_EQ(k.link_type, parent.link_type);
    EXPECT_EQ(k.hops, parent.hops);
    EXPECT_EQ(k.can_access, 1);
    EXPECT_EQ(k.access_supported, 1);
    EXPECT_OK(hipSetDevice(1));
    int device = -1;
    EXPECT_OK(hipGetDevice(&device));
    EXPECT_EQ(device, 1);
    EXPECT_ERR(hipSetDevice(2), hipErrorInvalidDevice);
    EXPECT_TRUE(std::strcmp(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice") == 0);

    int* d = nullptr;
    EXPECT_ERR(hipMalloc(&d, 256), hipErrorNotInitialized);
    EXPECT_ERR(hipDeviceSynchronize(), hipErrorNotInitialized);
    hipStream_t s = nullptr;
    EXPECT_ERR(hipStreamCreate(&s), hipErrorNotInitialized);
    EXPECT_ERR(hipDeviceEnablePeerAccess(0, 0), hipErrorNotInitialized);
    size_t free_bytes = 0, total_bytes = 0;
    EXPECT_ERR(hipMemGetInfo(&free_bytes, &total_bytes), hipErrorNotInitialized);
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

    // 2. Forked after: the parent's answers, clean errors, a normal exit (atexit handlers
    // included).
    const Known parent = ask();
    pid_t late = fork();
    if (late == 0) std::exit(child_after_init(parent));
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
