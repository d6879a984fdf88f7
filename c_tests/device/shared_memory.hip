// Device memory of a device service (`hipshim device start`, run with
// HSASIM_DEVICE_SERVICE=NAME): the roles of cli/tests/device_memory.rs, one per run.
//
//   export DIR   allocates, fills by a kernel, writes an IPC handle and the pointer to
//                DIR/handle, waits for DIR/done, then checks the importer's writes
//   import DIR   reads DIR/handle, opens it (the pointer must be the exporter's), checks the
//                bytes (also through the pointer itself with HSASIM_LARGE_BAR=1), doubles them
//                by a kernel, closes it and writes DIR/done
//   hold DIR N   allocates N MiB, writes DIR/ready and waits to be killed
//   again DIR    allocates, writes DIR/ready, waits for DIR/go, allocates again: that must
//                fail (the service was stopped meanwhile); exits 3 when it does
//   queue DIR K  launches K kernels on a stream of its own, synchronizes, checks their
//                writes, writes DIR/ready and waits to be killed (the test reads the queue's
//                indices and doorbell from outside)
//   hog DIR      launches a kernel of one workgroup that spins until the host lets it go,
//                writes DIR/ready, waits for DIR/go, lets the kernel go and synchronizes
//                (on a service with a compute-unit budget, it holds a unit meanwhile)
#include "../check.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

static const int N = 1 << 16;

__global__ void fill(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 3 * i + 1;
}

__global__ void twice(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= 2;
}

struct Message {
    hipIpcMemHandle_t handle;
    unsigned long long pointer;
};

// Waits for `path` to exist (the test kills a run that waits too long).
static void wait_for(const std::string& path) {
    while (access(path.c_str(), F_OK) != 0) usleep(2000);
}

// Writes whole, then renames, so a reader never sees half a file.
static void publish(const std::string& path, const void* data, size_t len) {
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(data, 1, len, f) != len || std::fclose(f) != 0 ||
        std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(1);
    }
}

