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
