/* Shared helpers for hsasim's HSA-level C tests. Written against Debian's ROCm 5.2
 * <hsa/hsa.h> and <hsa/hsa_ext_amd.h>; each program links against libhsasim.so (through a
 * libhsa-runtime64.so.1 link on its rpath), checks its own results and exits non-zero with
 * a message naming what differed. */
#ifndef HSASIM_TEST_H
#define HSASIM_TEST_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SECOND_NS 1000000000ull

#define FAIL(...)                                                   \
  do {                                                              \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
    fprintf(stderr, __VA_ARGS__);                                   \
    fprintf(stderr, "\n");                                          \
    exit(1);                                                        \
  } while (0)

#define CHECK(cond, ...)        \
  do {                          \
    if (!(cond)) FAIL(__VA_ARGS__); \
  } while (0)

/* Expects `call` to return `want`; names both statuses on failure. */
#define EXPECT_STATUS(call, want)                                              \
  do {                                                                         \
    hsa_status_t got_ = (call);                                                \
    if (got_ != (want)) {                                                      \
      const char *s_ = NULL;                                                   \
      hsa_status_string(got_, &s_);                                            \
      FAIL("%s returned 0x%x (%s), expected 0x%x", #call, got_, s_ ? s_ : "?", \
           (unsigned)(want));                                                  \
    }                                                                          \
  } while (0)

#define OK(call) EXPECT_STATUS(call, HSA_STATUS_SUCCESS)

typedef struct {
  hsa_agent_t cpu;
  hsa_agent_t gpu;
  int gpus;
} agents_t;

static hsa_status_t collect_agent_cb(hsa_agent_t a, void *data) {
  agents_t *ag = (agents_t *)data;
  hsa_device_type_t t;
  OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_CPU) ag->cpu = a;
  if (t == HSA_DEVICE_TYPE_GPU && ag->gpus++ == 0) ag->gpu = a;
  return HSA_STATUS_SUCCESS;
}

/* hsa_init + the CPU agent and the first GPU agent; fails unless the runtime is hsasim (a
 * real ROCr picked up by mistake would make these tests meaningless). */
static agents_t init_hsasim(void) {
  agents_t ag = {0};
  OK(hsa_init());
  OK(hsa_iterate_agents(collect_agent_cb, &ag));
  CHECK(ag.cpu.handle && ag.gpus > 0, "need a CPU and a GPU agent");
  char product[64] = {0};
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product));
  CHECK(strncmp(product, "hsasim", 6) == 0, "runtime is not hsasim: GPU product '%s'", product);
  return ag;
}

typedef struct {
  hsa_amd_memory_pool_t pool;
  int want_kernarg;
  int want_coarse;
  int found;
} pool_query_t;

static hsa_status_t find_pool_cb(hsa_amd_memory_pool_t p, void *data) {
  pool_query_t *q = (pool_query_t *)data;
  uint32_t flags = 0;
  OK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  int kernarg = (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) != 0;
  int coarse = (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) != 0;
  if (kernarg == q->want_kernarg && coarse == q->want_coarse) {
    q->pool = p;
    q->found = 1;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_amd_memory_pool_t find_pool(hsa_agent_t agent, int kernarg, int coarse) {
  pool_query_t q = {{0}, kernarg, coarse, 0};
  hsa_status_t s = hsa_amd_agent_iterate_memory_pools(agent, find_pool_cb, &q);
  CHECK(s == HSA_STATUS_SUCCESS || s == HSA_STATUS_INFO_BREAK, "pool iteration: 0x%x", s);
  CHECK(q.found, "no pool with kernarg=%d coarse=%d", kernarg, coarse);
  return q.pool;
}

static hsa_queue_t *make_queue(hsa_agent_t gpu, uint32_t size,
                               void (*cb)(hsa_status_t, hsa_queue_t *, void *), void *data) {
  hsa_queue_t *q = NULL;
  OK(hsa_queue_create(gpu, size, HSA_QUEUE_TYPE_MULTI, cb, data, UINT32_MAX, UINT32_MAX, &q));
  return q;
}

static hsa_signal_t make_signal(hsa_signal_value_t v) {
  hsa_signal_t s;
  OK(hsa_signal_create(v, 0, NULL, &s));
  return s;
}

static uint16_t header(hsa_packet_type_t type, int barrier) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

/* The AQL publish protocol: reserve an index, wait for room, write the body, store the
 * header last with release ordering, ring the doorbell. `packet` is 64 bytes. */
static uint64_t publish(hsa_queue_t *q, const void *packet) {
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  while (index - hsa_queue_load_read_index_scacquire(q) >= q->size) sched_yield();
  uint8_t *slot = (uint8_t *)q->base_address + (index % q->size) * 64;
  memcpy(slot + 2, (const uint8_t *)packet + 2, 62);
  __atomic_store_n((uint16_t *)slot, *(const uint16_t *)packet, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  return index;
}

static hsa_barrier_and_packet_t barrier_packet(hsa_packet_type_t type, const hsa_signal_t *deps,
                                               int ndeps, hsa_signal_t completion) {
  hsa_barrier_and_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = header(type, 1);
  for (int i = 0; i < ndeps; i++) p.dep_signal[i] = deps[i];
  p.completion_signal = completion;
  return p;
}

static hsa_signal_value_t wait_eq(hsa_signal_t s, hsa_signal_value_t v, uint64_t timeout_ns) {
  return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, v, timeout_ns,
                                   HSA_WAIT_STATE_BLOCKED);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

#endif
