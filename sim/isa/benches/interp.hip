// Benchmark kernels for benches/interp.rs.
#define __global__ __attribute__((global))

// Compute-bound: a long dependent FMA chain per lane, no memory traffic in the loop.
extern "C" __global__ void compute(float* out, int iters) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  float x = (float)i * 1e-6f, y = 1.0f - x;
  for (int k = 0; k < iters; ++k) {
    x = __builtin_fmaf(x, 0.999f, y);
    y = __builtin_fmaf(y, 0.998f, x * 1e-3f);
  }
  out[i] = x + y;
}

// Memory-bound: y = a * x + y over large arrays.
extern "C" __global__ void stream(float a, const float* x, float* y, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}
