// cross_lane: DPP and ds_swizzle through clang's builtins (row shifts and
// rotates, quad permutes, row mirror, wave shifts, broadcasts; swizzle in
// bit-mask and quad-permute modes), readlane/readfirstlane, and the clocks
// (clock64 and wall_clock64 never run backwards). Each lane's result is
// computed on the host from the ISA's definition of the control.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t err_ = (call);                                                      \
        if (err_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                         hipGetErrorName(err_));                                       \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)
#define DPP(ctrl) __builtin_amdgcn_update_dpp(-1, v, ctrl, 0xf, 0xf, false)

__global__ void cross(const int* in, int* out, long long* clocks) {
    int l = threadIdx.x;
    int v = in[l];
    int* o = out + l * 12;
    o[0] = DPP(0x1b);          // quad_perm [3,2,1,0]
    o[1] = DPP(0x101);         // row_shl:1 (lanes with no source keep old = -1)
    o[2] = DPP(0x111 + 2);     // row_shr:3
    o[3] = DPP(0x121 + 3);     // row_ror:4
    o[4] = DPP(0x140);         // row_mirror
    o[5] = DPP(0x141);         // row_half_mirror
    o[6] = DPP(0x130);         // wave_shl:1
    o[7] = DPP(0x142);         // row_bcast:15
    // Swizzle, bit-mask mode: offset = and_mask | or_mask << 5 | xor_mask << 10.
    o[8] = __builtin_amdgcn_ds_swizzle(v, 0x1f | (0 << 5) | (1 << 10)); // swap neighbours
    // Swizzle, quad-permute mode (bit 15): each quad picks lanes [1,0,3,2].
    o[9] = __builtin_amdgcn_ds_swizzle(v, 0x8000 | 1 | (0 << 2) | (3 << 4) | (2 << 6));
    o[10] = __builtin_amdgcn_readlane(v, 37);
    o[11] = __builtin_amdgcn_readfirstlane(v);
    long long t0 = clock64(), w0 = wall_clock64();
    int spin = v;
    for (int i = 0; i < 100; ++i) spin = spin * 3 + 1;
    long long t1 = clock64(), w1 = wall_clock64();
    if (l == 0) {
        clocks[0] = t0;
        clocks[1] = t1 + (spin & 0);
        clocks[2] = w0;
        clocks[3] = w1;
    }
}

int main() {
    int in[64];
    for (int l = 0; l < 64; ++l) in[l] = l * 100 + 7;
    int *din, *dout;
    long long* dc;
    CHECK(hipMalloc(&din, sizeof in));
    CHECK(hipMalloc(&dout, 64 * 12 * 4));
    CHECK(hipMalloc(&dc, 4 * 8));
    CHECK(hipMemcpy(din, in, sizeof in, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(cross, dim3(1), dim3(64), 0, 0, din, dout, dc);
    CHECK(hipDeviceSynchronize());
    int out[64 * 12];
    long long clocks[4];
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(clocks, dc, sizeof clocks, hipMemcpyDeviceToHost));
    int bad = 0;
    static const char* what[12] = {"quad_perm", "row_shl:1", "row_shr:3", "row_ror:4",
                                   "row_mirror", "row_half_mirror", "wave_shl:1", "row_bcast:15",
                                   "swizzle xor 1", "swizzle quad", "readlane 37", "readfirstlane"};
    for (int l = 0; l < 64; ++l) {
        int r = l / 16, i = l % 16;
        auto at = [&](int src) { return src < 0 ? -1 : in[src]; };
        int want[12] = {
            at((l & ~3) + (3 - (l & 3))),
            at(i + 1 < 16 ? l + 1 : -1),
            at(i >= 3 ? l - 3 : -1),
            at(r * 16 + (i + 12) % 16),
            at(r * 16 + 15 - i),
            at(r * 16 + (i & 8) + 7 - (i & 7)),
            at(l < 63 ? l + 1 : -1),
            // row_bcast:15: rows 1..3 take the previous row's lane 15; row 0
            // is not written (row_mask has it, but it has no source).
            at(r > 0 ? r * 16 - 1 : -1),
            at(l ^ 1),
            at((l & ~3) + ((l & 3) ^ 1)),
            in[37],
            in[0],
        };
        for (int k = 0; k < 12; ++k)
            if (out[l * 12 + k] != want[k] && bad++ < 12)
                std::fprintf(stderr, "%s lane %d: %d want %d\n", what[k], l, out[l * 12 + k], want[k]);
    }
    if (!(clocks[1] > clocks[0]) || !(clocks[3] >= clocks[2])) {
        ++bad;
        std::fprintf(stderr, "clocks ran backwards: %lld -> %lld, %lld -> %lld\n", clocks[0],
                     clocks[1], clocks[2], clocks[3]);
    }
    if (bad) {
        std::fprintf(stderr, "cross_lane: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("cross_lane: PASSED\n");
    return 0;
}
