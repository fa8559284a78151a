/* The two-phase enqueue of the queue API (mrt_*_queue_enqueue_lock /
 * _complete) without a session: a queue manager over add_one (x F32[4,2] ->
 * y F32[4,2], batch 4, rings of 8 entries; from mrt-gen in
 * MRT_TEST_QUEUE_MODELS), the test playing the device through
 * mrt_queue_manager_transfer. Entries are the ring's slots in turn, values
 * and callbacks pass through, lock blocks while the ring is full and
 * returns MRT_CANCELLED when disconnected, every misuse is refused with
 * its message, leaving the queue usable, and the user data of a locked
 * entry is freed exactly once whatever drops it. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "queue_test_support.h"
#include "test_support.h"

enum { kRingEntries = 8, kTransferFloats = 8 };

static mrt_model *g_model;

static int setup(void **state) {
  (void)state;
  g_model = test_load_model("MRT_TEST_QUEUE_MODELS", "add_one_b4");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mrt_model_destroy(g_model);
  return 0;
}

static mrt_input_queue_entry *lock_input(mrt_input_queue *x) {
  mrt_input_queue_entry *entry = NULL;
  assert_int_equal(mrt_input_queue_enqueue_lock(x, &entry), MRT_OK);
  assert_non_null(entry);
  return entry;
}

static mrt_output_queue_entry *lock_output(mrt_output_queue *y) {
  mrt_output_queue_entry *entry = NULL;
  assert_int_equal(mrt_output_queue_enqueue_lock(y, &entry), MRT_OK);
  assert_non_null(entry);
  return entry;
}

/* Two transfers' worth, one sample per entry: each lock hands out the next
 * slot's entry, zeroed; relocking returns it as left; the values, callbacks
 * and user data pass through to the device. */
static void test_entries_are_ring_slots_and_pass_values(void **state) {
  (void)state;
  queue_fixture f = make_queue_fixture(g_model);
  float in[16], out[16];
  for (int i = 0; i < 16; ++i) {
    in[i] = (float)(3 * i);
    out[i] = -1.0f;
  }
  counters in_counts = {0, 0, 0}, out_counts = {0, 0, 0};
  mrt_input_queue_entry *first = NULL;
  for (int s = 0; s < kRingEntries; ++s) {
    mrt_input_queue_entry *entry = lock_input(f.x);
    assert_int_equal(entry->slot, s);
    assert_null(entry->data);
    assert_int_equal(entry->size_bytes, 0);
    assert_null(entry->read_start_fn);
    assert_null(entry->user_data);
    if (s == 0) first = entry;
    entry->data = in + 2 * s;
    entry->size_bytes = 8; /* one sample */
    assert_ptr_equal(lock_input(f.x), entry); /* relocked as left */
    assert_ptr_equal(entry->data, in + 2 * s);
    entry->read_start_fn = on_start;
    entry->read_complete_fn = on_complete;
    entry->user_data = &in_counts;
    entry->user_data_free = on_free;
    assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);

    mrt_output_queue_entry *slot = lock_output(f.y);
    assert_int_equal(slot->slot, s);
    slot->data = out + 2 * s;
    slot->size_bytes = 8;
    slot->write_complete_fn = on_complete;
    slot->user_data = &out_counts;
    slot->user_data_free = on_free;
    assert_int_equal(mrt_output_queue_enqueue_complete(f.y), MRT_OK);
  }
  /* Pointers, not bytes: what the device reads is the buffer at transfer time. */
  in[15] = 100.0f;
  run_device_once(f.manager);
  assert_int_equal(in_counts.started, 4);
  assert_int_equal(in_counts.completed, 4);
  assert_int_equal(out_counts.completed, 4);
  run_device_once(f.manager);
  for (int i = 0; i < 15; ++i) assert_true(out[i] == (float)(3 * i) + 1.0f);
  assert_true(out[15] == 101.0f);
  assert_int_equal(in_counts.completed, 8);
  assert_int_equal(out_counts.completed, 8);
  assert_int_equal(out_counts.started, 0); /* outputs have no start callback */

  /* The ring wraps: the ninth lock is slot 0's entry again, zeroed. */
  mrt_input_queue_entry *again = lock_input(f.x);
  assert_ptr_equal(again, first);
  assert_int_equal(again->slot, 0);
  assert_null(again->data);
  mrt_queue_manager_destroy(f.manager);
  /* Each entry's user data freed exactly once, at the latest with the manager. */
  assert_int_equal(in_counts.freed, kRingEntries);
  assert_int_equal(out_counts.freed, kRingEntries);
}

typedef struct locker {
  mrt_input_queue *x;
  pthread_mutex_t mutex;
  int done;
  mrt_status status;
  mrt_input_queue_entry *entry;
} locker;

