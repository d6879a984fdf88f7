// multi_device: hipLaunchCooperativeKernelMultiDevice and
// hipModuleLaunchCooperativeKernelMultiDevice on two devices (HSASIM_GPUS=2).
// - each grid publishes values, this_multi_grid().sync(), then reads the values the OTHER
//   device's grid published, over several rounds (wrong without the sync);
// - grid_rank, num_grids, size and thread_rank of the multi-grid;
// - pre-sync: a grid waits for the other participating streams' earlier work; post-sync: each
//   stream's later work waits for every grid (and without the flag it is still in its own
//   stream's order);
// - errors: null list, no parts, more parts than devices, one device twice, unknown flags, the
//   null stream, different kernels, a part that fails its checks or a grid too large (nothing
//   runs on any device);
// - parts of different sizes (AMD's runtime allows them, CUDA does not);
// - a module's kernel through hipModuleLaunchCooperativeKernelMultiDevice (the code object of
//   kernels/coop_kernels.hip, in HIPSHIM_TEST_CODE_OBJECT).
// Where the runtime cannot run grids of two devices at once (hsasim's deterministic mode), the
// attribute reads 0 and two-device launches are hipErrorNotSupported after the same checks;
// the program says which it saw. Run by tests/c_tests_cooperative.rs.
#include "../check.h"

#include <hip/hip_cooperative_groups.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace cg = cooperative_groups;

constexpr int ROUNDS = 4;
constexpr unsigned BLOCKS = 4, BLOCK = 64, PER_GRID = BLOCKS * BLOCK, TOTAL = 2 * PER_GRID;

// Round r: every work-item of every grid publishes a value, the multi-grid syncs, then each reads
// the value of the work-item half the multi-grid away (on the other device). `seed` is the
// starting value of every work-item; grid 0 spins `tail_spin` before its final write (so that
// work after the launch sees whether it waited for grid 0). `info` gets, per grid, its rank,
// the grid count, the multi-grid size and its first work-item's multi-grid rank.
__global__ void exchange(unsigned* slots, const unsigned* seed, unsigned* out, unsigned* info,
                         int tail_spin) {
    cg::multi_grid_group mg = cg::this_multi_grid();
    const unsigned n = mg.size(), me = mg.thread_rank();
    unsigned acc = seed[me];
    for (int r = 0; r < ROUNDS; ++r) {
        unsigned* buf = slots + (r % 2) * n;
        buf[me] = acc * 7u + r;
#ifndef NO_SYNC
        mg.sync();
#endif
        acc = acc * 3u + buf[(me + n / 2) % n];
    }
    if (mg.grid_rank() == 0) {
        volatile unsigned sink = 0;
        for (int k = 0; k < tail_spin; ++k) sink = sink + k;
    }
    out[me] = acc;
    if (cg::this_grid().thread_rank() == 0) {
        unsigned* o = info + mg.grid_rank() * 4;
        o[0] = mg.grid_rank();
        o[1] = mg.num_grids();
        o[2] = mg.size();
        o[3] = mg.thread_rank();
    }
}

static std::vector<unsigned> expected(const std::vector<unsigned>& seed) {
    const unsigned n = seed.size();
    std::vector<unsigned> acc(seed), buf(n);
    for (int r = 0; r < ROUNDS; ++r) {
        for (unsigned i = 0; i < n; ++i) buf[i] = acc[i] * 7u + r;
        for (unsigned i = 0; i < n; ++i) acc[i] = acc[i] * 3u + buf[(i + n / 2) % n];
    }
    return acc;
}

// Slowly writes seed[i] = base + i for the whole multi-grid.
__global__ void slow_seed(unsigned* seed, unsigned base, int spin) {
    volatile unsigned sink = 0;
    for (int k = 0; k < spin; ++k) sink = sink + k;
    for (unsigned i = threadIdx.x; i < TOTAL; i += blockDim.x) seed[i] = base + i;
}

__global__ void copy(const unsigned* from, unsigned* to) {
    to[blockIdx.x * blockDim.x + threadIdx.x] = from[blockIdx.x * blockDim.x + threadIdx.x];
}

__global__ void count(unsigned* counter) { atomicAdd(counter, 1u); }

