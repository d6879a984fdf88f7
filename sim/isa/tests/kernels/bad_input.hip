// Kernels that go wrong on purpose, for tests/bad_input.rs.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

// Recursion: the stack is dynamic (USES_DYNAMIC_STACK); a deep enough call chain
// exhausts any private segment.
__attribute__((noinline)) __device__ int depth(volatile int* p, int n) {
  volatile int local[8];
  for (int i = 0; i < 8; ++i) local[i] = n + i;
  return n <= 0 ? *p : depth(p, n - 1) + local[n & 7];
}

extern "C" __global__ void deep(int* out, int n) {
  out[__builtin_amdgcn_workitem_id_x()] = depth(out, n);
}

// Never ends unless someone else writes `stop`: only the watchdog stops it.
extern "C" __global__ void spin(volatile int* stop, int* out) {
  int i = 0;
  while (*stop == 0) ++i;
  out[0] = i;
}

// The same around a workgroup barrier: each wave returns to the scheduler every few
// instructions, so limits must be checked across those returns.
extern "C" __global__ void spin_barrier(volatile int* stop, int* out) {
  int i = 0;
  while (*stop == 0) {
    ++i;
    __builtin_amdgcn_s_barrier();
  }
  out[__builtin_amdgcn_workitem_id_x()] = i;
}

// Does nothing: a huge grid of it is work no single wave's count measures.
extern "C" __global__ void nothing() {}

// Denormal arithmetic: out = a * b (a, b chosen so the product is an f32 denormal).
extern "C" __global__ void mul(const float* a, const float* b, float* out) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  out[t] = a[t] * b[t];
}