static void *lock_in_thread(void *arg) {
  locker *l = (locker *)arg;
  mrt_input_queue_entry *entry = (mrt_input_queue_entry *)&entry; /* not NULL: the call must set it */
  const mrt_status status = mrt_input_queue_enqueue_lock(l->x, &entry);
  pthread_mutex_lock(&l->mutex);
  l->status = status;
  l->entry = entry;
  l->done = 1;
  pthread_mutex_unlock(&l->mutex);
  return NULL;
}

static int locker_done(locker *l) {
  pthread_mutex_lock(&l->mutex);
  const int done = l->done;
  pthread_mutex_unlock(&l->mutex);
  return done;
}

static void sleep_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

/* Fills x's ring with single-sample entries. */
static void fill_ring(mrt_input_queue *x, float *in) {
  for (int s = 0; s < kRingEntries; ++s) {
    mrt_input_queue_entry *entry = lock_input(x);
    entry->data = in + 2 * s;
    entry->size_bytes = 8;
    assert_int_equal(mrt_input_queue_enqueue_complete(x), MRT_OK);
  }
}

/* A full ring: the producer's lock waits for the device to free a slot
 * (then gets slot 0 again), or returns MRT_CANCELLED when disconnected. */
static void test_lock_blocks_while_full_until_freed_or_disconnected(void **state) {
  (void)state;
  queue_fixture f = make_queue_fixture(g_model);
  float in[16] = {0}, device[kTransferFloats];
  fill_ring(f.x, in);

  locker l = {f.x, PTHREAD_MUTEX_INITIALIZER, 0, MRT_INTERNAL, NULL};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, lock_in_thread, &l), 0);
  sleep_ms(50);
  assert_false(locker_done(&l)); /* still blocked: no slot is free */
  assert_int_equal(mrt_queue_manager_transfer(f.manager, "x", device), MRT_OK); /* frees four */
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(l.status, MRT_OK);
  assert_non_null(l.entry);
  assert_int_equal(l.entry->slot, 0);
  l.entry->data = in;
  l.entry->size_bytes = 32;
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);
  for (int s = 0; s < 3; ++s) { /* full again */
    mrt_input_queue_entry *entry = lock_input(f.x);
    entry->data = in;
    entry->size_bytes = 8;
    assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);
  }

  l.done = 0;
  assert_int_equal(pthread_create(&thread, NULL, lock_in_thread, &l), 0);
  sleep_ms(50);
  assert_false(locker_done(&l));
  assert_int_equal(mrt_input_queue_disconnect(f.x), MRT_OK); /* wakes the blocked lock */
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(l.status, MRT_CANCELLED);
  assert_null(l.entry);
  mrt_input_queue_entry *entry = NULL;
  assert_int_equal(mrt_input_queue_enqueue_lock(f.x, &entry), MRT_CANCELLED);
  assert_string_equal(mrt_last_error_message(), "mrt_input_queue_enqueue_lock: input queue 'x' is disconnected");
  assert_null(entry);
  pthread_mutex_destroy(&l.mutex);
  mrt_queue_manager_destroy(f.manager);
}

static void expect_failure(mrt_status got, mrt_status expected, const char *message) {
  assert_int_equal(got, expected);
  assert_string_equal(mrt_last_error_message(), message);
}

/* Each misuse gets its code and a message naming the queue, and leaves
 * the queue usable. */
