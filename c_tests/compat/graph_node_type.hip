// hipGraphNodeGetType answers in the numbering of the program's ABI: ROCm 5 headers number
// kernel 1 ... event record 8, later ones kernel 0 ... event record 7, with memory alloc and
// free at 10 and 11 in both.
#include "../check.h"
#include "abi.h"

__global__ void noop() {}

int main() {
    const int shift = expected_abi() == 5 ? 1 : 0;
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t kernel, memset, empty, host, alloc;
    hipKernelNodeParams k = {};
    k.func = reinterpret_cast<void*>(noop);
    k.gridDim = dim3(1);
    k.blockDim = dim3(1);
    CHECK(hipGraphAddKernelNode(&kernel, g, nullptr, 0, &k));
    int* d = nullptr;
    CHECK(hipMalloc(&d, 64));
    hipMemsetParams m = {};
    m.dst = d;
    m.elementSize = 4;
    m.width = 16;
    m.height = 1;
    m.value = 7;
    CHECK(hipGraphAddMemsetNode(&memset, g, nullptr, 0, &m));
    CHECK(hipGraphAddEmptyNode(&empty, g, nullptr, 0));
    hipHostNodeParams h = {};
    h.fn = [](void*) {};
    CHECK(hipGraphAddHostNode(&host, g, nullptr, 0, &h));
    hipMemAllocNodeParams a = {};
    a.poolProps.allocType = hipMemAllocationTypePinned;
    a.poolProps.location.type = hipMemLocationTypeDevice;
    a.poolProps.location.id = 0;
    a.bytesize = 1024;
    CHECK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &a));

    hipGraphNodeType t;
    CHECK(hipGraphNodeGetType(kernel, &t));
    EXPECT_EQ(t, 0 + shift);
    CHECK(hipGraphNodeGetType(memset, &t));
    EXPECT_EQ(t, 2 + shift);
    CHECK(hipGraphNodeGetType(host, &t));
    EXPECT_EQ(t, 3 + shift);
    CHECK(hipGraphNodeGetType(empty, &t));
    EXPECT_EQ(t, 5 + shift);
    CHECK(hipGraphNodeGetType(alloc, &t));
    EXPECT_EQ(t, 10);
    CHECK(hipGraphDestroy(g));
    CHECK(hipFree(d));
    return finish("graph_node_type");
}
