// A 3D copy whose box runs past the end of its device allocation is refused with
// hipErrorInvalidValue before any byte moves (synchronous and stream-ordered, either side),
// instead of taking the slices beyond the allocation for host memory and touching device
// memory from the CPU.
#include "../check.h"

#include <vector>

int main() {
    const size_t W = 64, H = 4, D = 4;
    // Slices H + 1 rows apart (so the box's slices are copied one by one), and device memory
    // for two of them: a box of four has slices 2 and 3 wholly beyond the end.
    const size_t Y = H + 1;
    const size_t bytes = W * Y + W * H;
    char* dev;
    CHECK(hipMalloc(&dev, bytes));
    std::vector<char> host(W * H * D * 2, 7);

    hipMemcpy3DParms up = {};
    up.srcPtr = make_hipPitchedPtr(host.data(), W * 2, W, H);
    up.dstPtr = make_hipPitchedPtr(dev, W, W, Y);
    up.extent = make_hipExtent(W, H, D);
    up.kind = hipMemcpyHostToDevice;
    EXPECT_ERR(hipMemcpy3D(&up), hipErrorInvalidValue);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    EXPECT_ERR(hipMemcpy3DAsync(&up, s), hipErrorInvalidValue);
    up.kind = hipMemcpyDefault;
    EXPECT_ERR(hipMemcpy3DAsync(&up, s), hipErrorInvalidValue);

    hipMemcpy3DParms down = {};
    down.srcPtr = make_hipPitchedPtr(dev, W, W, Y);
    down.dstPtr = make_hipPitchedPtr(host.data(), W * 2, W, H);
    down.extent = make_hipExtent(W, H, D);
    down.kind = hipMemcpyDeviceToHost;
    EXPECT_ERR(hipMemcpy3D(&down), hipErrorInvalidValue);

    // The same box cut to the allocation still copies.
    up.extent = make_hipExtent(W, H, 2);
    up.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3DAsync(&up, s));
    CHECK(hipStreamSynchronize(s));
    std::vector<char> back(bytes, 0);
    CHECK(hipMemcpy(back.data(), dev, back.size(), hipMemcpyDeviceToHost));
    EXPECT_EQ(back[0], 7);
    EXPECT_EQ(back[bytes - 1], 7);

    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dev));
    return finish("copy3d_overrun");
}