static void test_misuse_is_refused_and_the_queue_stays_usable(void **state) {
  (void)state;
  queue_fixture f = make_queue_fixture(g_model);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION,
                 "mrt_input_queue_enqueue_complete: input queue 'x': no entry is locked (call "
                 "mrt_input_queue_enqueue_lock first; a reset or disconnect drops a locked entry)");
  expect_failure(mrt_output_queue_enqueue_complete(f.y), MRT_FAILED_PRECONDITION,
                 "mrt_output_queue_enqueue_complete: output queue 'y': no entry is locked (call "
                 "mrt_output_queue_enqueue_lock first; a reset or disconnect drops a locked entry)");
  mrt_input_queue_entry *entry = NULL;
  expect_failure(mrt_input_queue_enqueue_lock(NULL, &entry), MRT_INVALID_ARGUMENT,
                 "mrt_input_queue_enqueue_lock: queue must not be NULL");
  expect_failure(mrt_input_queue_enqueue_lock(f.x, NULL), MRT_INVALID_ARGUMENT,
                 "mrt_input_queue_enqueue_lock: out_entry must not be NULL");
  expect_failure(mrt_output_queue_enqueue_complete(NULL), MRT_INVALID_ARGUMENT,
                 "mrt_output_queue_enqueue_complete: queue must not be NULL");

  /* A bad entry stays locked, its user data not taken: fixed, it completes. */
  float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  counters c = {0, 0, 0};
  entry = lock_input(f.x);
  entry->data = in;
  entry->size_bytes = 12;
  entry->user_data = &c;
  entry->user_data_free = on_free;
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_INVALID_ARGUMENT,
                 "mrt_input_queue_enqueue_complete: input queue 'x': 12 bytes is not a positive multiple of the "
                 "sample size (8 bytes of F32[4,2])");
  entry->size_bytes = 32;
  entry->data = NULL;
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_INVALID_ARGUMENT,
                 "mrt_input_queue_enqueue_complete: input queue 'x': data must not be NULL");
  assert_int_equal(c.freed, 0);
  assert_ptr_equal(lock_input(f.x), entry);

  /* enqueue and flush would publish the entry being filled. */
  const char *locked = "input queue 'x': an entry is locked (mrt_input_queue_enqueue_lock): complete it with "
                       "mrt_input_queue_enqueue_complete first";
  char message[512];
  snprintf(message, sizeof message, "mrt_input_queue_enqueue: %s", locked);
  expect_failure(mrt_input_queue_enqueue(f.x, in, 32, NULL, NULL, &c, on_free), MRT_FAILED_PRECONDITION, message);
  assert_int_equal(c.freed, 1); /* enqueue's own user data, freed as on any failure */
  snprintf(message, sizeof message, "mrt_input_queue_flush: %s", locked);
  expect_failure(mrt_input_queue_flush(f.x), MRT_FAILED_PRECONDITION, message);
  snprintf(message, sizeof message, "mrt_queue_manager_flush_all: %s", locked);
  expect_failure(mrt_queue_manager_flush_all(f.manager), MRT_FAILED_PRECONDITION, message);

  entry->data = in;
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION,
                 "mrt_input_queue_enqueue_complete: input queue 'x': no entry is locked (call "
                 "mrt_input_queue_enqueue_lock first; a reset or disconnect drops a locked entry)");
  mrt_output_queue_entry *slot = lock_output(f.y);
  expect_failure(mrt_output_queue_enqueue(f.y, out, 32, NULL, NULL, NULL), MRT_FAILED_PRECONDITION,
                 "mrt_output_queue_enqueue: output queue 'y': an entry is locked (mrt_output_queue_enqueue_lock): "
                 "complete it with mrt_output_queue_enqueue_complete first");
  slot->data = out;
  slot->size_bytes = 32;
  assert_int_equal(mrt_output_queue_enqueue_complete(f.y), MRT_OK);
  run_device_once(f.manager);
  for (int i = 0; i < 8; ++i) assert_true(out[i] == in[i] + 1.0f);
  assert_int_equal(c.freed, 2); /* the locked entry's: without callbacks, dropped at complete */

  /* A reset drops the lock. */
  entry = lock_input(f.x);
  assert_int_equal(mrt_input_queue_reset(f.x), MRT_OK);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION,
                 "mrt_input_queue_enqueue_complete: input queue 'x': no entry is locked (call "
                 "mrt_input_queue_enqueue_lock first; a reset or disconnect drops a locked entry)");

  /* A disconnect too: complete is cancelled, and the user data freed once. */
  entry = lock_input(f.x);
  entry->data = in;
  entry->size_bytes = 8;
  entry->user_data = &c;
  entry->user_data_free = on_free;
  assert_int_equal(mrt_queue_manager_disconnect_all(f.manager), MRT_OK);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_CANCELLED,
                 "mrt_input_queue_enqueue_complete: input queue 'x' is disconnected");
  assert_int_equal(c.freed, 3);
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION);
  assert_int_equal(c.freed, 3);

  /* Reset: usable again, from slot 0. */
  assert_int_equal(mrt_queue_manager_reset_all(f.manager), MRT_OK);
  entry = lock_input(f.x);
  assert_int_equal(entry->slot, 0);
  entry->data = in;
  entry->size_bytes = 32;
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(f.y, out, 32, NULL, NULL, NULL), MRT_OK);
  memset(out, 0, sizeof out);
  run_device_once(f.manager);
  for (int i = 0; i < 8; ++i) assert_true(out[i] == in[i] + 1.0f);
  mrt_queue_manager_destroy(f.manager);
}

/* Locks x's next entry and gives it one sample of `in` and user data `c`. */
static mrt_input_queue_entry *lock_with_user_data(mrt_input_queue *x, float *in, counters *c) {
  mrt_input_queue_entry *entry = lock_input(x);
  entry->data = in;
  entry->size_bytes = 8;
  entry->user_data = c;
  entry->user_data_free = on_free;
  return entry;
}

