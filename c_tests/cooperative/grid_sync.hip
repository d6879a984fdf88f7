// grid_sync: cooperative launches (hipLaunchCooperativeKernel) and cooperative_groups.
// - the device reports cooperative launch support (attribute and property);
// - grid-wide sync across several work-groups, for several rounds: each work-group reads what
//   other work-groups wrote before the sync, so the result is wrong without the barrier;
// - grid_group::is_valid() is true in a cooperative launch and false in an ordinary one;
// - thread_block and thread_block_tile helpers;
// - the largest grid that fits at once launches, one more block is
//   hipErrorCooperativeLaunchTooLarge;
// - a cooperative launch stays in its stream's order with earlier and later work;
// - a multi-device cooperative launch of one part runs, after its checks.
// Run by tests/c_tests_cooperative.rs on both targets in both hsasim modes.
#include "../check.h"

#include <hip/hip_cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

constexpr int ROUNDS = 6;

// Round r: every work-item publishes a value, the grid syncs, then each reads the value of the
// work-item one block further on (another work-group) and folds it into its own.
__global__ void rounds(unsigned* buffers, unsigned* out) {
    cg::grid_group grid = cg::this_grid();
    const unsigned n = grid.size();
    const unsigned me = grid.thread_rank();
    unsigned acc = me;
    for (int r = 0; r < ROUNDS; ++r) {
        unsigned* buf = buffers + (r % 2) * n;
        buf[me] = acc * 7u + r;
        grid.sync();
        acc = acc * 3u + buf[(me + blockDim.x) % n];
    }
    out[me] = acc;
}

static std::vector<unsigned> expected_rounds(unsigned n, unsigned block) {
    std::vector<unsigned> acc(n), buf(n);
    for (unsigned i = 0; i < n; ++i) acc[i] = i;
    for (int r = 0; r < ROUNDS; ++r) {
        for (unsigned i = 0; i < n; ++i) buf[i] = acc[i] * 7u + r;
        for (unsigned i = 0; i < n; ++i) acc[i] = acc[i] * 3u + buf[(i + block) % n];
    }
    return acc;
}

__global__ void validity(int* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = cg::this_grid().is_valid();
        out[1] = cg::this_multi_grid().is_valid();
    }
}

// Per work-item: block helpers and a 16-wide tile's shuffles.
__global__ void helpers(unsigned* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    auto tile = cg::tiled_partition<16>(block);
    const unsigned rank = block.thread_rank();
    unsigned* o = out + grid.thread_rank() * 8;
    o[0] = block.size();
    o[1] = rank;
    o[2] = block.group_index().x;
    o[3] = block.thread_index().y;
    o[4] = block.group_dim().x * 100 + block.group_dim().y;
    o[5] = tile.thread_rank();
    o[6] = tile.shfl(rank, 3);          // rank of the tile's 4th work-item
    o[7] = tile.shfl_xor(rank, 1) + cg::group_size(tile) * 1000;
    block.sync();
    tile.sync();
}

__global__ void touch(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

// Ordering: waits a while, then writes `value` everywhere (the cooperative kernel after it
// must see it).
__global__ void slow_fill(unsigned* data, unsigned value, int spin) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile unsigned sink = 0;
    for (int k = 0; k < spin; ++k) sink = sink + k;
    data[i] = value;
}

// Every work-item adds its right neighbour block's value after a grid sync.
__global__ void sum_neighbour(const unsigned* data, unsigned* out) {
    cg::grid_group grid = cg::this_grid();
    const unsigned n = grid.size(), me = grid.thread_rank();
    unsigned v = data[me];
    out[me] = v;
    grid.sync();
    const unsigned neighbour = out[(me + blockDim.x) % n];
    grid.sync(); // every read is done before any work-item overwrites its element
    out[me] = v + neighbour;
}

