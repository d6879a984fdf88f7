// hipModuleLoad of files that are not code objects, or not files: each is an error and
// none hangs or exhausts memory. A FIFO would block a reader until a writer appears and
// /dev/zero never ends, so only regular files are read, and only as many bytes as their
// size. alarm() and an address-space limit turn a regression into a quick failure here
// instead of a hang or a machine out of memory.
#include "../check.h"
#include "own_bundle.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

extern "C" __global__ void probe(int* out) { out[0] = 42; }

static std::string write_file(const char* name, const Bytes& bytes) {
    std::string path = std::string("/tmp/hipshim-modules-bad-") + std::to_string(getpid()) +
                       "-" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::exit(2);
    std::fclose(f);
    return path;
}

// The current address-space size, from /proc/self/status (VmSize, kB).
static unsigned long long vm_size() {
    std::ifstream status("/proc/self/status");
    std::string key;
    unsigned long long kb = 0;
    while (status >> key) {
        if (key == "VmSize:") {
            status >> kb;
            break;
        }
    }
    return kb * 1024;
}

int main() {
    alarm(120);
    hipModule_t module = nullptr;
    const Bytes bundle = own_bundle();

    std::string good = write_file("good.co", bundle);
    EXPECT_OK(hipModuleLoad(&module, good.c_str()));
    EXPECT_OK(hipModuleUnload(module));

    std::string cut = write_file("cut.co", Bytes(bundle.begin(), bundle.begin() + bundle.size() / 2));
    EXPECT_ERR(hipModuleLoad(&module, cut.c_str()), hipErrorInvalidImage);
    std::string empty = write_file("empty.co", Bytes());
    // An empty file: the ROCm 6 profile's code (c_tests/compat/empty_module covers each ABI).
    EXPECT_ERR(hipModuleLoad(&module, empty.c_str()), hipErrorInvalidValue);
    EXPECT_ERR(hipModuleLoad(&module, "/nonexistent/module.co"), hipErrorFileNotFound);
    EXPECT_ERR(hipModuleLoad(&module, "/"), hipErrorInvalidValue);

    std::string fifo = std::string("/tmp/hipshim-modules-bad-") + std::to_string(getpid()) + ".fifo";
    if (mkfifo(fifo.c_str(), 0600) != 0) std::exit(2);
    EXPECT_ERR(hipModuleLoad(&module, fifo.c_str()), hipErrorInvalidValue);

    // An endless device is refused without reading it: under a limit of 1 GiB more address
    // space than in use (so reading it fails instead of filling the machine), and with
    // less than 64 MiB added to the peak resident size.
    struct rlimit old_limit, limit;
    getrlimit(RLIMIT_AS, &old_limit);
    limit = old_limit;
    limit.rlim_cur = vm_size() + (1ull << 30);
    setrlimit(RLIMIT_AS, &limit);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    EXPECT_ERR(hipModuleLoad(&module, "/dev/zero"), hipErrorInvalidValue);
    getrusage(RUSAGE_SELF, &after);
    setrlimit(RLIMIT_AS, &old_limit);
    EXPECT_TRUE(after.ru_maxrss - before.ru_maxrss < 64 * 1024);  // kB

    for (const std::string& p : {good, cut, empty, fifo}) unlink(p.c_str());
    return finish("module_files");
}
