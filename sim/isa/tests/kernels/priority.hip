// Kernels for tests/priority.rs: dispatches of different queue priorities competing for the
// workers. Plain clang builtins, no headers or device libraries.
#define __global__ __attribute__((global))

// Each workgroup takes a ticket from `counter` as it starts, so the tickets give the order
// in which workgroups of concurrent dispatches started. Workgroup 0 first says it has started
// and waits for `gate`: until then its dispatch is running with the rest of its workgroups
// unclaimed (one host worker).
extern "C" __global__ void ticketed(unsigned* gate, unsigned* started, unsigned* counter,
                                    unsigned* tickets) {
  if (__builtin_amdgcn_workitem_id_x() != 0) return;
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  if (g == 0) {
    __hip_atomic_store(started, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    while (__hip_atomic_load(gate, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0)
      __builtin_amdgcn_s_sleep(1);
  }
  tickets[g] = __hip_atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}

// Every workgroup says it has started, then waits until `flag` is set (by another dispatch).
extern "C" __global__ void wait_flag(unsigned* flag, unsigned* started) {
  __hip_atomic_store(started, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0)
    __builtin_amdgcn_s_sleep(1);
}

// Sets `flag`.
extern "C" __global__ void set_flag(unsigned* flag) {
  __hip_atomic_store(flag, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
