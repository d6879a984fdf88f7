// vector_add with the id computed from builtins (clang reads the group size from the
// dispatch packet for code object v4 and from the hidden kernargs for v5).
#define __global__ __attribute__((global))
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
          __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
