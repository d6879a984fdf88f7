// An MPI program as HPC codes are written: every rank owns a slice of a 1-D domain on its
// GPU, runs a stencil kernel over it, and swaps the boundary cells with its neighbours
// through host buffers (copy out, MPI_Sendrecv, copy in) each step. Rank 0 gathers the slices
// and compares them with the same steps run on the host over the whole domain. The stencil
// is integer arithmetic (wrapping), so the answer is exact on any device.
//
// Argument `shared` (run with the ranks attached to one device service, so one GPU): rank 0
// also exports a device buffer (hipIpcGetMemHandle), every other rank opens it from the handle
// MPI broadcast and writes its own slot with a kernel, and rank 0 reads every rank's slot back
// (the test checks with the service that the four ranks' queues and IPC attachments were its).
//
// Built and run by cli/tests/mpi.rs (mpirun -np 4).
#include "../check.h"

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

constexpr int CELLS = 4096;  // per rank
constexpr int STEPS = 25;

// x[i] for the cells 1..=n of a slice with one halo cell each side.
__global__ void stencil(const uint32_t* in, uint32_t* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i <= n) out[i] = in[i - 1] + 2u * in[i] + in[i + 1] * 3u + 7u;
}

__global__ void write_slot(uint32_t* slots, int rank) { slots[rank] = 0xC0DE0000u | rank; }

static uint32_t initial(long global_index) {
    return static_cast<uint32_t>(global_index * 2654435761u) ^ 0x5bd1e995u;
}

static bool mpi_ok(int rc, const char* what) {
    if (rc != MPI_SUCCESS) std::fprintf(stderr, "%s failed: %d\n", what, rc);
    return rc == MPI_SUCCESS;
}

static void exchange_halos(uint32_t* slice, int rank, int ranks) {
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
    uint32_t edge[2], halo[2] = {0, 0};  // the domain's own ends stay 0
    CHECK(hipMemcpy(&edge[0], slice + 1, sizeof(uint32_t), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&edge[1], slice + CELLS, sizeof(uint32_t), hipMemcpyDeviceToHost));
    // Send my first cell left while receiving my right halo from the right, and back.
    if (!mpi_ok(MPI_Sendrecv(&edge[0], 1, MPI_UINT32_T, left, 0, &halo[1], 1, MPI_UINT32_T, right,
                             0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Sendrecv left"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (!mpi_ok(MPI_Sendrecv(&edge[1], 1, MPI_UINT32_T, right, 1, &halo[0], 1, MPI_UINT32_T, left,
                             1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Sendrecv right"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    CHECK(hipMemcpy(slice, &halo[0], sizeof(uint32_t), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(slice + CELLS + 1, &halo[1], sizeof(uint32_t), hipMemcpyHostToDevice));
}

static void halo_run(int rank, int ranks) {
    std::vector<uint32_t> host(CELLS + 2, 0);
    for (int i = 1; i <= CELLS; ++i) host[i] = initial(long(rank) * CELLS + i - 1);
    uint32_t *a, *b;
    CHECK(hipMalloc(&a, (CELLS + 2) * sizeof(uint32_t)));
    CHECK(hipMalloc(&b, (CELLS + 2) * sizeof(uint32_t)));
    CHECK(hipMemcpy(a, host.data(), host.size() * sizeof(uint32_t), hipMemcpyHostToDevice));
    for (int step = 0; step < STEPS; ++step) {
        exchange_halos(a, rank, ranks);
        stencil<<<(CELLS + 255) / 256, 256>>>(a, b, CELLS);
        CHECK(hipGetLastError());
        std::swap(a, b);
    }
    CHECK(hipMemcpy(host.data(), a, host.size() * sizeof(uint32_t), hipMemcpyDeviceToHost));
    CHECK(hipFree(a));
    CHECK(hipFree(b));

    std::vector<uint32_t> all(rank == 0 ? size_t(CELLS) * ranks : 0);
    if (!mpi_ok(MPI_Gather(host.data() + 1, CELLS, MPI_UINT32_T, all.data(), CELLS, MPI_UINT32_T,
                           0, MPI_COMM_WORLD),
                "MPI_Gather"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank != 0) return;

    // The same steps on the whole domain, its ends held at 0.
    long total = long(CELLS) * ranks;
    std::vector<uint32_t> u(total + 2, 0), next(total + 2, 0);
    for (long i = 1; i <= total; ++i) u[i] = initial(i - 1);
    for (int step = 0; step < STEPS; ++step) {
        for (long i = 1; i <= total; ++i) next[i] = u[i - 1] + 2u * u[i] + u[i + 1] * 3u + 7u;
        std::swap(u, next);
    }
    long wrong = 0, first = -1;
    for (long i = 0; i < total; ++i) {
        if (all[i] != u[i + 1]) {
            if (first < 0) first = i;
            ++wrong;
        }
    }
    if (wrong) std::fprintf(stderr, "halo: %ld of %ld cells differ, first at %ld\n", wrong, total, first);
    EXPECT_EQ(wrong, 0);
    std::printf("halo: %d ranks x %d cells, %d steps\n", ranks, CELLS, STEPS);
}

static void shared_slots(int rank, int ranks) {
    hipIpcMemHandle_t handle;
    uint32_t* slots = nullptr;
    if (rank == 0) {
        CHECK(hipMalloc(&slots, ranks * sizeof(uint32_t)));
        CHECK(hipMemset(slots, 0, ranks * sizeof(uint32_t)));
        CHECK(hipIpcGetMemHandle(&handle, slots));
    }
    if (!mpi_ok(MPI_Bcast(&handle, sizeof(handle), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank != 0)
        CHECK(hipIpcOpenMemHandle(reinterpret_cast<void**>(&slots), handle,
                                  hipIpcMemLazyEnablePeerAccess));
    write_slot<<<1, 1>>>(slots, rank);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        std::vector<uint32_t> seen(ranks);
        CHECK(hipMemcpy(seen.data(), slots, ranks * sizeof(uint32_t), hipMemcpyDeviceToHost));
        for (int r = 0; r < ranks; ++r) EXPECT_EQ(seen[r], 0xC0DE0000u | r);
        std::printf("shared: %d ranks wrote one buffer on one device\n", ranks);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0 frees only after the others closed
    if (rank != 0) CHECK(hipIpcCloseMemHandle(slots));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(hipFree(slots));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    bool shared = argc > 1 && !std::strcmp(argv[1], "shared");

    int devices = 0;
    CHECK(hipGetDeviceCount(&devices));
    EXPECT_TRUE(devices >= 1);
    CHECK(hipSetDevice(0));
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, 0));
    std::printf("rank %d of %d: %s\n", rank, ranks, prop.gcnArchName);

    halo_run(rank, ranks);
    if (shared) shared_slots(rank, ranks);

    int mine = failures.load(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank != 0) return mine ? 1 : 0;
    if (all != mine) std::fprintf(stderr, "mpi_halo: %d check(s) failed on other ranks\n", all - mine);
    failures += all - mine;
    return finish("mpi_halo");
}
