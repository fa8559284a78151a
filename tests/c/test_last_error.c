/* The last error message is per thread: two threads failing at once each
 * read back their own message. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"

typedef struct {
  int major_to_ask;            /* each thread asks for a different bad version */
  pthread_barrier_t *barrier;
  char seen[256];
  mrt_status status;
} thread_case;

static void *fail_then_read(void *arg) {
  thread_case *c = arg;
  c->status = mrt_check_version(c->major_to_ask, 0);
  /* Both threads have failed before either reads its message. */
  pthread_barrier_wait(c->barrier);
  snprintf(c->seen, sizeof c->seen, "%s", mrt_last_error_message());
  pthread_barrier_wait(c->barrier);
  return NULL;
}

static void threads_do_not_see_each_others_message(void **state) {
  (void)state;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  thread_case cases[2] = {{MRT_VERSION_MAJOR + 11, &barrier, "", MRT_OK},
                          {MRT_VERSION_MAJOR + 22, &barrier, "", MRT_OK}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, fail_then_read, &cases[i]);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);

  for (int i = 0; i < 2; ++i) {
    assert_int_equal(cases[i].status, MRT_VERSION_MISMATCH);
    char own[32];
    snprintf(own, sizeof own, "needs libmrt %d.0,", cases[i].major_to_ask);
    assert_non_null(strstr(cases[i].seen, own));
    char other[32];
    snprintf(other, sizeof other, "needs libmrt %d.0,", cases[1 - i].major_to_ask);
    assert_null(strstr(cases[i].seen, other));
  }
}

static void *read_fresh_thread(void *arg) {
  snprintf(arg, 256, "%s", mrt_last_error_message());
  return NULL;
}

static void a_new_thread_starts_with_an_empty_message(void **state) {
  (void)state;
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR + 1, 0), MRT_VERSION_MISMATCH);
  char seen[256] = "not written";
  pthread_t thread;
  pthread_create(&thread, NULL, read_fresh_thread, seen);
  pthread_join(thread, NULL);
  assert_string_equal(seen, "");
  assert_true(strlen(mrt_last_error_message()) > 0); /* ours is still there */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_do_not_see_each_others_message),
      cmocka_unit_test(a_new_thread_starts_with_an_empty_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
