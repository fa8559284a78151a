/* The model runner with thread_safe under load through the C API: 8 client
 * threads x 10,000 requests each on add_one, sync and async, on one and two
 * replicas, through every execute entry point. Each request carries values
 * unique to it (its number in x[0], the rest drawn from the thread's own
 * seed), so an output delivered to the wrong request, or half written,
 * cannot go unnoticed: every output is checked against x + 1 exactly. The
 * runner's request counts must add up to the requests sent.
 *
 * The full count runs in every build: 3 x 80,000 requests take about 3 s in
 * Release, 5-6 s under ASan and 13-28 s under TSan on the 2-core machine. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum {
  THREADS = 8,
  REQUESTS_PER_THREAD = 10000,
  ADD_ONE_N = 16,
  WINDOW = 16 /* async requests in flight per thread */
};
#define WAIT_NS 30000000000LL /* a request not done after 30 s hangs */

/* How a client sends its requests. */
typedef enum {
  SYNC,  /* mrt_model_runner_execute and _execute_alloc in turn */
  ASYNC, /* mrt_model_runner_execute_async, WINDOW in flight, waited for in order */
  MIXED  /* all four entry points in turn, each async request waited for at once */
} client_mode;

typedef struct client {
  mrt_model_runner *runner;
  client_mode mode;
  uint32_t replicas;
  int id;
  int failures;      /* requests that failed or whose outputs were wrong */
  char first[512];   /* what went wrong first, for the test's message */
} client;

/* One request's buffers: they stay untouched while the request is in flight. */
typedef struct slot {
  float x[ADD_ONE_N];
  float y[ADD_ONE_N];
  mrt_future *future;
  mrt_tensor_memory *memory; /* library-allocated outputs, or NULL */
  int request;
} slot;

static void record_failure(client *c, int request, const char *what) {
  if (c->failures++ == 0) snprintf(c->first, sizeof c->first, "thread %d request %d: %s", c->id, request, what);
}

/* Distinct data per thread and per request: x[0] is the request's global
 * number (exact in a float: below 2^24), the rest random. */
static void fill_request(client *c, slot *s, int request, unsigned *seed) {
  test_fill_random(s->x, ADD_ONE_N, seed, -1000, 1000);
  s->x[0] = (float)(c->id * REQUESTS_PER_THREAD + request);
  memset(s->y, 0xff, sizeof s->y); /* NaNs: a request that wrote nothing fails the check */
  s->request = request;
}

static void check_outputs(client *c, const slot *s, const float *y) {
  for (int k = 0; k < ADD_ONE_N; ++k) {
    if (y[k] != s->x[k] + 1.0f) {
      char what[160];
      snprintf(what, sizeof what, "y[%d] = %.9g, expected %.9g", k, (double)y[k], (double)(s->x[k] + 1.0f));
      record_failure(c, s->request, what);
      return;
    }
  }
}

static void check_status(client *c, const slot *s, mrt_status status, const char *message) {
  char what[400];
  snprintf(what, sizeof what, "%s: %s", mrt_status_string(status), message);
  record_failure(c, s->request, what);
}

/* The library-allocated output "y" of a request. */
static void check_memory(client *c, const slot *s) {
  mrt_tensor_view y = {0};
  const mrt_status status = mrt_tensor_memory_find(s->memory, "y", &y);
  if (status != MRT_OK) {
    check_status(c, s, status, mrt_last_error_message());
  } else if (y.size_bytes != sizeof s->x) {
    record_failure(c, s->request, "the allocated y has the wrong size");
  } else {
    check_outputs(c, s, y.data);
  }
}

/* Waits for the slot's async request, checks it and frees its handles. */
static void finish_async(client *c, slot *s) {
  const mrt_status status = mrt_future_wait(s->future, WAIT_NS);
  if (status != MRT_OK) {
    check_status(c, s, status, mrt_future_error_message(s->future));
  } else if (s->memory != NULL) {
    check_memory(c, s);
  } else {
    check_outputs(c, s, s->y);
  }
  mrt_future_destroy(s->future);
  mrt_tensor_memory_destroy(s->memory);
  s->future = NULL;
  s->memory = NULL;
}

/* Sends one request on `entry` (0 execute, 1 execute_alloc, 2 execute_async,
 * 3 execute_async_alloc); the async ones are left in flight in the slot. */
