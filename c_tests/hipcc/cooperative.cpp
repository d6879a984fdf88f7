// Cooperative launches in a program built by Debian's hipcc with AMD's headers
// (<hip/hip_cooperative_groups.h>), run on hipshim and under AMD's own runtime over hsasim
// (tests/existing_binary.rs compares what the two print):
// - hipLaunchCooperativeKernel of a kernel that syncs its grid (this_grid().sync()) over
//   several rounds, each work-group reading what another wrote before the sync;
// - what a kernel sees of its launch through hidden_multigrid_sync_arg: grid_group::is_valid()
//   and multi_grid_group::is_valid() in a cooperative and in an ordinary launch;
// - with two devices (HSASIM_GPUS=2), hipLaunchCooperativeKernelMultiDevice of a kernel that
//   syncs both grids (this_multi_grid().sync()) and reads the other device's values, with the
//   multi-grid's rank, count and size.
// ROCm 5.2's cooperative groups header needs hip_runtime.h first.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                              \
    do {                                                                                         \
        hipError_t e_ = (call);                                                                  \
        if (e_ != hipSuccess) {                                                                  \
            std::printf("%s failed: %s\n", #call, hipGetErrorName(e_));                          \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

constexpr int ROUNDS = 4;

__global__ void rounds(unsigned* buffers, unsigned* out) {
    cg::grid_group grid = cg::this_grid();
    const unsigned n = grid.size(), me = grid.thread_rank();
    unsigned acc = me;
    for (int r = 0; r < ROUNDS; ++r) {
        unsigned* buf = buffers + (r % 2) * n;
        buf[me] = acc * 7u + r;
        grid.sync();
        acc = acc * 3u + buf[(me + blockDim.x) % n];
    }
    out[me] = acc;
}

__global__ void validity(int* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = cg::this_grid().is_valid();
        out[1] = cg::this_multi_grid().is_valid();
    }
}

__global__ void exchange(unsigned* slots, unsigned* out, unsigned* info) {
    cg::multi_grid_group mg = cg::this_multi_grid();
    const unsigned n = mg.size(), me = mg.thread_rank();
    unsigned acc = me + 1;
    for (int r = 0; r < ROUNDS; ++r) {
        unsigned* buf = slots + (r % 2) * n;
        buf[me] = acc * 7u + r;
        mg.sync();
        acc = acc * 3u + buf[(me + n / 2) % n];
    }
    out[me] = acc;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned* o = info + mg.grid_rank() * 4;
        o[0] = mg.grid_rank();
        o[1] = mg.num_grids();
        o[2] = mg.size();
        o[3] = mg.thread_rank();
    }
}

int main() {
    // Grid sync: 4 work-groups of 64.
    {
        const unsigned blocks = 4, block = 64, n = blocks * block;
        unsigned *buffers, *out;
        CHECK(hipMalloc(&buffers, 2 * n * sizeof(unsigned)));
        CHECK(hipMalloc(&out, n * sizeof(unsigned)));
        void* args[] = {&buffers, &out};
        CHECK(hipLaunchCooperativeKernel(reinterpret_cast<void*>(rounds), dim3(blocks),
                                         dim3(block), args, 0, nullptr));
        std::vector<unsigned> got(n);
        CHECK(hipMemcpy(got.data(), out, n * sizeof(unsigned), hipMemcpyDeviceToHost));
        std::vector<unsigned> acc(n), buf(n);
        for (unsigned i = 0; i < n; ++i) acc[i] = i;
        for (int r = 0; r < ROUNDS; ++r) {
            for (unsigned i = 0; i < n; ++i) buf[i] = acc[i] * 7u + r;
            for (unsigned i = 0; i < n; ++i) acc[i] = acc[i] * 3u + buf[(i + block) % n];
        }
        int wrong = 0;
        for (unsigned i = 0; i < n; ++i) wrong += got[i] != acc[i];
        std::printf("grid sync: %u work-groups of %u, %d rounds, %d wrong\n", blocks, block,
                    ROUNDS, wrong);
        CHECK(hipFree(buffers));
        CHECK(hipFree(out));
    }

    // What the kernel sees of its launch.
    {
        int* flags;
        CHECK(hipMalloc(&flags, 2 * sizeof(int)));
        void* args[] = {&flags};
        int host[2];
        CHECK(hipLaunchCooperativeKernel(reinterpret_cast<void*>(validity), dim3(2), dim3(64),
                                         args, 0, nullptr));
        CHECK(hipMemcpy(host, flags, sizeof host, hipMemcpyDeviceToHost));
        std::printf("cooperative launch: grid valid %d, multi-grid valid %d\n", host[0], host[1]);
        hipLaunchKernelGGL(validity, dim3(2), dim3(64), 0, 0, flags);
        CHECK(hipMemcpy(host, flags, sizeof host, hipMemcpyDeviceToHost));
        std::printf("ordinary launch: grid valid %d, multi-grid valid %d\n", host[0], host[1]);
        CHECK(hipFree(flags));
    }

    int devices = 0;
    CHECK(hipGetDeviceCount(&devices));
    int multi = -1;
    CHECK(hipDeviceGetAttribute(&multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
    std::printf("devices %d, multi-device cooperative launch %d\n", devices, multi);
    if (devices >= 2 && multi == 1) {
        const unsigned blocks = 2, block = 64, total = 2 * blocks * block;
        unsigned *slots, *out, *info;
        CHECK(hipHostMalloc(&slots, 2 * total * sizeof(unsigned)));
        CHECK(hipHostMalloc(&out, total * sizeof(unsigned)));
        CHECK(hipHostMalloc(&info, 8 * sizeof(unsigned)));
        std::memset(out, 0, total * sizeof(unsigned));
        hipStream_t streams[2];
        for (int d = 0; d < 2; ++d) {
            CHECK(hipSetDevice(d));
            CHECK(hipStreamCreate(&streams[d]));
        }
        CHECK(hipSetDevice(0));
        void* args[] = {&slots, &out, &info};
        hipLaunchParams list[2];
        for (int d = 0; d < 2; ++d) {
            list[d].func = reinterpret_cast<void*>(exchange);
            list[d].gridDim = dim3(blocks);
            list[d].blockDim = dim3(block);
            list[d].args = args;
            list[d].sharedMem = 0;
            list[d].stream = streams[d];
        }
        const hipError_t launched = hipLaunchCooperativeKernelMultiDevice(list, 2, 0);
        std::printf("multi-device launch: %s\n", hipGetErrorName(launched));
        if (launched == hipSuccess) {
            for (int d = 0; d < 2; ++d) CHECK(hipStreamSynchronize(streams[d]));
            std::vector<unsigned> acc(total), buf(total);
            for (unsigned i = 0; i < total; ++i) acc[i] = i + 1;
            for (int r = 0; r < ROUNDS; ++r) {
                for (unsigned i = 0; i < total; ++i) buf[i] = acc[i] * 7u + r;
                for (unsigned i = 0; i < total; ++i)
                    acc[i] = acc[i] * 3u + buf[(i + total / 2) % total];
            }
            int wrong = 0;
            for (unsigned i = 0; i < total; ++i) wrong += out[i] != acc[i];
            std::printf("multi-grid sync: %u work-items on 2 devices, %d wrong\n", total, wrong);
            for (int g = 0; g < 2; ++g)
                std::printf("grid %d: rank %u of %u, size %u, first thread rank %u\n", g,
                            info[g * 4], info[g * 4 + 1], info[g * 4 + 2], info[g * 4 + 3]);
        }
        for (int d = 0; d < 2; ++d) CHECK(hipStreamDestroy(streams[d]));
        CHECK(hipHostFree(slots));
        CHECK(hipHostFree(out));
        CHECK(hipHostFree(info));
    }
    std::printf("cooperative: done\n");
    return 0;
}
