/* Interrupt and polling signals, as ROCr makes them: a signal a CPU may wait on gets one of
 * the process's 4096 KFD signal events (event id and mailbox in its amd_signal_t); GPU-only
 * signals and signals consumed only by GPUs get none; once the events are used up, new
 * signals are polling signals that still work; a destroyed signal gives its event back. */
#include <hsa/amd_hsa_signal.h>
#include "hsasim_test.h"

enum { EVENT_LIMIT = 4096, EXTRA = 100 };

static const amd_signal_t *amd(hsa_signal_t s) { return (const amd_signal_t *)s.handle; }

static int has_event(hsa_signal_t s) {
  const amd_signal_t *a = amd(s);
  CHECK((a->event_id == 0) == (a->event_mailbox_ptr == 0), "event id %u with mailbox %#lx",
        a->event_id, (unsigned long)a->event_mailbox_ptr);
  return a->event_id != 0;
}

int main(void) {
  agents_t ag = init_hsasim();
  hsa_signal_t plain, gpu_only, for_gpu, for_cpu, twice;
  OK(hsa_signal_create(1, 0, NULL, &plain));
  CHECK(has_event(plain), "a plain signal is an interrupt signal");
  OK(hsa_amd_signal_create(1, 0, NULL, HSA_AMD_SIGNAL_AMD_GPU_ONLY, &gpu_only));
  CHECK(!has_event(gpu_only), "a GPU-only signal has no event");
  OK(hsa_signal_create(1, 1, &ag.gpu, &for_gpu));
  CHECK(!has_event(for_gpu), "a signal only GPUs consume has no event");
  hsa_agent_t cpu_and_gpu[2] = {ag.cpu, ag.gpu}, cpu_twice[2] = {ag.cpu, ag.cpu};
  OK(hsa_signal_create(1, 2, cpu_and_gpu, &for_cpu));
  CHECK(has_event(for_cpu), "a signal the CPU consumes is an interrupt signal");
  EXPECT_STATUS(hsa_signal_create(1, 2, cpu_twice, &twice), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* Use up the rest of the events, and some. */
  static hsa_signal_t many[EVENT_LIMIT + EXTRA];
  int with_event = 2; /* plain and for_cpu */
  for (int i = 0; i < EVENT_LIMIT + EXTRA; i++) {
    OK(hsa_signal_create(1, 0, NULL, &many[i]));
    with_event += has_event(many[i]);
  }
  CHECK(with_event == EVENT_LIMIT, "%d signals got events, the limit is %d", with_event,
        EVENT_LIMIT);
  hsa_signal_t polling = many[EVENT_LIMIT + EXTRA - 1];
  CHECK(!has_event(polling), "past the limit signals poll");
  hsa_signal_store_screlease(polling, 0);
  CHECK(hsa_signal_wait_scacquire(polling, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                  HSA_WAIT_STATE_BLOCKED) == 0,
        "a polling signal still works");

  /* A destroyed interrupt signal's event goes to the next signal. */
  uint32_t freed = amd(many[0])->event_id;
  OK(hsa_signal_destroy(many[0]));
  OK(hsa_signal_create(1, 0, NULL, &many[0]));
  CHECK(amd(many[0])->event_id == freed, "event %u reused, got %u", freed, amd(many[0])->event_id);

  for (int i = 0; i < EVENT_LIMIT + EXTRA; i++) OK(hsa_signal_destroy(many[i]));
  hsa_signal_t list[] = {plain, gpu_only, for_gpu, for_cpu};
  for (int i = 0; i < 4; i++) OK(hsa_signal_destroy(list[i]));
  OK(hsa_shut_down());
  printf("signal_events: ok\n");
  return 0;
}
