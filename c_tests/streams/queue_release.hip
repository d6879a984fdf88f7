// hipshim-test: targets=gfx942
// queue_release: a destroyed stream gives its queue back at once, though the launch record of
// the thread that launched on it (runtime/launch.rs) still holds the stream. Under a
// least-loaded pool each next stream then finds that queue idle and gets it, rather than a
// new one; tests/c_tests_streams.rs reads the assignments from the policy log.
#include "../check.h"

__global__ void touch(int* out) { out[threadIdx.x] = threadIdx.x; }

int main() {
    int* out;
    CHECK(hipMalloc(&out, 64 * sizeof(int)));
    for (int round = 0; round < 3; ++round) {
        hipStream_t stream;
        CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
        touch<<<1, 64, 0, stream>>>(out);
        CHECK(hipGetLastError());
        CHECK(hipStreamSynchronize(stream));
        CHECK(hipStreamDestroy(stream));
    }
    int host[64];
    CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += host[i] != i;
    EXPECT_EQ(wrong, 0);
    CHECK(hipFree(out));
    return finish("queue_release");
}