/* The user data of a locked entry is the library's from the lock on: it is
 * freed exactly once whatever drops the entry (reset, a lock after a
 * disconnect, destroying the manager), and a complete after the drop is
 * refused without freeing it again. */
static void test_user_data_of_a_dropped_entry_is_freed_once(void **state) {
  (void)state;
  queue_fixture f = make_queue_fixture(g_model);
  float in[8] = {0}, out[8];
  const char *not_locked = "mrt_input_queue_enqueue_complete: input queue 'x': no entry is locked (call "
                           "mrt_input_queue_enqueue_lock first; a reset or disconnect drops a locked entry)";

  /* A reset frees it in the call; complete is refused afterwards. */
  counters reset = {0, 0, 0};
  lock_with_user_data(f.x, in, &reset);
  assert_int_equal(mrt_input_queue_reset(f.x), MRT_OK);
  assert_int_equal(reset.freed, 1);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION, not_locked);
  assert_int_equal(reset.freed, 1);

  /* So does reset_all, for an output entry too; a refused (bad) complete
   * leaves the user data locked with the entry until then. */
  counters input = {0, 0, 0}, output = {0, 0, 0};
  mrt_input_queue_entry *entry = lock_with_user_data(f.x, in, &input);
  entry->size_bytes = 12;
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_INVALID_ARGUMENT);
  assert_int_equal(input.freed, 0);
  mrt_output_queue_entry *slot = lock_output(f.y);
  slot->user_data = &output;
  slot->user_data_free = on_free;
  assert_int_equal(mrt_queue_manager_reset_all(f.manager), MRT_OK);
  assert_int_equal(input.freed, 1);
  assert_int_equal(output.freed, 1);
  assert_int_equal(mrt_output_queue_enqueue_complete(f.y), MRT_FAILED_PRECONDITION);
  assert_int_equal(output.freed, 1);

  /* Disconnected: the next lock drops the entry and frees its user data;
   * neither a complete nor a reset frees it again. */
  counters disconnected = {0, 0, 0};
  lock_with_user_data(f.x, in, &disconnected);
  assert_int_equal(mrt_input_queue_disconnect(f.x), MRT_OK); /* from any thread: frees nothing */
  assert_int_equal(disconnected.freed, 0);
  mrt_input_queue_entry *none = NULL;
  expect_failure(mrt_input_queue_enqueue_lock(f.x, &none), MRT_CANCELLED,
                 "mrt_input_queue_enqueue_lock: input queue 'x' is disconnected");
  assert_null(none);
  assert_int_equal(disconnected.freed, 1);
  expect_failure(mrt_input_queue_enqueue_complete(f.x), MRT_FAILED_PRECONDITION, not_locked);
  assert_int_equal(mrt_input_queue_reset(f.x), MRT_OK);
  assert_int_equal(disconnected.freed, 1);

  /* Disconnected and then reset: freed by the reset. */
  counters then_reset = {0, 0, 0};
  lock_with_user_data(f.x, in, &then_reset);
  assert_int_equal(mrt_queue_manager_disconnect_all(f.manager), MRT_OK);
  assert_int_equal(mrt_queue_manager_reset_all(f.manager), MRT_OK);
  assert_int_equal(then_reset.freed, 1);

  /* Published entries are as enqueue's: freed once the device is done. */
  counters published = {0, 0, 0};
  entry = lock_with_user_data(f.x, in, &published);
  entry->size_bytes = 32;
  assert_int_equal(mrt_input_queue_enqueue_complete(f.x), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(f.y, out, 32, NULL, NULL, NULL), MRT_OK);
  run_device_once(f.manager);
  assert_int_equal(published.freed, 1);

  /* Still locked when the manager goes (connected, and disconnected). */
  counters at_destroy = {0, 0, 0};
  lock_with_user_data(f.x, in, &at_destroy);
  slot = lock_output(f.y);
  slot->user_data = &at_destroy;
  slot->user_data_free = on_free;
  mrt_queue_manager_destroy(f.manager);
  assert_int_equal(at_destroy.freed, 2);
  f = make_queue_fixture(g_model);
  counters disconnected_at_destroy = {0, 0, 0};
  lock_with_user_data(f.x, in, &disconnected_at_destroy);
  assert_int_equal(mrt_input_queue_disconnect(f.x), MRT_OK);
  mrt_queue_manager_destroy(f.manager);
  assert_int_equal(disconnected_at_destroy.freed, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_entries_are_ring_slots_and_pass_values),
      cmocka_unit_test(test_lock_blocks_while_full_until_freed_or_disconnected),
      cmocka_unit_test(test_misuse_is_refused_and_the_queue_stays_usable),
      cmocka_unit_test(test_user_data_of_a_dropped_entry_is_freed_once),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
