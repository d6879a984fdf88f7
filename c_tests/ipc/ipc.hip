// Inter-process memory: the parent fills a hipMalloc allocation and passes two handles (one
// for the allocation, one for a pointer inside it) through a pipe to a child it starts anew
// (fork + exec of this program, so the child has its own runtime and its own simulated GPU);
// the child opens both, sees the parent's bytes, adds to them with a kernel, closes them and
// reports; the parent sees the child's writes. Bad input fails: a handle opened in the process
// that made it (hipErrorInvalidContext), a zero handle and bad flags (hipErrorInvalidValue),
// 64 bytes of anything else and memory that is not from hipMalloc
// (hipErrorInvalidDevicePointer), closing what was not opened (hipErrorInvalidHandle).
// Interprocess events: the child opens the parent's event; the parent runs a kernel, records
// the event after it and tells the child, which synchronizes on the event and then sees the
// kernel's writes. Error codes follow AMD's runtime (checked against ROCm 5.2's on hsasim
// where it already behaves as later releases do).
#include "../check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

__global__ void fill(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 3 * i;
}

__global__ void add_ten(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 10;
}

// Slow on purpose (each thread loops), so the child's wait is a real one.
__global__ void add_hundred_slowly(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = p[i];
    for (int k = 0; k < 100; ++k) v += 1;
    p[i] = v;
}

static const int N = 4096;
static const int INNER = 16;

struct Message {
    hipIpcMemHandle_t whole;
    hipIpcMemHandle_t inner;
    hipIpcEventHandle_t event;
};

enum : int { READY = 1, RECORDED = 2 };

static bool read_all(int fd, void* buf, size_t len) {
    char* p = static_cast<char*>(buf);
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n <= 0) return false;
        p += n;
        len -= n;
    }
    return true;
}

