/* Signals: every operation on a handle that is not a live signal is reported, never
 * dereferenced; wait conditions and timeouts behave as hsa.h documents. */
#include "hsasim_test.h"

int main(void) {
  agents_t ag = init_hsasim();
  (void)ag;
  hsa_signal_t bogus = {0xdeadbeef000};
  EXPECT_STATUS(hsa_signal_destroy(bogus), HSA_STATUS_ERROR_INVALID_SIGNAL);
  volatile hsa_signal_value_t *vp = NULL;
  EXPECT_STATUS(hsa_amd_signal_value_pointer(bogus, &vp), HSA_STATUS_ERROR_INVALID_SIGNAL);
  /* A wait on an invalid handle returns a value that does not satisfy the condition. */
  hsa_signal_value_t v = hsa_signal_wait_scacquire(bogus, HSA_SIGNAL_CONDITION_EQ, 0, 1000,
                                                   HSA_WAIT_STATE_ACTIVE);
  CHECK(v != 0, "wait on an invalid signal reported success (value %ld)", (long)v);

  hsa_signal_t s = make_signal(5);
  CHECK(hsa_signal_load_relaxed(s) == 5, "initial value");
  hsa_signal_add_relaxed(s, 3);
  hsa_signal_subtract_screlease(s, 1);
  CHECK(hsa_signal_load_scacquire(s) == 7, "add/subtract");
  CHECK(hsa_signal_exchange_scacq_screl(s, 2) == 7, "exchange returns the old value");
  CHECK(hsa_signal_cas_scacq_screl(s, 2, 9) == 2, "cas returns the old value");
  CHECK(hsa_signal_cas_relaxed(s, 2, 11) == 9, "failed cas returns the current value");
  hsa_signal_or_relaxed(s, 0x10);
  hsa_signal_and_relaxed(s, 0x19);
  hsa_signal_xor_relaxed(s, 0x1);
  CHECK(hsa_signal_load_relaxed(s) == 0x18, "and/or/xor: %ld", (long)hsa_signal_load_relaxed(s));
  OK(hsa_amd_signal_value_pointer(s, &vp));
  CHECK(*vp == 0x18, "value pointer reads the live value");

  /* A wait that times out returns the current (unsatisfying) value. */
  v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 0, 2000000, HSA_WAIT_STATE_BLOCKED);
  CHECK(v == 0x18, "timed-out wait returned %ld", (long)v);
  hsa_signal_store_screlease(s, -1);
  CHECK(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 0, SECOND_NS,
                                  HSA_WAIT_STATE_BLOCKED) == -1, "LT");
  CHECK(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_NE, 0, SECOND_NS,
                                  HSA_WAIT_STATE_ACTIVE) == -1, "NE");
  CHECK(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, -1, SECOND_NS,
                                  HSA_WAIT_STATE_ACTIVE) == -1, "GTE");

  OK(hsa_signal_destroy(s));
  EXPECT_STATUS(hsa_signal_destroy(s), HSA_STATUS_ERROR_INVALID_SIGNAL);

  /* Every status has a string. */
  const char *text = NULL;
  OK(hsa_status_string(HSA_STATUS_ERROR_INVALID_SIGNAL, &text));
  CHECK(text && strstr(text, "signal"), "status string: %s", text ? text : "(null)");
  EXPECT_STATUS(hsa_status_string((hsa_status_t)0x7777, &text), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  OK(hsa_shut_down());
  EXPECT_STATUS(hsa_signal_create(0, 0, NULL, &s), HSA_STATUS_ERROR_NOT_INITIALIZED);
  printf("signal_invalid_handle: ok\n");
  return 0;
}