static int exporter(const std::string& dir) {
    int* p = nullptr;
    CHECK(hipMalloc(&p, N * sizeof(int)));
    // The GPU's memory is the service's (the test starts it with --memory 256M).
    size_t free_bytes = 0, total = 0;
    CHECK(hipMemGetInfo(&free_bytes, &total));
    EXPECT_EQ(total, 256u << 20);
    fill<<<N / 256, 256>>>(p, N);
    CHECK(hipDeviceSynchronize());
    Message m = {};
    CHECK(hipIpcGetMemHandle(&m.handle, p));
    m.pointer = reinterpret_cast<unsigned long long>(p);
    std::printf("exporter pointer %p\n", static_cast<void*>(p));
    publish(dir + "/handle", &m, sizeof m);
    wait_for(dir + "/done");
    int* host = static_cast<int*>(std::malloc(N * sizeof(int)));
    CHECK(hipMemcpy(host, p, N * sizeof(int), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != 2 * (3 * i + 1);
    EXPECT_EQ(wrong, 0);
    std::free(host);
    CHECK(hipFree(p));
    return finish("export");
}

static int importer(const std::string& dir) {
    wait_for(dir + "/handle");
    Message m = {};
    FILE* f = std::fopen((dir + "/handle").c_str(), "rb");
    if (!f || std::fread(&m, sizeof m, 1, f) != 1) {
        std::fprintf(stderr, "cannot read the handle\n");
        return 1;
    }
    std::fclose(f);
    // The exporter's allocation is the device's, so this process sees it gone from the
    // device's free memory too (hipshim's own table of this process holds nothing yet).
    size_t free_bytes = 0, total = 0;
    CHECK(hipMemGetInfo(&free_bytes, &total));
    EXPECT_TRUE(free_bytes <= total - N * sizeof(int));
    int* p = nullptr;
    CHECK(hipIpcOpenMemHandle(reinterpret_cast<void**>(&p), m.handle,
                              hipIpcMemLazyEnablePeerAccess));
    std::printf("importer pointer %p\n", static_cast<void*>(p));
    EXPECT_EQ(reinterpret_cast<unsigned long long>(p), m.pointer);
    int* host = static_cast<int*>(std::malloc(N * sizeof(int)));
    CHECK(hipMemcpy(host, p, N * sizeof(int), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != 3 * i + 1;
    EXPECT_EQ(wrong, 0);
    const char* large_bar = std::getenv("HSASIM_LARGE_BAR");
    if (large_bar && std::strcmp(large_bar, "1") == 0) {
        // The CPU reaches device memory through the BAR: the exporter's bytes, in place.
        EXPECT_EQ(p[5], 16);
        EXPECT_EQ(p[N - 1], 3 * (N - 1) + 1);
    }
    twice<<<N / 256, 256>>>(p, N);
    CHECK(hipDeviceSynchronize());
    CHECK(hipIpcCloseMemHandle(p));
    std::free(host);
    publish(dir + "/done", "", 0);
    return finish("import");
}

static int holder(const std::string& dir, int mib) {
    void* p = nullptr;
    CHECK(hipMalloc(&p, static_cast<size_t>(mib) << 20));
    CHECK(hipMemset(p, 0x5a, static_cast<size_t>(mib) << 20));
    CHECK(hipDeviceSynchronize());
    publish(dir + "/ready", "", 0);
    for (;;) pause();
}

static int again(const std::string& dir) {
    void* p = nullptr;
    CHECK(hipMalloc(&p, 4096));
    publish(dir + "/ready", "", 0);
    wait_for(dir + "/go");
    void* q = nullptr;
    hipError_t e = hipMalloc(&q, 4096);
    std::printf("second hipMalloc: %s\n", err_name(e));
    return e == hipSuccess ? 0 : 3;
}

__global__ void stamp(int* p, int i) {
    if (threadIdx.x == 0) p[i] = i + 1;
}

static int queue_role(const std::string& dir, int k) {
    int* p = nullptr;
    CHECK(hipMalloc(&p, k * sizeof(int)));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    for (int i = 0; i < k; ++i) stamp<<<1, 64, 0, s>>>(p, i);
    CHECK(hipStreamSynchronize(s));
    int* host = static_cast<int*>(std::malloc(k * sizeof(int)));
    CHECK(hipMemcpy(host, p, k * sizeof(int), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < k; ++i) wrong += host[i] != i + 1;
    EXPECT_EQ(wrong, 0);
    std::free(host);
    std::printf("queue kernels %d\n", k);
    std::fflush(stdout);
    publish(dir + "/ready", "", 0);
    for (;;) pause();
}

__global__ void spin_until(volatile int* flag, int* out) {
    while (*flag == 0) __builtin_amdgcn_s_sleep(100);
    *out = 1;
}

static int hog(const std::string& dir) {
    int* flag = nullptr;
    CHECK(hipHostMalloc(&flag, sizeof(int)));
    *flag = 0;
    int* out = nullptr;
    CHECK(hipMalloc(&out, sizeof(int)));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    spin_until<<<1, 64, 0, s>>>(flag, out);
    publish(dir + "/ready", "", 0);
    wait_for(dir + "/go");
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    CHECK(hipStreamSynchronize(s));
    int result = 0;
    CHECK(hipMemcpy(&result, out, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT_EQ(result, 1);
    return finish("hog");
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s export|import|hold|again|queue|hog DIR [MIB|K]\n", argv[0]);
        return 2;
    }
    std::string role = argv[1], dir = argv[2];
    if (role == "export") return exporter(dir);
    if (role == "import") return importer(dir);
    if (role == "hold" && argc > 3) return holder(dir, std::atoi(argv[3]));
    if (role == "again") return again(dir);
    if (role == "queue" && argc > 3) return queue_role(dir, std::atoi(argv[3]));
    if (role == "hog") return hog(dir);
    std::fprintf(stderr, "unknown role %s\n", role.c_str());
    return 2;
}