static void send_request(client *c, slot *s, int entry, uint32_t replica) {
  mrt_tensor_view in = {"x", s->x, sizeof s->x}, out = {"y", s->y, sizeof s->y};
  mrt_status status = MRT_OK;
  switch (entry) {
    case 0:
      status = mrt_model_runner_execute(c->runner, &in, 1, &out, 1, replica);
      if (status == MRT_OK) check_outputs(c, s, s->y);
      break;
    case 1:
      status = mrt_model_runner_execute_alloc(c->runner, &in, 1, replica, &s->memory);
      if (status == MRT_OK) {
        check_memory(c, s);
        mrt_tensor_memory_destroy(s->memory);
        s->memory = NULL;
      }
      break;
    case 2:
      status = mrt_model_runner_execute_async(c->runner, &in, 1, &out, 1, replica, &s->future);
      break;
    default:
      status = mrt_model_runner_execute_async_alloc(c->runner, &in, 1, replica, &s->future, &s->memory);
      break;
  }
  if (status != MRT_OK) check_status(c, s, status, mrt_last_error_message());
}

static void *serve(void *arg) {
  client *c = arg;
  unsigned seed = 1000u + (unsigned)c->id;
  slot slots[WINDOW];
  memset(slots, 0, sizeof slots);
  for (int i = 0; i < REQUESTS_PER_THREAD; ++i) {
    slot *s = &slots[i % WINDOW];
    const uint32_t replica = (uint32_t)(i + c->id) % c->replicas;
    if (s->future != NULL) finish_async(c, s);
    fill_request(c, s, i, &seed);
    switch (c->mode) {
      case SYNC:
        send_request(c, s, i % 2, replica);
        break;
      case ASYNC:
        send_request(c, s, 2, replica);
        break;
      case MIXED:
        send_request(c, s, i % 4, replica);
        if (s->future != NULL) finish_async(c, s);
        break;
    }
  }
  for (int k = 0; k < WINDOW; ++k) {
    if (slots[k].future != NULL) finish_async(c, &slots[k]);
  }
  return NULL;
}

/* THREADS clients in `mode` on a thread_safe runner of `replicas` replicas;
 * every request must succeed with the right outputs and be counted once. */
static void run_clients(client_mode mode, uint32_t replicas) {
  assert_true(replicas >= 1 && replicas <= 2);
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.thread_safe = true;
  config.replication_factor = replicas;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  client clients[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    clients[t] = (client){.runner = runner, .mode = mode, .replicas = replicas, .id = t};
    assert_int_equal(pthread_create(&threads[t], NULL, serve, &clients[t]), 0);
  }
  for (int t = 0; t < THREADS; ++t) assert_int_equal(pthread_join(threads[t], NULL), 0);

  /* Read everything, then release the devices before any check can end the
   * test (a leaked runner would keep them busy for the next tests). */
  mrt_request_times counts[2];
  mrt_status count_status[2];
  for (uint32_t r = 0; r < replicas; ++r) {
    counts[r] = (mrt_request_times){.struct_size = sizeof counts[r]};
    count_status[r] = mrt_model_runner_statistics_count(runner, r, &counts[r]);
  }
  mrt_model_runner_destroy(runner);

  for (int t = 0; t < THREADS; ++t) {
    if (clients[t].failures != 0) fail_msg("%d failed requests; first: %s", clients[t].failures, clients[t].first);
  }
  /* Counts are doubles in the C API; compared exactly as whole numbers. */
  const int64_t sent = (int64_t)THREADS * REQUESTS_PER_THREAD;
  int64_t total = 0;
  for (uint32_t r = 0; r < replicas; ++r) {
    assert_int_equal(count_status[r], MRT_OK);
    assert_true(counts[r].request_us == (double)(int64_t)counts[r].request_us);
    /* Each replica serves its share: every client alternates replicas. */
    assert_int_equal((int64_t)counts[r].request_us, sent / replicas);
    total += (int64_t)counts[r].request_us;
  }
  assert_int_equal(total, sent);
}

static void eight_clients_sync_one_replica(void **state) {
  (void)state;
  run_clients(SYNC, 1);
}

static void eight_clients_async_two_replicas(void **state) {
  (void)state;
  run_clients(ASYNC, 2);
}

static void eight_clients_every_entry_point_two_replicas(void **state) {
  (void)state;
  run_clients(MIXED, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eight_clients_sync_one_replica),
      cmocka_unit_test(eight_clients_async_two_replicas),
      cmocka_unit_test(eight_clients_every_entry_point_two_replicas),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
