// templates: one kernel template instantiated for int, float, double and a
// user struct with a functor parameter, plus a template non-type parameter
// that sizes shared memory.
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
struct Pair {
    int a;
    float b;
    __host__ __device__ Pair operator+(const Pair& o) const { return {a + o.a, b + o.b}; }
    __host__ __device__ bool operator==(const Pair& o) const { return a == o.a && b == o.b; }
};

struct Square {
    template <typename T> __host__ __device__ T operator()(T x) const { return x + x; }
};

template <typename T, typename F, int TILE>
__global__ void map_then_neighbour_sum(const T* in, T* out, int n, F f) {
    __shared__ T tile[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) tile[threadIdx.x] = f(in[i]);
    __syncthreads();
    if (i < n) {
        T v = tile[threadIdx.x];
        if (threadIdx.x + 1 < TILE && i + 1 < n) v = v + tile[threadIdx.x + 1];
        out[i] = v;
    }
}

template <typename T, int TILE> int run(const char* name, T (*make)(int)) {
    const int n = 1000;
    std::vector<T> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = make(i);
    T *di, *dout;
    CHECK(hipMalloc(&di, n * sizeof(T)));
    CHECK(hipMalloc(&dout, n * sizeof(T)));
    CHECK(hipMemcpy(di, in.data(), n * sizeof(T), hipMemcpyHostToDevice));
    hipLaunchKernelGGL((map_then_neighbour_sum<T, Square, TILE>), dim3((n + TILE - 1) / TILE),
                       dim3(TILE), 0, 0, di, dout, n, Square{});
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out.data(), dout, n * sizeof(T), hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        T want = Square{}(in[i]);
        if ((i % TILE) + 1 < TILE && i + 1 < n) want = want + Square{}(in[i + 1]);
        if (!(out[i] == want) && bad++ < 5) std::fprintf(stderr, "%s: element %d wrong\n", name, i);
    }
    CHECK(hipFree(di));
    CHECK(hipFree(dout));
    return bad;
}

int main() {
    int bad = 0;
    bad += run<int, 64>("int", [](int i) { return i * 3 - 7; });
    bad += run<float, 128>("float", [](int i) { return i * 0.5f; });
    bad += run<double, 256>("double", [](int i) { return i * 0.125; });
    bad += run<Pair, 32>("Pair", [](int i) { return Pair{i, i * 0.25f}; });
    if (bad) {
        std::fprintf(stderr, "templates: FAILED, %d wrong\n", bad);
        return 1;
    }
    std::printf("templates: PASSED\n");
    return 0;
}
