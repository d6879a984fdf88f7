/* SDMA: a host->device->host round trip whose first copy depends on a signal that is
 * signalled only later; the copy must not start before, and must finish after. Also checks
 * engine selection, engine status and copy profiling. */
#include "hsasim_test.h"

/* ROCr 5.3+ API (hsasim exports it; Debian's ROCm 5.2 header predates it). */
#define SDMA_ENGINE_1 2u
hsa_status_t hsa_amd_memory_async_copy_on_engine(void *dst, hsa_agent_t dst_agent,
                                                 const void *src, hsa_agent_t src_agent,
                                                 size_t size, uint32_t num_dep_signals,
                                                 const hsa_signal_t *dep_signals,
                                                 hsa_signal_t completion_signal,
                                                 uint32_t engine_id, bool force_copy_on_sdma);
hsa_status_t hsa_amd_memory_copy_engine_status(hsa_agent_t dst_agent, hsa_agent_t src_agent,
                                               uint32_t *engine_ids_mask);

int main(void) {
  agents_t ag = init_hsasim();
  enum { N = 1 << 20 };
  hsa_amd_memory_pool_t dev_pool = find_pool(ag.gpu, 0, 1);
  void *dev = NULL;
  OK(hsa_amd_memory_pool_allocate(dev_pool, N, 0, &dev));
  OK(hsa_amd_agents_allow_access(1, &ag.cpu, NULL, dev));
  uint8_t *src = malloc(N), *back = malloc(N);
  for (int i = 0; i < N; i++) src[i] = (uint8_t)(i * 7 + 1);
  memset(back, 0, N);
  void *src_agent_ptr = NULL, *back_agent_ptr = NULL;
  OK(hsa_amd_memory_lock(src, N, &ag.gpu, 1, &src_agent_ptr));
  OK(hsa_amd_memory_lock(back, N, &ag.gpu, 1, &back_agent_ptr));

  /* Copying from pageable (unlocked) memory is rejected. */
  uint8_t *pageable = malloc(N);
  hsa_signal_t dummy = make_signal(1);
  EXPECT_STATUS(hsa_amd_memory_async_copy(dev, ag.gpu, pageable, ag.cpu, N, 0, NULL, dummy),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);

  OK(hsa_amd_profiling_async_copy_enable(1));
  hsa_signal_t dep = make_signal(1), h2d = make_signal(1), d2h = make_signal(1);
  OK(hsa_amd_memory_async_copy_on_engine(dev, ag.gpu, src_agent_ptr, ag.cpu, N, 1, &dep, h2d,
                                         SDMA_ENGINE_1, true));
  OK(hsa_amd_memory_async_copy(back_agent_ptr, ag.cpu, dev, ag.gpu, N, 1, &h2d, d2h));
  /* An engine id the agent does not have is rejected. */
  EXPECT_STATUS(hsa_amd_memory_async_copy_on_engine(dev, ag.gpu, src_agent_ptr, ag.cpu, N, 0,
                                                    NULL, dummy, 1u << 9, true),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t idle = 0;
  hsa_status_t st = hsa_amd_memory_copy_engine_status(ag.gpu, ag.cpu, &idle);
  CHECK(st == HSA_STATUS_SUCCESS && !(idle & SDMA_ENGINE_1),
        "engine 1 holds a pending job: status 0x%x mask 0x%x", st, idle);

  CHECK(wait_eq(d2h, 0, 30000000) == 1, "copy chain finished before its dependency");
  CHECK(back[12345] == 0, "data arrived before the dependency was signalled");
  hsa_signal_store_screlease(dep, 0);
  CHECK(wait_eq(d2h, 0, 30 * SECOND_NS) == 0, "copy chain did not finish");
  CHECK(hsa_signal_load_scacquire(h2d) == 0, "first copy's signal");
  CHECK(memcmp(src, back, N) == 0, "round trip changed the data");
  hsa_amd_profiling_async_copy_time_t t;
  OK(hsa_amd_profiling_get_async_copy_time(h2d, &t));
  CHECK(t.start != 0 && t.end >= t.start, "copy times %lu..%lu", (unsigned long)t.start,
        (unsigned long)t.end);

  OK(hsa_amd_memory_unlock(src));
  OK(hsa_amd_memory_unlock(back));
  OK(hsa_amd_memory_pool_free(dev));
  EXPECT_STATUS(hsa_amd_memory_pool_free(dev), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  OK(hsa_shut_down());
  free(src); free(back); free(pageable);
  printf("copy_waits_for_dependency: ok\n");
  return 0;
}
