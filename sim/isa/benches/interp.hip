// Benchmark kernels for benches/interp.rs: the fixed kernel set of the interpreter's
// throughput figures. Built without HIP headers (-nogpuinc), so the few spellings HIP
// would give are defined here.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

static __attribute__((device)) inline unsigned tid_x() { return __builtin_amdgcn_workitem_id_x(); }
static __attribute__((device)) inline unsigned tid_y() { return __builtin_amdgcn_workitem_id_y(); }
static __attribute__((device)) inline unsigned bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
static __attribute__((device)) inline unsigned bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
static __attribute__((device)) inline void sync_threads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// Compute-bound: a long dependent FMA chain per lane, no memory traffic in the loop.
extern "C" __global__ void fma_chain(float* out, int iters) {
  unsigned i = bid_x() * 256 + tid_x();
  float x = (float)i * 1e-6f, y = 1.0f - x;
  for (int k = 0; k < iters; ++k) {
    x = __builtin_fmaf(x, 0.999f, y);
    y = __builtin_fmaf(y, 0.998f, x * 1e-3f);
  }
  out[i] = x + y;
}

// Memory-bound: y = a * x + y over large arrays.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = bid_x() * 256 + tid_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

// C = A * B, n x n row-major, one output per work-item, 16x16 workgroups.
extern "C" __global__ void matmul_naive(const float* a, const float* b, float* c, int n) {
  int row = bid_y() * 16 + tid_y(), col = bid_x() * 16 + tid_x();
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc = __builtin_fmaf(a[row * n + k], b[k * n + col], acc);
  c[row * n + col] = acc;
}

// The same product through 16x16 tiles staged in LDS (n a multiple of 16).
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[16][17];
  __shared__ float tb[16][17];
  int tx = tid_x(), ty = tid_y();
  int row = bid_y() * 16 + ty, col = bid_x() * 16 + tx;
  float acc = 0.0f;
  for (int t = 0; t < n; t += 16) {
    ta[ty][tx] = a[row * n + t + tx];
    tb[ty][tx] = b[(t + ty) * n + col];
    sync_threads();
    for (int k = 0; k < 16; ++k) acc = __builtin_fmaf(ta[ty][k], tb[k][tx], acc);
    sync_threads();
  }
  c[row * n + col] = acc;
}

// Sum of `n` floats: a grid-stride accumulation per work-item, an LDS tree over the
// workgroup, one partial sum per workgroup.
extern "C" __global__ void reduce_sum(const float* x, float* partial, int n) {
  __shared__ float s[256];
  unsigned t = tid_x();
  unsigned stride = __builtin_amdgcn_grid_size_x();
  float acc = 0.0f;
  for (unsigned i = bid_x() * 256 + t; i < (unsigned)n; i += stride) acc += x[i];
  s[t] = acc;
  sync_threads();
  for (unsigned half = 128; half > 0; half >>= 1) {
    if (t < half) s[t] += s[t + half];
    sync_threads();
  }
  if (t == 0) partial[bid_x()] = s[0];
}

typedef float v4f __attribute__((ext_vector_type(4)));

// Matrix cores: each wave accumulates `iters` 16x16x4 f32 MFMAs on values it loaded.
extern "C" __global__ void mfma_loop(const float* in, float* out, int iters) {
  unsigned i = bid_x() * 256 + tid_x();
  float a = in[i & 1023], b = in[(i + 7) & 1023];
  v4f acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < iters; ++k) {
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
    a = __builtin_fmaf(a, 0.5f, 0.25f);
  }
  out[4 * i] = acc.x;
  out[4 * i + 1] = acc.y;
  out[4 * i + 2] = acc.z;
  out[4 * i + 3] = acc.w;
}

// y = A x for a CSR matrix, 16 lanes per row (as rocSPARSE's csrmv does for rows of a
// few dozen entries): strided partial sums, then a shuffle reduction through
// ds_bpermute.
extern "C" __global__ void spmv_csr(int rows, const int* row_ptr, const int* cols,
                                    const float* vals, const float* x, float* y) {
  unsigned gid = bid_x() * 256 + tid_x();
  int row = gid / 16, lane = gid % 16;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += 16) acc = __builtin_fmaf(vals[j], x[cols[j]], acc);
  for (int off = 8; off > 0; off >>= 1) {
    int src = (int)(tid_x() ^ off) * 4;
    acc += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src, __builtin_bit_cast(int, acc)));
  }
  if (lane == 0) y[row] = acc;
}
