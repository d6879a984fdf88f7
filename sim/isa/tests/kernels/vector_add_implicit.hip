// vector_add reading the dispatch packet and the implicit (hidden) kernargs explicitly,
// as HIP headers do for blockDim/gridDim.
#define __global__ __attribute__((global))
struct Packet { unsigned short header, setup, wx, wy, wz, r0; unsigned gx, gy, gz; };
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const Packet* p = (const Packet*)__builtin_amdgcn_dispatch_ptr();
  const unsigned* ia = (const unsigned*)__builtin_amdgcn_implicitarg_ptr();
  const unsigned short* gs = (const unsigned short*)(ia + 3);
  unsigned bs = gs[0] ? gs[0] : p->wx;
  unsigned i = __builtin_amdgcn_workgroup_id_x() * bs + __builtin_amdgcn_workitem_id_x();
  unsigned blocks = ia[0] ? ia[0] + 1 : 0xffffffffu;
  if (i < (unsigned)n && i < p->gx && __builtin_amdgcn_workgroup_id_x() < blocks) c[i] = a[i] + b[i];
}
