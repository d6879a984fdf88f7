// 2D vector_add: x and y work-item ids from the packed v0, workgroup ids x and y.
#define __global__ __attribute__((global))
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int w, int h) {
  int x = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  int y = __builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y() + __builtin_amdgcn_workitem_id_y();
  if (x < w && y < h) c[y * w + x] = a[y * w + x] + b[y * w + x];
}
