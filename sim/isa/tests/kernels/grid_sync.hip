// Grid-wide barrier through AMD's device library (`__ockl_grid_sync`: s_barrier, one wave
// per workgroup at ds_gws_barrier, s_barrier), linked from the ROCm bitcode. Each round every
// workgroup publishes a value, syncs the grid, reads another workgroup's value and syncs
// again before the next round overwrites it: the sums are right only if the barrier holds.
// `local_exchange` is the same with only the workgroup barrier, to show the check catches a
// barrier that does not span the grid.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
extern "C" __device__ void __ockl_grid_sync(void);

#define EXCHANGE(name, SYNC)                                                              \
  extern "C" __global__ void name(unsigned* slots, unsigned* out, unsigned rounds) {      \
    unsigned g = __builtin_amdgcn_workgroup_id_x();                                        \
    unsigned size = __builtin_amdgcn_workgroup_size_x();                                   \
    unsigned n = __builtin_amdgcn_grid_size_x() / size;                                    \
    unsigned t = __builtin_amdgcn_workitem_id_x();                                         \
    unsigned other = (g + 1 + t % (n - 1)) % n;                                            \
    unsigned acc = 0;                                                                      \
    for (unsigned r = 0; r < rounds; r++) {                                                \
      if (t == 0)                                                                          \
        __hip_atomic_store(&slots[g], g * 3 + 1 + r * 1000, __ATOMIC_RELAXED,              \
                           __HIP_MEMORY_SCOPE_AGENT);                                      \
      SYNC();                                                                              \
      acc += __hip_atomic_load(&slots[other], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); \
      SYNC();                                                                              \
    }                                                                                      \
    out[g * size + t] = acc;                                                               \
  }

EXCHANGE(grid_exchange, __ockl_grid_sync)
EXCHANGE(local_exchange, __builtin_amdgcn_s_barrier)

// Reaches the grid barrier from workgroup 0 only: the others end without arriving.
extern "C" __global__ void grid_sync_from_one(unsigned* out) {
  if (__builtin_amdgcn_workgroup_id_x() == 0) __ockl_grid_sync();
  out[__builtin_amdgcn_workgroup_id_x()] = 1;
}

// The last workgroup releases the others, which spin on the flag: they make progress on a
// single host worker only if a spinning wave lets the later workgroups run (at s_sleep, or
// now and then without it).
extern "C" __global__ void spin_handoff(unsigned* flag, unsigned* out, unsigned sleep) {
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  unsigned n = __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x();
  if (g == n - 1) {
    __hip_atomic_store(flag, 7u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
  } else if (sleep) {
    while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0)
      __builtin_amdgcn_s_sleep(1);
  } else {
    while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
    }
  }
  if (__builtin_amdgcn_workitem_id_x() == 0)
    out[g] = __hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
