/* A barrier-AND on queue A waits for a signal completed by a packet on queue B; a
 * barrier-OR completes when any one dependency reaches zero. */
#include "hsasim_test.h"

int main(void) {
  agents_t ag = init_hsasim();
  hsa_queue_t *a = make_queue(ag.gpu, 64, NULL, NULL);
  hsa_queue_t *b = make_queue(ag.gpu, 64, NULL, NULL);
  CHECK(a->id != b->id, "queue ids must differ");
  hsa_signal_t from_b = make_signal(1), other = make_signal(1), a_done = make_signal(1),
               or_done = make_signal(1);
  hsa_signal_t deps[2] = {from_b, other};
  hsa_barrier_and_packet_t wait_b = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, deps, 1, a_done);
  publish(a, &wait_b);
  hsa_barrier_or_packet_t any;
  hsa_barrier_and_packet_t any_and = barrier_packet(HSA_PACKET_TYPE_BARRIER_OR, deps, 2, or_done);
  memcpy(&any, &any_and, sizeof any);
  publish(a, &any);
  CHECK(wait_eq(a_done, 0, 30000000) == 1, "queue A passed its barrier before B signalled");
  hsa_barrier_and_packet_t signal_b = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, NULL, 0, from_b);
  publish(b, &signal_b);
  CHECK(wait_eq(a_done, 0, 10 * SECOND_NS) == 0, "queue A never saw B's signal");
  /* `other` is still 1: the OR barrier completed on from_b alone. */
  CHECK(wait_eq(or_done, 0, 10 * SECOND_NS) == 0, "barrier-OR did not complete");
  CHECK(hsa_signal_load_relaxed(other) == 1, "untouched dependency");
  OK(hsa_queue_destroy(a));
  OK(hsa_queue_destroy(b));
  OK(hsa_shut_down());
  printf("barrier_and_two_queues: ok\n");
  return 0;
}
