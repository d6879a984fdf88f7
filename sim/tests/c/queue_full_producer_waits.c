/* A full queue: the packet processor is held by a barrier on a gate signal, the producer
 * fills every slot and then waits for room (read index) until the gate opens and the
 * processor drains the ring. */
#include <pthread.h>
#include "hsasim_test.h"

static hsa_queue_t *q;
static hsa_signal_t done;
static volatile int extra_published;

static void *producer(void *arg) {
  (void)arg;
  hsa_barrier_and_packet_t p = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, NULL, 0, done);
  publish(q, &p); /* the 65th packet: must wait for a free slot */
  __atomic_store_n(&extra_published, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

int main(void) {
  agents_t ag = init_hsasim();
  q = make_queue(ag.gpu, 64, NULL, NULL);
  CHECK(q->size == 64, "queue size %u", q->size);
  hsa_signal_t gate = make_signal(1);
  done = make_signal(65);
  hsa_barrier_and_packet_t first = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, &gate, 1, done);
  publish(q, &first);
  for (int i = 1; i < 64; i++) {
    hsa_barrier_and_packet_t p = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, NULL, 0, done);
    publish(q, &p);
  }
  CHECK(hsa_queue_load_write_index_relaxed(q) == 64, "write index");
  pthread_t t;
  pthread_create(&t, NULL, producer, NULL);
  sleep_ms(50);
  CHECK(!__atomic_load_n(&extra_published, __ATOMIC_SEQ_CST),
        "the producer published into a full ring");
  CHECK(hsa_queue_load_read_index_scacquire(q) == 0, "processor ran past the closed gate");
  CHECK(hsa_signal_load_relaxed(done) == 65, "nothing completed yet");
  hsa_signal_store_screlease(gate, 0);
  CHECK(wait_eq(done, 0, 10 * SECOND_NS) == 0, "done = %ld", (long)hsa_signal_load_relaxed(done));
  pthread_join(t, NULL);
  /* The processor advances the read index just after it completes a packet's signal, so
   * the last advance may trail `done` reaching 0 by a moment. */
  uint64_t read = 0;
  for (int i = 0; i < 10000 && (read = hsa_queue_load_read_index_scacquire(q)) != 65; i++)
    sleep_ms(1);
  CHECK(read == 65, "read index %lu", (unsigned long)read);
  OK(hsa_queue_destroy(q));
  OK(hsa_signal_destroy(gate));
  OK(hsa_signal_destroy(done));
  OK(hsa_shut_down());
  printf("queue_full_producer_waits: ok\n");
  return 0;
}
