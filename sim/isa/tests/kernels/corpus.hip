// Corpus kernels for issue 4: each is checked against a host computation in tests/corpus.rs
// and its every instruction word against llvm-objdump in tests/decoder.rs.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define tid_x() __builtin_amdgcn_workitem_id_x()
#define bid_x() __builtin_amdgcn_workgroup_id_x()
#define bdim_x() __builtin_amdgcn_workgroup_size_x()
#define sync() __builtin_amdgcn_s_barrier()

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

// Block sum with LDS and barriers (blocks of 256).
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float s[256];
  unsigned t = tid_x();
  unsigned i = bid_x() * 256 + t;
  s[t] = i < (unsigned)n ? in[i] : 0.0f;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  sync();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (unsigned k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    sync();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  if (t == 0) out[bid_x()] = s[0];
}

// Reverses each block through LDS: `s[255 - t]` compiles to a negative base (-4t) plus the
// constant in the DS offset field, which only works if the address wraps at 32 bits.
extern "C" __global__ void block_reverse(const int* in, int* out) {
  __shared__ int s[256];
  unsigned t = tid_x();
  s[t] = in[bid_x() * 256 + t];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  sync();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[bid_x() * 256 + t] = s[255 - t];
}

// Wave reduction with ds_bpermute (shfl_down) and an atomic add of the wave's sum.
__device__ static float shfl_down(float v, unsigned d) {
  int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int src = lane + d;
  if (src > 63) src = lane;
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src << 2, __builtin_bit_cast(int, v)));
}
extern "C" __global__ void wave_sum_atomic(const float* in, float* total, unsigned* count, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  float v = i < n ? in[i] : 0.0f;
  for (unsigned d = 32; d > 0; d >>= 1) v += shfl_down(v, d);
  int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  if (lane == 0) {
    __hip_atomic_fetch_add(total, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    __hip_atomic_fetch_add(count, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
}

// Integer max with a CAS loop and 64-bit integer division / modulo.
extern "C" __global__ void int_math(const long long* a, const int* b, long long* q, int* r, int* mx, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i >= n) return;
  q[i] = a[i] / (long long)(b[i] | 1);
  r[i] = (int)(a[i] % 1000003) + b[i] / 7 - b[i] % 13;
  int old = __hip_atomic_load(mx, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  while (old < b[i] && !__hip_atomic_compare_exchange_strong(mx, &old, b[i], __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)) {}
}

// Tiled matrix multiply C = A * B (n x n, n a multiple of 16), 16x16 tiles in LDS.
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float ta[16][16];
  __shared__ float tb[16][16];
  int tx = tid_x(), ty = __builtin_amdgcn_workitem_id_y();
  int row = __builtin_amdgcn_workgroup_id_y() * 16 + ty;
  int col = bid_x() * 16 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = A[row * n + k0 + tx];
    tb[ty][tx] = B[(k0 + ty) * n + col];
    sync();
    for (int k = 0; k < 16; ++k) acc += ta[ty][k] * tb[k][tx];
    sync();
  }
  C[row * n + col] = acc;
}

// Double precision and a non-inlined device function with a stack array.
__device__ __attribute__((noinline)) double poly(double x, int k) {
  volatile double coef[8];
  for (int j = 0; j < 8; ++j) coef[j] = 1.0 / (j + k + 1);
  double s = 0.0;
  for (int j = 7; j >= 0; --j) s = s * x + coef[j];
  return s;
}
extern "C" __global__ void f64_poly(const double* x, double* y, int n) {
  int i = bid_x() * bdim_x() + tid_x();
  if (i < n) y[i] = poly(x[i], i & 3) + __builtin_sqrt(x[i] * x[i] + 1.0);
}
