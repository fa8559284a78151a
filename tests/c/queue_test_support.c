#include "queue_test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

void on_start(void *user_data) { ((counters *)user_data)->started++; }
void on_complete(void *user_data) { ((counters *)user_data)->completed++; }
void on_free(void *user_data) { ((counters *)user_data)->freed++; }

queue_fixture make_queue_fixture(const mrt_model *model) {
  queue_fixture f = {NULL, NULL, NULL};
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.ring_size_multiplier = 2; /* rings of 8 entries, whatever the default */
  assert_int_equal(mrt_queue_manager_create(model, &config, &f.manager), MRT_OK);
  assert_int_equal(mrt_queue_manager_input_queue(f.manager, "x", &f.x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(f.manager, "y", &f.y), MRT_OK);
  return f;
}

void run_device_once(mrt_queue_manager *manager) {
  float device[8];
  assert_int_equal(mrt_queue_manager_transfer(manager, "x", device), MRT_OK);
  for (int i = 0; i < 8; ++i) device[i] += 1.0f;
  assert_int_equal(mrt_queue_manager_transfer(manager, "y", device), MRT_OK);
}
