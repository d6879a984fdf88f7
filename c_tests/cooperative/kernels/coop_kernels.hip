// Device code that c_tests/cooperative/module.hip loads as a module
// (tests/c_tests_cooperative.rs builds it into a code object).
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

// out[i] = data[i] + data of the same item one block further on, read after a grid sync.
extern "C" __global__ void neighbour_sum(const unsigned* data, unsigned* out) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const unsigned n = grid.size(), me = grid.thread_rank();
    out[me] = data[me] * 2u;
    grid.sync();
    const unsigned neighbour = out[(me + blockDim.x) % n];
    grid.sync(); // every read is done before any work-item overwrites its element
    out[me] = data[me] + neighbour;
}

// What c_tests/cooperative/multi_device.hip's `exchange` does, as a module's kernel: over four
// rounds each work-item publishes a value, the multi-grid syncs, and each reads the value of the
// work-item half the multi-grid away (on the other device).
extern "C" __global__ void multi_exchange(unsigned* slots, const unsigned* seed, unsigned* out,
                                          unsigned* info, int tail_spin) {
    cooperative_groups::multi_grid_group mg = cooperative_groups::this_multi_grid();
    const unsigned n = mg.size(), me = mg.thread_rank();
    unsigned acc = seed[me];
    for (int r = 0; r < 4; ++r) {
        unsigned* buf = slots + (r % 2) * n;
        buf[me] = acc * 7u + r;
        mg.sync();
        acc = acc * 3u + buf[(me + n / 2) % n];
    }
    (void)tail_spin;
    out[me] = acc;
    if (cooperative_groups::this_grid().thread_rank() == 0) info[mg.grid_rank()] = mg.num_grids();
}
