/* A packet the processor cannot execute (vendor-specific type, a dispatch of an address
 * that is no kernel) is reported through the queue's error callback; the queue stops and
 * later packets do not run, while other queues keep working. */
#include "hsasim_test.h"

static volatile hsa_status_t seen_status;
static hsa_queue_t *volatile seen_queue;
static volatile int calls;

static void on_error(hsa_status_t status, hsa_queue_t *q, void *data) {
  CHECK(data == (void *)0x1234, "callback data");
  seen_status = status;
  seen_queue = q;
  __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
}

static void wait_calls(int n) {
  for (int i = 0; i < 5000 && __atomic_load_n(&calls, __ATOMIC_SEQ_CST) < n; i++) {
    /* In deterministic mode the queue runs inside HSA calls: poll through one. */
    (void)hsa_queue_load_read_index_scacquire(seen_queue);
    sleep_ms(1);
  }
}

int main(void) {
  agents_t ag = init_hsasim();
  hsa_queue_t *q = make_queue(ag.gpu, 64, on_error, (void *)0x1234);
  seen_queue = q;
  hsa_signal_t after = make_signal(1);
  uint8_t vendor[64];
  memset(vendor, 0, sizeof vendor);
  *(uint16_t *)vendor = header(HSA_PACKET_TYPE_VENDOR_SPECIFIC, 0);
  publish(q, vendor);
  hsa_barrier_and_packet_t later = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, NULL, 0, after);
  publish(q, &later);
  wait_calls(1);
  CHECK(calls == 1, "error callback calls: %d", calls);
  CHECK(seen_status == HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "status 0x%x", seen_status);
  CHECK(seen_queue == q, "callback got the wrong queue");
  CHECK(wait_eq(after, 0, 30000000) == 1, "a packet after the failure ran");
  OK(hsa_queue_destroy(q));

  /* A kernel dispatch whose kernel_object is not a loaded kernel. */
  calls = 0;
  hsa_queue_t *q2 = make_queue(ag.gpu, 64, on_error, (void *)0x1234);
  seen_queue = q2;
  hsa_kernel_dispatch_packet_t d;
  memset(&d, 0, sizeof d);
  d.setup = 1;
  d.workgroup_size_x = d.workgroup_size_y = d.workgroup_size_z = 1;
  d.grid_size_x = d.grid_size_y = d.grid_size_z = 1;
  d.kernel_object = 0x1000;
  d.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  publish(q2, &d);
  wait_calls(1);
  CHECK(calls == 1, "dispatch error callback calls: %d", calls);
  CHECK(seen_status != HSA_STATUS_SUCCESS, "dispatch error status");

  /* Another queue is unaffected. */
  hsa_queue_t *good = make_queue(ag.gpu, 64, NULL, NULL);
  hsa_signal_t fine = make_signal(1);
  hsa_barrier_and_packet_t p = barrier_packet(HSA_PACKET_TYPE_BARRIER_AND, NULL, 0, fine);
  publish(good, &p);
  CHECK(wait_eq(fine, 0, 10 * SECOND_NS) == 0, "a healthy queue stopped working");
  OK(hsa_queue_destroy(q2));
  OK(hsa_queue_destroy(good));
  OK(hsa_shut_down());
  printf("queue_error_callback: ok\n");
  return 0;
}
