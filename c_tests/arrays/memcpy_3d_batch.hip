// memcpy_3d_batch: hipMemcpy3DBatchAsync copies 3D boxes between pointers (rows and layers
// of their own lengths, in bytes) and between pointers and arrays (in the array's elements, at
// an offset in it); a bad operation refuses the whole batch, failIdx naming it, and nothing of
// the batch runs.
#include <hip/hip_runtime.h>

#include "../check.h"

static hipMemcpy3DBatchOp pointers(void* src, size_t src_row, size_t src_layer, void* dst,
                                   hipExtent extent) {
    hipMemcpy3DBatchOp op = {};
    op.src.type = hipMemcpyOperandTypePointer;
    op.src.op.ptr.ptr = src;
    op.src.op.ptr.rowLength = src_row;
    op.src.op.ptr.layerHeight = src_layer;
    op.dst.type = hipMemcpyOperandTypePointer;
    op.dst.op.ptr.ptr = dst; // rowLength and layerHeight 0: packed as the extent
    op.extent = extent;
    op.srcAccessOrder = hipMemcpySrcAccessOrderStream;
    return op;
}

int main() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    // Pointer to pointer: a 16 x 3 x 2 byte box out of rows of 20 bytes, layers of 4 rows.
    const size_t SW = 20, SH = 4, SD = 2, W = 16, H = 3, D = 2;
    static unsigned char src_host[SW * SH * SD], got[W * H * D];
    for (size_t i = 0; i < sizeof(src_host); i++) src_host[i] = static_cast<unsigned char>(i * 3 + 1);
    unsigned char *src, *dst, *other;
    CHECK(hipMalloc(&src, sizeof(src_host)));
    CHECK(hipMalloc(&dst, sizeof(got)));
    CHECK(hipMalloc(&other, sizeof(got)));
    CHECK(hipMemcpy(src, src_host, sizeof(src_host), hipMemcpyHostToDevice));
    CHECK(hipMemset(dst, 0, sizeof(got)));
    CHECK(hipMemset(other, 0x77, sizeof(got)));
    hipMemcpy3DBatchOp op = pointers(src, SW, SH, dst, make_hipExtent(W, H, D));
    size_t fail = 5;
    EXPECT_OK(hipMemcpy3DBatchAsync(1, &op, &fail, 0, s));
    EXPECT_TRUE(fail == SIZE_MAX);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(got, dst, sizeof(got), hipMemcpyDeviceToHost));
    int wrong = 0;
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++)
                wrong += got[(z * H + y) * W + x] != src_host[(z * SH + y) * SW + x];
    EXPECT_EQ(wrong, 0);

    // Host memory into a float array at offset (1, 1, 0), then the whole array back out.
    const size_t AW = 8, AH = 4, AD = 2;
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t array;
    CHECK(hipMalloc3DArray(&array, &desc, make_hipExtent(AW, AH, AD), hipArrayDefault));
    static float zeros[AW * AH * AD], box[3 * 2 * 2], back[AW * AH * AD];
    for (size_t i = 0; i < 12; i++) box[i] = 100.0f + i;
    hipMemcpy3DBatchOp two[2] = {};
    two[0].src.type = hipMemcpyOperandTypePointer;
    two[0].src.op.ptr.ptr = zeros;
    two[0].dst.type = hipMemcpyOperandTypeArray;
    two[0].dst.op.array.array = array;
    two[0].extent = make_hipExtent(AW, AH, AD);
    two[0].srcAccessOrder = hipMemcpySrcAccessOrderDuringApiCall;
    two[1].src.type = hipMemcpyOperandTypePointer;
    two[1].src.op.ptr.ptr = box; // packed rows of 3 floats
    two[1].dst.type = hipMemcpyOperandTypeArray;
    two[1].dst.op.array.array = array;
    two[1].dst.op.array.offset = {1, 1, 0};
    two[1].extent = make_hipExtent(3, 2, 2);
    two[1].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    EXPECT_OK(hipMemcpy3DBatchAsync(2, two, &fail, 0, s));
    hipMemcpy3DBatchOp out = {};
    out.src.type = hipMemcpyOperandTypeArray;
    out.src.op.array.array = array;
    out.dst.type = hipMemcpyOperandTypePointer;
    out.dst.op.ptr.ptr = back;
    out.extent = make_hipExtent(AW, AH, AD);
    out.srcAccessOrder = hipMemcpySrcAccessOrderStream;
    EXPECT_OK(hipMemcpy3DBatchAsync(1, &out, &fail, 0, s));
    CHECK(hipStreamSynchronize(s));
    wrong = 0;
    for (size_t z = 0; z < AD; z++)
        for (size_t y = 0; y < AH; y++)
            for (size_t x = 0; x < AW; x++) {
                bool inside = x >= 1 && x < 4 && y >= 1 && y < 3;
                float want = inside ? box[(z * 2 + (y - 1)) * 3 + (x - 1)] : 0.0f;
                wrong += back[(z * AH + y) * AW + x] != want;
            }
    EXPECT_EQ(wrong, 0);

    // Refusals: the second operation is bad, and the first never runs.
    hipMemcpy3DBatchOp bad[2] = {pointers(src, SW, SH, other, make_hipExtent(W, H, D)),
                                 pointers(src, SW, SH, other, make_hipExtent(W, H, D))};
    bad[1].src.type = static_cast<hipMemcpy3DOperandType>(3);
    EXPECT_ERR(hipMemcpy3DBatchAsync(2, bad, &fail, 0, s), hipErrorInvalidValue);
    EXPECT_TRUE(fail == 1);
    bad[1] = pointers(src, 8, SH, other, make_hipExtent(W, H, D)); // rows wider than their length
    EXPECT_ERR(hipMemcpy3DBatchAsync(2, bad, &fail, 0, s), hipErrorInvalidPitchValue);
    EXPECT_TRUE(fail == 1);
    bad[1] = pointers(nullptr, 0, 0, other, make_hipExtent(W, H, D));
    EXPECT_ERR(hipMemcpy3DBatchAsync(2, bad, &fail, 0, s), hipErrorInvalidValue);
    EXPECT_TRUE(fail == 1);
    bad[0].srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
    EXPECT_ERR(hipMemcpy3DBatchAsync(1, bad, &fail, 0, s), hipErrorInvalidValue);
    EXPECT_TRUE(fail == 0);
    bad[0].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    EXPECT_ERR(hipMemcpy3DBatchAsync(0, bad, &fail, 0, s), hipErrorInvalidValue);
    EXPECT_TRUE(fail == SIZE_MAX);
    EXPECT_ERR(hipMemcpy3DBatchAsync(1, bad, &fail, 1, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemcpy3DBatchAsync(1, nullptr, &fail, 0, s), hipErrorInvalidValue);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(got, other, sizeof(got), hipMemcpyDeviceToHost));
    EXPECT_EQ(got[0], 0x77);
    EXPECT_EQ(got[sizeof(got) - 1], 0x77);

    CHECK(hipFreeArray(array));
    CHECK(hipFree(src));
    CHECK(hipFree(dst));
    CHECK(hipFree(other));
    CHECK(hipStreamDestroy(s));
    return finish("memcpy_3d_batch");
}