static int wrong_of(const unsigned* got, const std::vector<unsigned>& want) {
    int wrong = 0;
    for (unsigned i = 0; i < want.size(); ++i) wrong += got[i] != want[i];
    return wrong;
}

struct Buffers {
    unsigned *slots, *seed, *out, *info, *after;
};

int main() {
    int devices = 0;
    CHECK(hipGetDeviceCount(&devices));
    if (devices != 2) {
        std::fprintf(stderr, "multi_device needs two devices (HSASIM_GPUS=2), found %d\n",
                     devices);
        return 2;
    }
    int supported[2] = {-1, -1};
    for (int d = 0; d < 2; ++d) {
        CHECK(hipDeviceGetAttribute(&supported[d], hipDeviceAttributeCooperativeMultiDeviceLaunch,
                                    d));
        hipDeviceProp_t props;
        CHECK(hipGetDeviceProperties(&props, d));
        EXPECT_EQ(props.cooperativeMultiDeviceLaunch, supported[d]);
    }
    EXPECT_EQ(supported[0], supported[1]);
    const bool concurrent = supported[0] == 1;
    std::printf("multi-device cooperative launch: %s\n",
                concurrent ? "supported" : "not supported (devices run one at a time)");
    const hipError_t two_devices_ok = concurrent ? hipSuccess : hipErrorNotSupported;

    // Host memory every device reaches: what the grids exchange and what the host checks.
    Buffers b;
    CHECK(hipHostMalloc(&b.slots, 2 * TOTAL * sizeof(unsigned)));
    CHECK(hipHostMalloc(&b.seed, TOTAL * sizeof(unsigned)));
    CHECK(hipHostMalloc(&b.out, TOTAL * sizeof(unsigned)));
    CHECK(hipHostMalloc(&b.info, 8 * sizeof(unsigned)));
    CHECK(hipHostMalloc(&b.after, TOTAL * sizeof(unsigned)));
    hipStream_t streams[2];
    for (int d = 0; d < 2; ++d) {
        CHECK(hipSetDevice(d));
        CHECK(hipStreamCreate(&streams[d]));
    }
    CHECK(hipSetDevice(0));

    int tail_spin = 0;
    void* args[] = {&b.slots, &b.seed, &b.out, &b.info, &tail_spin};
    auto params = [&](int d) {
        hipLaunchParams p = {};
        p.func = reinterpret_cast<void*>(exchange);
        p.gridDim = dim3(BLOCKS);
        p.blockDim = dim3(BLOCK);
        p.args = args;
        p.sharedMem = 0;
        p.stream = streams[d];
        return p;
    };

    // The exchange, with the default flags and with both syncs off, parts in either order.
    for (unsigned flags : {0u, 3u})
    for (int first : {0, 1}) {
        std::vector<unsigned> seed(TOTAL);
        for (unsigned i = 0; i < TOTAL; ++i) seed[i] = b.seed[i] = i * 5 + flags + first;
        std::memset(b.out, 0, TOTAL * sizeof(unsigned));
        std::memset(b.info, 0xff, 8 * sizeof(unsigned));
        hipLaunchParams list[2] = {params(first), params(1 - first)};
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, flags), two_devices_ok);
        for (int d = 0; d < 2; ++d) CHECK(hipStreamSynchronize(streams[d]));
        if (!concurrent) continue;
        int wrong = wrong_of(b.out, expected(seed));
        EXPECT_EQ(wrong, 0);
        std::printf("exchange (flags %u, device %d first): %u work-items on 2 devices, %d rounds, "
                    "%d wrong\n",
                    flags, first, TOTAL, ROUNDS, wrong);
        for (unsigned g = 0; g < 2; ++g) {
            EXPECT_EQ(b.info[g * 4 + 0], g);
            EXPECT_EQ(b.info[g * 4 + 1], 2);
            EXPECT_EQ(b.info[g * 4 + 2], TOTAL);
            EXPECT_EQ(b.info[g * 4 + 3], g * PER_GRID);
        }
    }

    // Pre-sync: grid 1 starts from seeds that stream 0's earlier (slow) kernel writes.
    // Post-sync: stream 1's next kernel copies what grid 0 writes last (after a long spin).
    if (concurrent) {
        std::vector<unsigned> seed(TOTAL);
        for (unsigned i = 0; i < TOTAL; ++i) seed[i] = 1000 + i;
        std::memset(b.seed, 0, TOTAL * sizeof(unsigned));
        std::memset(b.after, 0, TOTAL * sizeof(unsigned));
        CHECK(hipSetDevice(0));
        slow_seed<<<1, 64, 0, streams[0]>>>(b.seed, 1000, 20000);
        tail_spin = 20000;
        hipLaunchParams list[2] = {params(0), params(1)};
        EXPECT_OK(hipLaunchCooperativeKernelMultiDevice(list, 2, 0));
        tail_spin = 0;
        CHECK(hipSetDevice(1));
        copy<<<TOTAL / 64, 64, 0, streams[1]>>>(b.out, b.after);
        CHECK(hipStreamSynchronize(streams[1]));
        const std::vector<unsigned> want = expected(seed);
        const int wrong = wrong_of(b.after, want);
        EXPECT_EQ(wrong, 0);
        std::printf("pre- and post-sync: %d wrong\n", wrong);
        CHECK(hipStreamSynchronize(streams[0]));
        EXPECT_EQ(wrong_of(b.out, want), 0);
        CHECK(hipSetDevice(0));
    }

    // One part: a multi-grid of one grid, in any mode.
    {
        std::vector<unsigned> seed(PER_GRID);
        for (unsigned i = 0; i < PER_GRID; ++i) seed[i] = b.seed[i] = i + 7;
        hipLaunchParams one = params(1);
        EXPECT_OK(hipLaunchCooperativeKernelMultiDevice(&one, 1, 0));
        CHECK(hipStreamSynchronize(streams[1]));
        EXPECT_EQ(wrong_of(b.out, expected(seed)), 0);
        EXPECT_EQ(b.info[0], 0);
        EXPECT_EQ(b.info[1], 1);
        EXPECT_EQ(b.info[2], PER_GRID);
        EXPECT_EQ(b.info[3], 0);
    }

    // Parts of different sizes, 3 blocks on device 0 and 1 on device 1: each grid's first
    // multi-grid rank is the work-items of the grids before it.
    {
        std::vector<unsigned> seed(PER_GRID);
        for (unsigned i = 0; i < PER_GRID; ++i) seed[i] = b.seed[i] = i * 3 + 1;
        std::memset(b.out, 0, TOTAL * sizeof(unsigned));
        std::memset(b.info, 0xff, 8 * sizeof(unsigned));
        tail_spin = 0;
        hipLaunchParams list[2] = {params(0), params(1)};
        list[0].gridDim = dim3(BLOCKS - 1);
        list[1].gridDim = dim3(1);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0), two_devices_ok);
        for (int d = 0; d < 2; ++d) CHECK(hipStreamSynchronize(streams[d]));
        if (concurrent) {
            EXPECT_EQ(wrong_of(b.out, expected(seed)), 0);
            EXPECT_EQ(b.info[2], PER_GRID);
            EXPECT_EQ(b.info[3], 0);
            EXPECT_EQ(b.info[6], PER_GRID);
            EXPECT_EQ(b.info[7], (BLOCKS - 1) * BLOCK);
        }
    }

    // Errors. Nothing runs: `count` would add 1 per work-item on whichever device it ran.
    {
        unsigned* counter = nullptr;
        CHECK(hipHostMalloc(&counter, sizeof(unsigned)));
        *counter = 0;
        void* cargs[] = {&counter};
        auto cparams = [&](int d, unsigned blocks) {
            hipLaunchParams p = {};
            p.func = reinterpret_cast<void*>(count);
            p.gridDim = dim3(blocks);
            p.blockDim = dim3(64);
            p.args = cargs;
            p.stream = streams[d];
            return p;
        };
        hipLaunchParams list[3] = {cparams(0, 1), cparams(1, 1), cparams(0, 1)};
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(nullptr, 2, 0), hipErrorInvalidValue);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 0, 0), hipErrorInvalidValue);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, -1, 0), hipErrorInvalidDevice);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 3, 0), hipErrorInvalidDevice);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 4), hipErrorInvalidValue);
        // Device 0 twice.
        hipStream_t extra;
        CHECK(hipStreamCreate(&extra));
        list[1].stream = extra;
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0), hipErrorInvalidDevice);
        // The null stream names no device.
        list[1] = cparams(1, 1);
        list[1].stream = nullptr;
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0),
                   hipErrorInvalidResourceHandle);
        // Parts that differ in kernel.
        list[1] = cparams(1, 1);
        list[1].func = reinterpret_cast<void*>(copy);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0), hipErrorInvalidValue);
        // The second part fails its own checks (no arguments): the first does not run either.
        list[1] = cparams(1, 1);
        list[1].args = nullptr;
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0), hipErrorInvalidValue);
        // Too large for the device: nothing runs anywhere.
        int per_cu = 0;
        CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, count, 64, 0));
        hipDeviceProp_t props;
        CHECK(hipGetDeviceProperties(&props, 0));
        const unsigned most = per_cu * props.multiProcessorCount;
        list[0] = cparams(0, most + 1);
        list[1] = cparams(1, most + 1);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0),
                   hipErrorCooperativeLaunchTooLarge);
        EXPECT_OK(hipDeviceSynchronize());
        CHECK(hipSetDevice(1));
        EXPECT_OK(hipDeviceSynchronize());
        CHECK(hipSetDevice(0));
        EXPECT_EQ(*counter, 0);
        // The largest grid on both devices runs.
        list[0] = cparams(0, most);
        list[1] = cparams(1, most);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(list, 2, 0), two_devices_ok);
        for (int d = 0; d < 2; ++d) CHECK(hipStreamSynchronize(streams[d]));
        EXPECT_EQ(*counter, concurrent ? 2 * most * 64 : 0);
        CHECK(hipStreamDestroy(extra));
        CHECK(hipHostFree(counter));
    }

    // A module's kernel on both devices: the module loaded on each.
    const char* path = std::getenv("HIPSHIM_TEST_CODE_OBJECT");
    if (path) {
        std::ifstream f(path, std::ios::binary);
        std::vector<char> image((std::istreambuf_iterator<char>(f)),
                                std::istreambuf_iterator<char>());
        hipModule_t modules[2];
        hipFunctionLaunchParams list[2];
        for (int d = 0; d < 2; ++d) {
            CHECK(hipSetDevice(d));
            CHECK(hipModuleLoadData(&modules[d], image.data()));
            hipFunctionLaunchParams& p = list[d];
            CHECK(hipModuleGetFunction(&p.function, modules[d], "multi_exchange"));
            p.gridDimX = BLOCKS;
            p.gridDimY = p.gridDimZ = 1;
            p.blockDimX = BLOCK;
            p.blockDimY = p.blockDimZ = 1;
            p.sharedMemBytes = 0;
            p.hStream = streams[d];
            p.kernelParams = args;
        }
        CHECK(hipSetDevice(0));
        std::vector<unsigned> seed(TOTAL);
        for (unsigned i = 0; i < TOTAL; ++i) seed[i] = b.seed[i] = i * 11 + 3;
        std::memset(b.out, 0, TOTAL * sizeof(unsigned));
        EXPECT_ERR(hipModuleLaunchCooperativeKernelMultiDevice(list, 2, 0), two_devices_ok);
        EXPECT_ERR(hipModuleLaunchCooperativeKernelMultiDevice(nullptr, 2, 0),
                   hipErrorInvalidValue);
        EXPECT_ERR(hipModuleLaunchCooperativeKernelMultiDevice(list, 0, 0), hipErrorInvalidValue);
        EXPECT_ERR(hipModuleLaunchCooperativeKernelMultiDevice(list, 3, 0), hipErrorInvalidValue);
        for (int d = 0; d < 2; ++d) CHECK(hipStreamSynchronize(streams[d]));
        if (concurrent) {
            const int wrong = wrong_of(b.out, expected(seed));
            EXPECT_EQ(wrong, 0);
            std::printf("module exchange: %d wrong\n", wrong);
        }
        for (int d = 0; d < 2; ++d) CHECK(hipModuleUnload(modules[d]));
    }

    for (int d = 0; d < 2; ++d) CHECK(hipStreamDestroy(streams[d]));
    CHECK(hipHostFree(b.slots));
    CHECK(hipHostFree(b.seed));
    CHECK(hipHostFree(b.out));
    CHECK(hipHostFree(b.info));
    CHECK(hipHostFree(b.after));
    return finish("multi_device");
}
