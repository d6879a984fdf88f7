// Memcpy nodes of any shape: a graph that copies a host box into an array, the array into
// pitched device memory, a kernel that transforms it, and the result back to the host in 3D;
// replayed after hipGraphExecMemcpyNodeSetParams changes the source; GetParams of 3D, 1D and
// driver nodes; the driver form; bad input.
#include "../check.h"

#include <vector>

__global__ void add(int* p, size_t pitch, int w, int h, int d, int by) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    if (x < w && y < h && z < d) {
        int* row = reinterpret_cast<int*>(reinterpret_cast<char*>(p) + (z * h + y) * pitch);
        row[x] += by;
    }
}

int main() {
    const int w = 13, h = 5, d = 3;
    std::vector<int> in(w * h * d), in2(w * h * d), out(w * h * d, 0);
    for (int i = 0; i < w * h * d; ++i) {
        in[i] = i * 3 + 1;
        in2[i] = -i;
    }
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
    hipArray_t array;
    CHECK(hipMalloc3DArray(&array, &desc, make_hipExtent(w, h, d), 0));
    hipPitchedPtr dev;
    CHECK(hipMalloc3D(&dev, make_hipExtent(w * sizeof(int), h, d)));

    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipMemcpy3DParms to_array = {};
    to_array.srcPtr = make_hipPitchedPtr(in.data(), w * sizeof(int), w, h);
    to_array.dstArray = array;
    to_array.extent = make_hipExtent(w, h, d);
    to_array.kind = hipMemcpyHostToDevice;
    hipGraphNode_t n1, n2, n3, n4;
    CHECK(hipGraphAddMemcpyNode(&n1, g, nullptr, 0, &to_array));
    hipMemcpy3DParms to_dev = {};
    to_dev.srcArray = array;
    to_dev.dstPtr = dev;
    to_dev.extent = make_hipExtent(w, h, d);
    to_dev.kind = hipMemcpyDeviceToDevice;
    CHECK(hipGraphAddMemcpyNode(&n2, g, &n1, 1, &to_dev));
    hipKernelNodeParams k = {};
    int iw = w, ih = h, id = d, by = 1000;
    size_t pitch = dev.pitch;
    void* args[] = {&dev.ptr, &pitch, &iw, &ih, &id, &by};
    k.func = reinterpret_cast<void*>(add);
    k.gridDim = dim3(h, d);
    k.blockDim = dim3(64);
    k.kernelParams = args;
    CHECK(hipGraphAddKernelNode(&n3, g, &n2, 1, &k));
    hipMemcpy3DParms back = {};
    back.srcPtr = dev;
    back.dstPtr = make_hipPitchedPtr(out.data(), w * sizeof(int), w, h);
    back.extent = make_hipExtent(w * sizeof(int), h, d);
    back.kind = hipMemcpyDeviceToHost;
    CHECK(hipGraphAddMemcpyNode(&n4, g, &n3, 1, &back));

    hipMemcpy3DParms got = {};
    CHECK(hipGraphMemcpyNodeGetParams(n2, &got));
    EXPECT_TRUE(got.srcArray == array && got.dstPtr.ptr == dev.ptr && got.extent.width == size_t(w));
    hipGraphNodeType type;
    CHECK(hipGraphNodeGetType(n1, &type));
    EXPECT_EQ(type, hipGraphNodeTypeMemcpy);

    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    int wrong = 0;
    for (int i = 0; i < w * h * d; ++i) wrong += out[i] != in[i] + 1000;
    EXPECT_EQ(wrong, 0);

    // A new source for the executable graph only.
    to_array.srcPtr.ptr = in2.data();
    CHECK(hipGraphExecMemcpyNodeSetParams(exec, n1, &to_array));
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    wrong = 0;
    for (int i = 0; i < w * h * d; ++i) wrong += out[i] != in2[i] + 1000;
    EXPECT_EQ(wrong, 0);
    CHECK(hipGraphMemcpyNodeGetParams(n1, &got));
    EXPECT_TRUE(got.srcPtr.ptr == in.data());  // the graph's own node is unchanged

    // A 1D node reads back as one row.
    hipGraphNode_t one;
    CHECK(hipGraphAddMemcpyNode1D(&one, g, nullptr, 0, dev.ptr, in.data(), 64, hipMemcpyHostToDevice));
    CHECK(hipGraphMemcpyNodeGetParams(one, &got));
    EXPECT_TRUE(got.srcPtr.ptr == in.data() && got.dstPtr.ptr == dev.ptr);
    EXPECT_EQ(got.extent.width, 64);
    EXPECT_EQ(got.extent.height, 1);
    EXPECT_EQ(got.kind, hipMemcpyHostToDevice);

    // The driver form: host to pitched device memory, a 2-slice sub-box.
    HIP_MEMCPY3D drv = {};
    drv.srcMemoryType = hipMemoryTypeHost;
    drv.srcHost = in.data();
    drv.srcPitch = w * sizeof(int);
    drv.srcHeight = h;
    drv.dstMemoryType = hipMemoryTypeDevice;
    drv.dstDevice = dev.ptr;
    drv.dstPitch = dev.pitch;
    drv.dstHeight = h;
    drv.WidthInBytes = w * sizeof(int);
    drv.Height = h;
    drv.Depth = 2;
    hipGraph_t g2;
    CHECK(hipGraphCreate(&g2, 0));
    hipGraphNode_t dn;
    CHECK(hipDrvGraphAddMemcpyNode(&dn, g2, nullptr, 0, &drv, nullptr));
    HIP_MEMCPY3D drv_got = {};
    CHECK(hipDrvGraphMemcpyNodeGetParams(dn, &drv_got));
    EXPECT_TRUE(drv_got.srcHost == in.data() && drv_got.Depth == 2);
    EXPECT_ERR(hipGraphMemcpyNodeGetParams(dn, &got), hipErrorInvalidValue);
    hipGraphExec_t e2;
    CHECK(hipGraphInstantiate(&e2, g2, nullptr, nullptr, 0));
    CHECK(hipGraphLaunch(e2, s));
    CHECK(hipStreamSynchronize(s));
    std::vector<int> check(w * h * 2, 0);
    CHECK(hipMemcpy3D(&back));  // pitched device -> host, all 3 slices
    wrong = 0;
    for (int i = 0; i < w * h * 2; ++i) wrong += out[i] != in[i];
    EXPECT_EQ(wrong, 0);

    // Bad input: both an array and a pointer on one side, no parameters.
    hipMemcpy3DParms bad = to_dev;
    bad.srcPtr = dev;
    EXPECT_ERR(hipGraphAddMemcpyNode(&n1, g, nullptr, 0, &bad), hipErrorInvalidValue);
    EXPECT_ERR(hipGraphAddMemcpyNode(&n1, g, nullptr, 0, nullptr), hipErrorInvalidValue);

    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphExecDestroy(e2));
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphDestroy(g2));
    CHECK(hipFreeArray(array));
    CHECK(hipFree(dev.ptr));
    CHECK(hipStreamDestroy(s));
    return finish("memcpy3d");
}
