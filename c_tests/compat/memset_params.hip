// hipMemsetParams in the layout of the program's ABI: ROCm 5 and 6 order it dst,
// elementSize, height, pitch, value, width (48 bytes); ROCm 7 reordered it as CUDA's
// (dst, pitch, value, elementSize, width, height: 40 bytes, HIP_MEMSET_NODE_PARAMS'
// layout). The program fills the structure as one built for the expected ABI would, for every
// call that reads or writes it: hipGraphAddMemsetNode, hipGraphMemsetNodeGet/SetParams,
// hipGraphExecMemsetNodeSetParams and the generic hipGraphAddNode; hipDrvGraphAddMemsetNode
// takes the 40-byte layout under every ABI.
#include "../check.h"
#include "abi.h"

#include <cstring>
#include <vector>

// ROCm 7's hipMemsetParams.
struct MemsetParams7 {
    void* dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
};
static_assert(sizeof(MemsetParams7) == 40, "ROCm 7's layout");
static_assert(sizeof(hipMemsetParams) == 48, "ROCm 5/6's layout");

// The parameters, in the expected ABI's layout, in `out` (room for either).
struct Fill {
    void* dst;
    size_t pitch, width, height;
    unsigned value, element;
};

static void put(bool rocm7, const Fill& f, void* out) {
    if (rocm7) {
        MemsetParams7 p = {f.dst, f.pitch, f.value, f.element, f.width, f.height};
        std::memcpy(out, &p, sizeof p);
    } else {
        hipMemsetParams p = {};
        p.dst = f.dst;
        p.elementSize = f.element;
        p.height = f.height;
        p.pitch = f.pitch;
        p.value = f.value;
        p.width = f.width;
        std::memcpy(out, &p, sizeof p);
    }
}

static Fill get(bool rocm7, const void* in) {
    if (rocm7) {
        MemsetParams7 p;
        std::memcpy(&p, in, sizeof p);
        return {p.dst, p.pitch, p.width, p.height, p.value, p.elementSize};
    }
    hipMemsetParams p;
    std::memcpy(&p, in, sizeof p);
    return {p.dst, p.pitch, p.width, p.height, p.value, p.elementSize};
}

static const size_t kPitch = 128, kRows = 3, kWidth = 16; // 16 ints a row

// Runs `exec` and checks that the rows hold `value` in their first kWidth ints and the rest
// of each row is untouched (zero).
static void expect_filled(hipGraphExec_t exec, unsigned* dev, unsigned value, int line) {
    CHECK(hipMemset(dev, 0, kPitch * kRows));
    CHECK(hipGraphLaunch(exec, 0));
    CHECK(hipStreamSynchronize(0));
    std::vector<unsigned> host(kPitch * kRows / 4);
    CHECK(hipMemcpy(host.data(), dev, kPitch * kRows, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (size_t r = 0; r < kRows; ++r)
        for (size_t i = 0; i < kPitch / 4; ++i)
            wrong += host[r * kPitch / 4 + i] != (i < kWidth ? value : 0u);
    if (wrong) std::fprintf(stderr, "line %d: %d words wrong\n", line, wrong);
    EXPECT_EQ(wrong, 0);
}

int main() {
    const bool rocm7 = expected_abi() >= 7;
    std::printf("memset_params: the ROCm %s layout\n", rocm7 ? "7" : "5/6");
    unsigned* dev = nullptr;
    CHECK(hipMalloc(&dev, kPitch * kRows));
    alignas(8) unsigned char raw[48];

    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t node;
    std::memset(raw, 0xee, sizeof raw);
    put(rocm7, {dev, kPitch, kWidth, kRows, 0xabcd1234u, 4}, raw);
    EXPECT_OK(hipGraphAddMemsetNode(&node, g, nullptr, 0,
                                    reinterpret_cast<const hipMemsetParams*>(raw)));

    // Read back in the same layout.
    std::memset(raw, 0, sizeof raw);
    EXPECT_OK(hipGraphMemsetNodeGetParams(node, reinterpret_cast<hipMemsetParams*>(raw)));
    Fill f = get(rocm7, raw);
    EXPECT_TRUE(f.dst == dev && f.pitch == kPitch && f.width == kWidth && f.height == kRows &&
                f.value == 0xabcd1234u && f.element == 4);

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    expect_filled(exec, dev, 0xabcd1234u, __LINE__);

    put(rocm7, {dev, kPitch, kWidth, kRows, 0x01020304u, 4}, raw);
    EXPECT_OK(hipGraphExecMemsetNodeSetParams(exec, node,
                                              reinterpret_cast<const hipMemsetParams*>(raw)));
    expect_filled(exec, dev, 0x01020304u, __LINE__);
    CHECK(hipGraphExecDestroy(exec));

    put(rocm7, {dev, kPitch, kWidth, kRows, 0x55aa55aau, 4}, raw);
    EXPECT_OK(hipGraphMemsetNodeSetParams(node, reinterpret_cast<const hipMemsetParams*>(raw)));
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    expect_filled(exec, dev, 0x55aa55aau, __LINE__);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));

    // The generic node parameters embed the structure.
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNodeParams generic = {};
    generic.type = hipGraphNodeTypeMemset;
    put(rocm7, {dev, kPitch, kWidth, kRows, 0x0badf00du, 4}, &generic.memset);
    EXPECT_OK(hipGraphAddNode(&node, g, nullptr, 0, &generic));
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    expect_filled(exec, dev, 0x0badf00du, __LINE__);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));

    // The driver form: the 40-byte layout whatever the ABI.
    CHECK(hipGraphCreate(&g, 0));
    HIP_MEMSET_NODE_PARAMS drv = {};
    drv.dst = dev;
    drv.pitch = kPitch;
    drv.value = 0x77777777u;
    drv.elementSize = 4;
    drv.width = kWidth;
    drv.height = kRows;
    hipCtx_t ctx = nullptr;
    CHECK(hipCtxGetCurrent(&ctx));
    EXPECT_OK(hipDrvGraphAddMemsetNode(&node, g, nullptr, 0, &drv, ctx));
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    expect_filled(exec, dev, 0x77777777u, __LINE__);
    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(g));

    CHECK(hipFree(dev));
    return finish("memset_params");
}
