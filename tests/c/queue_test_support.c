#include "queue_test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

void on_start(void *user_data) { ((counters *)user_data)->started++; }
void on_complete(void *user_data) { ((counters *)user_data)->completed++; }
void on_free(void *user_data) { ((counters *)user_data)->freed++; }

void run_device_once(mrt_queue_manager *manager) {
  float device[8];
  assert_int_equal(mrt_queue_manager_transfer(manager, "x", device), MRT_OK);
  for (int i = 0; i < 8; ++i) device[i] += 1.0f;
  assert_int_equal(mrt_queue_manager_transfer(manager, "y", device), MRT_OK);
}