__global__ void add_one(unsigned* data) { data[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

// Holds its stream until the host sets *flag (pinned host memory): the work after it is
// certainly pending when it is submitted, whatever the timing.
__global__ void wait_flag(const volatile int* flag) {
    while (*flag == 0) __builtin_amdgcn_s_sleep(1);
}

int main() {
    int value = -1;
    CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeCooperativeLaunch, 0));
    EXPECT_EQ(value, 1);
    hipDeviceProp_t props;
    CHECK(hipGetDeviceProperties(&props, 0));
    EXPECT_EQ(props.cooperativeLaunch, 1);

    // Grid-wide sync, 8 work-groups of 64, and 4 of 256 (4 waves each); launched by
    // hipLaunchCooperativeKernel and by hipLaunchKernelExC with the cooperative attribute.
    for (int via_attribute : {0, 1})
    for (unsigned block : {64u, 256u}) {
        const unsigned blocks = block == 64 ? 8 : 4, n = blocks * block;
        unsigned *buffers = nullptr, *out = nullptr;
        CHECK(hipMalloc(&buffers, 2 * n * sizeof(unsigned)));
        CHECK(hipMalloc(&out, n * sizeof(unsigned)));
        CHECK(hipMemset(buffers, 0, 2 * n * sizeof(unsigned)));
        void* args[] = {&buffers, &out};
        if (via_attribute) {
            hipLaunchAttribute cooperative = {};
            cooperative.id = hipLaunchAttributeCooperative;
            cooperative.val.cooperative = 1;
            hipLaunchConfig_t config = {};
            config.gridDim = dim3(blocks);
            config.blockDim = dim3(block);
            config.attrs = &cooperative;
            config.numAttrs = 1;
            EXPECT_OK(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(rounds), args));
        } else {
            EXPECT_OK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(rounds),
                                                 dim3(blocks), dim3(block), args, 0, nullptr));
        }
        std::vector<unsigned> got(n);
        CHECK(hipMemcpy(got.data(), out, n * sizeof(unsigned), hipMemcpyDeviceToHost));
        std::vector<unsigned> want = expected_rounds(n, block);
        int wrong = 0;
        for (unsigned i = 0; i < n; ++i) wrong += got[i] != want[i];
        EXPECT_EQ(wrong, 0);
        std::printf("grid sync%s: %u work-groups of %u, %d rounds, %d wrong\n",
                    via_attribute ? " (hipLaunchKernelExC)" : "", blocks, block, ROUNDS, wrong);
        CHECK(hipFree(buffers));
        CHECK(hipFree(out));
    }

    // is_valid: cooperative launch vs ordinary launch.
    int* flags = nullptr;
    CHECK(hipMalloc(&flags, 4 * sizeof(int)));
    CHECK(hipMemset(flags, 0x7f, 4 * sizeof(int)));
    void* vargs[] = {&flags};
    EXPECT_OK(hipLaunchCooperativeKernel(validity, dim3(2), dim3(64), vargs, 0, nullptr));
    int host_flags[2];
    CHECK(hipMemcpy(host_flags, flags, sizeof host_flags, hipMemcpyDeviceToHost));
    EXPECT_EQ(host_flags[0], 1);
    EXPECT_EQ(host_flags[1], 0);
    validity<<<2, 64>>>(flags);
    CHECK(hipMemcpy(host_flags, flags, sizeof host_flags, hipMemcpyDeviceToHost));
    EXPECT_EQ(host_flags[0], 0);
    EXPECT_EQ(host_flags[1], 0);

    // thread_block and tile helpers: 2 blocks of 32x2.
    {
        const unsigned n = 2 * 64;
        unsigned* out = nullptr;
        CHECK(hipMalloc(&out, n * 8 * sizeof(unsigned)));
        void* hargs[] = {&out};
        EXPECT_OK(hipLaunchCooperativeKernel(helpers, dim3(2), dim3(32, 2), hargs, 0, nullptr));
        std::vector<unsigned> got(n * 8);
        CHECK(hipMemcpy(got.data(), out, got.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
        int wrong = 0;
        for (unsigned t = 0; t < n; ++t) {
            const unsigned* o = &got[t * 8];
            const unsigned rank = t % 64, b = t / 64;
            const unsigned want[8] = {64, rank, b, rank / 32, 3202, rank % 16,
                                      (rank & ~15u) + 3, (rank ^ 1) + 16000};
            for (int k = 0; k < 8; ++k) {
                if (o[k] != want[k] && wrong++ < 5)
                    std::fprintf(stderr, "helpers: item %u field %d: %u, want %u\n", t, k, o[k],
                                 want[k]);
            }
        }
        EXPECT_EQ(wrong, 0);
        CHECK(hipFree(out));
    }

    // The largest grid that is resident at once launches; one block more is too large.
    {
        int per_cu = 0;
        CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, touch, 64, 0));
        const int most = per_cu * props.multiProcessorCount;
        std::printf("cooperative limit: %d blocks of 64 (%d per CU, %d CUs)\n", most, per_cu,
                    props.multiProcessorCount);
        EXPECT_TRUE(most > 0);
        int* out = nullptr;
        CHECK(hipMalloc(&out, (most + 1) * 64 * sizeof(int)));
        CHECK(hipMemset(out, 0, (most + 1) * 64 * sizeof(int)));
        void* targs[] = {&out};
        EXPECT_OK(hipLaunchCooperativeKernel(touch, dim3(most), dim3(64), targs, 0, nullptr));
        EXPECT_ERR(hipLaunchCooperativeKernel(touch, dim3(most + 1), dim3(64), targs, 0, nullptr),
                   hipErrorCooperativeLaunchTooLarge);
        // Dynamic LDS counts: 40 KiB each leaves one block per CU.
        EXPECT_ERR(hipLaunchCooperativeKernel(touch, dim3(props.multiProcessorCount + 1),
                                              dim3(64), targs, 40 << 10, nullptr),
                   hipErrorCooperativeLaunchTooLarge);
        EXPECT_OK(hipLaunchCooperativeKernel(touch, dim3(props.multiProcessorCount), dim3(64),
                                             targs, 40 << 10, nullptr));
        // Invalid configurations are refused as for hipLaunchKernel.
        EXPECT_ERR(hipLaunchCooperativeKernel(touch, dim3(0), dim3(64), targs, 0, nullptr),
                   hipErrorInvalidConfiguration);
        EXPECT_ERR(hipLaunchCooperativeKernel(touch, dim3(1), dim3(2048), targs, 0, nullptr),
                   hipErrorInvalidConfiguration);
        EXPECT_ERR(hipLaunchCooperativeKernel(nullptr, dim3(1), dim3(64), targs, 0, nullptr),
                   hipErrorInvalidDeviceFunction);
        std::vector<int> got((most + 1) * 64);
        CHECK(hipMemcpy(got.data(), out, got.size() * sizeof(int), hipMemcpyDeviceToHost));
        int wrong = 0;
        for (int i = 0; i < (most + 1) * 64; ++i) {
            int want = (i < most * 64 ? 1 : 0) + (i < props.multiProcessorCount * 64 ? 1 : 0);
            wrong += got[i] != want;
        }
        EXPECT_EQ(wrong, 0);
        CHECK(hipFree(out));
    }

    // Stream order: slow fill -> cooperative kernel -> add one, three times, behind a kernel
    // that holds the stream until the host lets it go, on a created stream and on the null
    // stream, then an event after all of it.
    for (int use_null = 0; use_null < 2; ++use_null) {
        hipStream_t stream = nullptr;
        if (!use_null) CHECK(hipStreamCreate(&stream));
        const unsigned blocks = 4, block = 64, n = blocks * block;
        unsigned *data = nullptr, *out = nullptr;
        CHECK(hipMalloc(&data, n * sizeof(unsigned)));
        CHECK(hipMalloc(&out, n * sizeof(unsigned)));
        CHECK(hipMemset(out, 0, n * sizeof(unsigned)));
        hipEvent_t done;
        CHECK(hipEventCreate(&done));
        int* gate = nullptr;
        CHECK(hipHostMalloc(&gate, sizeof(int), 0));
        *gate = 0;
        wait_flag<<<1, 64, 0, stream>>>(gate);
        for (unsigned iteration = 1; iteration <= 3; ++iteration) {
            slow_fill<<<blocks, block, 0, stream>>>(data, iteration * 10, 2000);
            void* sargs[] = {&data, &out};
            EXPECT_OK(hipLaunchCooperativeKernel(sum_neighbour, dim3(blocks), dim3(block), sargs,
                                                 0, stream));
            add_one<<<blocks, block, 0, stream>>>(out);
        }
        CHECK(hipEventRecord(done, stream));
        __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
        EXPECT_OK(hipEventSynchronize(done));
        EXPECT_OK(hipStreamQuery(stream));
        std::vector<unsigned> got(n);
        CHECK(hipMemcpy(got.data(), out, n * sizeof(unsigned), hipMemcpyDeviceToHost));
        int wrong = 0;
        for (unsigned i = 0; i < n; ++i) wrong += got[i] != 61;
        EXPECT_EQ(wrong, 0);
        std::printf("stream order (%s stream): %d wrong\n", use_null ? "null" : "created", wrong);
        CHECK(hipEventDestroy(done));
        CHECK(hipHostFree(gate));
        CHECK(hipFree(data));
        CHECK(hipFree(out));
        if (stream) CHECK(hipStreamDestroy(stream));
    }

    // A multi-device cooperative launch of one part (c_tests/cooperative/multi_device.hip
    // covers two devices): the attribute says it is supported, the checks hold.
    CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
    EXPECT_EQ(value, 1);
    EXPECT_EQ(props.cooperativeMultiDeviceLaunch, 1);
    EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(nullptr, 1, 0), hipErrorInvalidValue);
    {
        int* out = nullptr;
        CHECK(hipMalloc(&out, 64 * sizeof(int)));
        CHECK(hipMemset(out, 0, 64 * sizeof(int)));
        hipStream_t stream;
        CHECK(hipStreamCreate(&stream));
        void* margs[] = {&out};
        hipLaunchParams params = {reinterpret_cast<void*>(touch), dim3(1), dim3(64), margs, 0,
                                  stream};
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(&params, 0, 0), hipErrorInvalidValue);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(&params, 2, 0), hipErrorInvalidDevice);
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(&params, 1, 4), hipErrorInvalidValue);
        params.stream = nullptr;
        EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(&params, 1, 0),
                   hipErrorInvalidResourceHandle);
        params.stream = stream;
        EXPECT_OK(hipLaunchCooperativeKernelMultiDevice(&params, 1, 0));
        CHECK(hipStreamSynchronize(stream));
        int got[64];
        CHECK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
        int wrong = 0;
        for (int i = 0; i < 64; ++i) wrong += got[i] != 1;
        EXPECT_EQ(wrong, 0);
        CHECK(hipStreamDestroy(stream));
        CHECK(hipFree(out));
    }

    EXPECT_OK(hipDeviceSynchronize());
    return finish("grid_sync");
}
