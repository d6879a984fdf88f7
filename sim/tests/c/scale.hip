// A tiny kernel for the executable test, built by clang-19 with no HIP headers:
// out[i] = in[i] * factor + bias, where `bias` is a device global variable.
__attribute__((device)) int bias = 5;

extern "C" __attribute__((global)) void scale(int *out, const int *in, int n, int factor,
                                              int block) {
  int i = (int)__builtin_amdgcn_workgroup_id_x() * block + (int)__builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = in[i] * factor + bias;
}
