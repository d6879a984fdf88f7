// Sharing a memory pool between processes: the parent makes a pool that may be exported as a
// POSIX file descriptor, allocates from it and fills the allocation, exports the pool (a
// descriptor) and two pointers (the allocation and one inside it), and starts a child anew
// (fork + exec, so it has its own runtime and simulated GPU) that inherits the descriptor,
// imports the pool and both pointers, sees the parent's bytes, adds to them with a kernel and
// frees what it imported; the parent then sees the child's writes. An imported pointer in the
// exporting process is a second mapping of the same memory. Bad input fails with
// hipErrorInvalidValue: a pool made without the handle type, another handle type, flags,
// a descriptor that is not a pool's, a pointer that is not device memory, allocating from an
// imported pool, and freeing an imported pointer twice.
#include "../check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
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

static const int N = 4096;
static const int INNER = 16;

struct Message {
    int pool_fd;
    hipMemPoolPtrExportData whole;
    hipMemPoolPtrExportData inner;
};

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
        std::fprintf(stderr, "FAIL child: no message from the parent\n");
        return 1;
    }
    hipMemPool_t pool = nullptr;
    CHECK(hipMemPoolImportFromShareableHandle(&pool, (void*)(intptr_t)m.pool_fd,
                                              hipMemHandleTypePosixFileDescriptor, 0));
    close(m.pool_fd);
    int* p = nullptr;
    int* inner = nullptr;
    CHECK(hipMemPoolImportPointer(reinterpret_cast<void**>(&p), pool, &m.whole));
    CHECK(hipMemPoolImportPointer(reinterpret_cast<void**>(&inner), pool, &m.inner));
    EXPECT_TRUE(inner != p);

    int host[N];
    CHECK(hipMemcpy(host, p, sizeof host, hipMemcpyDeviceToHost));
    EXPECT_EQ(host[7], 21);
    EXPECT_EQ(host[N - 1], 3 * (N - 1));
    int first = 0;
    CHECK(hipMemcpy(&first, inner, sizeof first, hipMemcpyDeviceToHost));
    EXPECT_EQ(first, 3 * INNER);
    add_ten<<<N / 256, 256>>>(p, N);
    CHECK(hipDeviceSynchronize());

    // An imported pool only holds what was imported.
    void* fresh = nullptr;
    EXPECT_ERR(hipMallocFromPoolAsync(&fresh, 256, pool, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceSetMemPool(0, pool), hipErrorInvalidValue);
    hipMemPoolPtrExportData garbage;
    std::memset(&garbage, 0x5a, sizeof garbage);
    void* none = nullptr;
    EXPECT_ERR(hipMemPoolImportPointer(&none, pool, &garbage), hipErrorInvalidValue);

    CHECK(hipFreeAsync(inner, nullptr));
    CHECK(hipFree(p));
    EXPECT_ERR(hipFree(p), hipErrorInvalidValue);
    CHECK(hipMemPoolDestroy(pool));
    int result = failures.load();
    if (write(out_fd, &result, sizeof result) != sizeof result) return 1;
    return finish("mempool_ipc child");
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

static hipMemPoolProps props(hipMemAllocationHandleType types) {
    hipMemPoolProps p;
    std::memset(&p, 0, sizeof p);
    p.allocType = hipMemAllocationTypePinned;
    p.handleTypes = types;
    p.location.type = hipMemLocationTypeDevice;
    p.location.id = 0;
    return p;
}

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "child") == 0)
        return child(std::atoi(argv[2]), std::atoi(argv[3]));

    hipMemPoolProps shareable = props(hipMemHandleTypePosixFileDescriptor);
    hipMemPool_t pool = nullptr;
    CHECK(hipMemPoolCreate(&pool, &shareable));
    int* d = nullptr;
    CHECK(hipMallocFromPoolAsync(reinterpret_cast<void**>(&d), N * sizeof(int), pool, nullptr));
    fill<<<N / 256, 256>>>(d, N);
    CHECK(hipStreamSynchronize(nullptr));

    Message m;
    CHECK(hipMemPoolExportToShareableHandle(&m.pool_fd, pool, hipMemHandleTypePosixFileDescriptor, 0));
    CHECK(hipMemPoolExportPointer(&m.whole, d));
    CHECK(hipMemPoolExportPointer(&m.inner, d + INNER));

    // Bad input, in the exporting process.
    hipMemPoolProps plain_props = props(hipMemHandleTypeNone);
    hipMemPool_t plain = nullptr;
    CHECK(hipMemPoolCreate(&plain, &plain_props));
    int fd = -1;
    EXPECT_ERR(hipMemPoolExportToShareableHandle(&fd, plain, hipMemHandleTypePosixFileDescriptor, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolExportToShareableHandle(&fd, pool, hipMemHandleTypeWin32, 0),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolExportToShareableHandle(&fd, pool, hipMemHandleTypePosixFileDescriptor, 1),
               hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolExportToShareableHandle(nullptr, pool, hipMemHandleTypePosixFileDescriptor, 0),
               hipErrorInvalidValue);
    CHECK(hipMemPoolDestroy(plain));
    int not_a_pool[2];
    if (pipe(not_a_pool) != 0) return 1;
    hipMemPool_t bad = nullptr;
    EXPECT_ERR(hipMemPoolImportFromShareableHandle(&bad, (void*)(intptr_t)not_a_pool[0],
                                                   hipMemHandleTypePosixFileDescriptor, 0),
               hipErrorInvalidValue);
    close(not_a_pool[0]);
    close(not_a_pool[1]);
    int on_stack = 0;
    hipMemPoolPtrExportData data;
    EXPECT_ERR(hipMemPoolExportPointer(&data, &on_stack), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolExportPointer(nullptr, d), hipErrorInvalidValue);

    // In the exporting process an imported pointer maps the same memory a second time.
    int* again = nullptr;
    CHECK(hipMemPoolImportPointer(reinterpret_cast<void**>(&again), pool, &m.whole));
    EXPECT_TRUE(again != d);
    int seven = 0;
    CHECK(hipMemcpy(&seven, again + 7, sizeof seven, hipMemcpyDeviceToHost));
    EXPECT_EQ(seven, 21);
    CHECK(hipFree(again));

    // The child inherits a copy of the descriptor (the exported one is close-on-exec, as a
    // descriptor sent over a socket would be).
    int inherited = dup(m.pool_fd);
    close(m.pool_fd);
    m.pool_fd = inherited;
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
    close(inherited);
    if (write(to_child[1], &m, sizeof m) != sizeof m) {
        std::perror("write");
        return 1;
    }
    int child_failures = -1;
    bool reported = read_all(from_child[0], &child_failures, sizeof child_failures);
    EXPECT_EQ(reap(pid), 0);
    EXPECT_TRUE(reported);
    EXPECT_EQ(child_failures, 0);

    int host[N];
    CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != 3 * i + 10;
    EXPECT_EQ(wrong, 0);
    CHECK(hipFreeAsync(d, nullptr));
    CHECK(hipStreamSynchronize(nullptr));
    CHECK(hipMemPoolDestroy(pool));
    return finish("mempool_ipc");
}