static int child(int in_fd, int out_fd) {
    Message m;
    if (!read_all(in_fd, &m, sizeof m)) {
        std::fprintf(stderr, "FAIL child: no handles from the parent\n");
        return 1;
    }
    int* p = nullptr;
    CHECK(hipIpcOpenMemHandle(reinterpret_cast<void**>(&p), m.whole, hipIpcMemLazyEnablePeerAccess));
    int* inner = nullptr;
    CHECK(hipIpcOpenMemHandle(reinterpret_cast<void**>(&inner), m.inner, hipIpcMemLazyEnablePeerAccess));

    hipPointerAttribute_t attrs = {};
    CHECK(hipPointerGetAttributes(&attrs, p + 5));
    EXPECT_EQ(attrs.type, hipMemoryTypeDevice);

    int host[N];
    CHECK(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host[7], 21);
    EXPECT_EQ(host[N - 1], 3 * (N - 1));
    add_ten<<<N / 256, 256>>>(p, N);
    CHECK(hipDeviceSynchronize());
    // The inner handle's pointer is INNER ints into the same memory.
    int first = 0;
    CHECK(hipMemcpy(&first, inner, sizeof first, hipMemcpyDeviceToHost));
    EXPECT_EQ(first, 3 * INNER + 10);

    hipEvent_t ev = nullptr;
    CHECK(hipIpcOpenEventHandle(&ev, m.event));
    EXPECT_OK(hipEventQuery(ev));  // not recorded yet
    int msg = READY;
    if (write(out_fd, &msg, sizeof msg) != sizeof msg) return 1;
    if (!read_all(in_fd, &msg, sizeof msg) || msg != RECORDED) {
        std::fprintf(stderr, "FAIL child: the parent did not record\n");
        return 1;
    }
    CHECK(hipEventSynchronize(ev));
    EXPECT_OK(hipEventQuery(ev));
    EXPECT_OK(hipStreamWaitEvent(nullptr, ev, 0));
    CHECK(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != 3 * i + 110;
    EXPECT_EQ(wrong, 0);
    // An opened event can be handed on (its handle names this process).
    hipIpcEventHandle_t again;
    EXPECT_OK(hipIpcGetEventHandle(&again, ev));
    CHECK(hipEventDestroy(ev));

    EXPECT_ERR(hipIpcCloseMemHandle(p + 1), hipErrorInvalidHandle);
    CHECK(hipIpcCloseMemHandle(inner));
    CHECK(hipIpcCloseMemHandle(p));
    EXPECT_ERR(hipIpcCloseMemHandle(p), hipErrorInvalidHandle);
    int result = failures.load();
    if (write(out_fd, &result, sizeof result) != sizeof result) return 1;
    return finish("ipc child");
}

// Waits for `child` for at most 60 s; its exit status, or -1 if it was killed or crashed.
static int reap(pid_t child) {
    for (int tenths = 0; tenths < 600; ++tenths) {
        int status = 0;
        if (waitpid(child, &status, WNOHANG) == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        timespec pause{0, 100 * 1000 * 1000};
        nanosleep(&pause, nullptr);
    }
    std::fprintf(stderr, "FAIL child %d still running after 60 s: killed\n", (int)child);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -1;
}

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "child") == 0)
        return child(std::atoi(argv[2]), std::atoi(argv[3]));

    int* d = nullptr;
    CHECK(hipMalloc(&d, N * sizeof(int)));
    fill<<<N / 256, 256>>>(d, N);
    CHECK(hipDeviceSynchronize());

    Message m;
    CHECK(hipIpcGetMemHandle(&m.whole, d));
    CHECK(hipIpcGetMemHandle(&m.inner, d + INNER));
    hipEvent_t ev = nullptr;
    CHECK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    CHECK(hipIpcGetEventHandle(&m.event, ev));

    // Bad input, in the exporting process.
    int on_stack = 0;
    hipIpcMemHandle_t h;
    EXPECT_ERR(hipIpcGetMemHandle(&h, &on_stack), hipErrorInvalidDevicePointer);
    EXPECT_ERR(hipIpcGetMemHandle(nullptr, d), hipErrorInvalidValue);
    EXPECT_ERR(hipIpcGetMemHandle(&h, nullptr), hipErrorInvalidValue);
    void* opened = nullptr;
    EXPECT_ERR(hipIpcOpenMemHandle(&opened, m.whole, hipIpcMemLazyEnablePeerAccess),
               hipErrorInvalidContext);
    hipIpcMemHandle_t bogus;
    std::memset(&bogus, 0x5a, sizeof bogus);
    EXPECT_ERR(hipIpcOpenMemHandle(&opened, bogus, hipIpcMemLazyEnablePeerAccess),
               hipErrorInvalidDevicePointer);
    std::memset(&bogus, 0, sizeof bogus);
    EXPECT_ERR(hipIpcOpenMemHandle(&opened, bogus, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
    EXPECT_ERR(hipIpcOpenMemHandle(&opened, m.whole, 7), hipErrorInvalidValue);
    EXPECT_ERR(hipIpcOpenMemHandle(nullptr, m.whole, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
    EXPECT_ERR(hipIpcCloseMemHandle(d), hipErrorInvalidHandle);
    hipEvent_t plain = nullptr, bad = nullptr;
    EXPECT_ERR(hipEventCreateWithFlags(&bad, hipEventInterprocess), hipErrorInvalidValue);
    CHECK(hipEventCreate(&plain));
    EXPECT_ERR(hipIpcGetEventHandle(&m.event, plain), hipErrorInvalidConfiguration);
    CHECK(hipEventDestroy(plain));
    CHECK(hipIpcGetEventHandle(&m.event, ev));
    EXPECT_ERR(hipIpcOpenEventHandle(&bad, m.event), hipErrorInvalidContext);
    hipIpcEventHandle_t bogus_event;
    std::memset(&bogus_event, 0x33, sizeof bogus_event);
    EXPECT_ERR(hipIpcOpenEventHandle(&bad, bogus_event), hipErrorInvalidValue);

    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) {
        std::perror("pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(to_child[1]);
        close(from_child[0]);
        char in[16], out[16];
        std::snprintf(in, sizeof in, "%d", to_child[0]);
        std::snprintf(out, sizeof out, "%d", from_child[1]);
        execl("/proc/self/exe", argv[0], "child", in, out, static_cast<char*>(nullptr));
        std::perror("execl");
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    if (write(to_child[1], &m, sizeof m) != sizeof m) {
        std::perror("write");
        return 1;
    }
    int msg = 0;
    if (read_all(from_child[0], &msg, sizeof msg) && msg == READY) {
        add_hundred_slowly<<<N / 256, 256>>>(d, N);
        CHECK(hipEventRecord(ev, nullptr));
        msg = RECORDED;
        if (write(to_child[1], &msg, sizeof msg) != sizeof msg) std::perror("write");
        // (hsasim's deterministic mode runs the parent's GPU only while the parent waits.)
        CHECK(hipEventSynchronize(ev));
    } else {
        std::fprintf(stderr, "FAIL the child never got ready\n");
        ++failures;
    }
    int child_failures = -1;
    bool reported = read_all(from_child[0], &child_failures, sizeof child_failures);
    EXPECT_EQ(reap(pid), 0);
    EXPECT_TRUE(reported);
    EXPECT_EQ(child_failures, 0);

    int host[N];
    CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != 3 * i + 110;
    EXPECT_EQ(wrong, 0);
    CHECK(hipEventDestroy(ev));
    CHECK(hipFree(d));
    return finish("ipc");
}
