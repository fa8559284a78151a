/* The log callback: levels, replacement, user_data_free exactly once (when
 * replaced, when registration fails and at library unload). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mrt_c.h"

enum { MAX_RECORDS = 16 };

typedef struct {
  int count;
  mrt_log_level levels[MAX_RECORDS];
  char messages[MAX_RECORDS][160];
  int frees;
  mrt_status reentrant_status; /* what replacing the callback from inside it gave */
  int try_reentrant;
} recorder;

static void record(mrt_log_level level, const char *message, void *user_data) {
  recorder *r = user_data;
  if (r->try_reentrant) {
    r->try_reentrant = 0;
    r->reentrant_status = mrt_set_log_callback(NULL, NULL, NULL);
  }
  if (r->count < MAX_RECORDS) {
    r->levels[r->count] = level;
    snprintf(r->messages[r->count], sizeof r->messages[0], "%s", message);
  }
  r->count++;
}

static void count_free(void *user_data) { ((recorder *)user_data)->frees++; }

static void log_all_levels(const char *tag) {
  char text[64];
  static const mrt_log_level levels[] = {MRT_LOG_ERR, MRT_LOG_WARN, MRT_LOG_INFO, MRT_LOG_DEBUG,
                                         MRT_LOG_TRACE};
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; ++i) {
    snprintf(text, sizeof text, "%s-%d", tag, (int)levels[i]);
    assert_int_equal(mrt_log_message(levels[i], text), MRT_OK);
  }
}

static void callback_receives_messages_at_the_set_level(void **state) {
  (void)state;
  recorder r = {0};
  assert_int_equal(mrt_set_log_callback(record, &r, count_free), MRT_OK);

  assert_int_equal(mrt_set_log_level(MRT_LOG_INFO), MRT_OK);
  assert_int_equal(mrt_get_log_level(), MRT_LOG_INFO);
  log_all_levels("a");
  assert_int_equal(r.count, 3);
  assert_int_equal(r.levels[0], MRT_LOG_ERR);
  assert_string_equal(r.messages[0], "a-1");
  assert_int_equal(r.levels[1], MRT_LOG_WARN);
  assert_string_equal(r.messages[1], "a-2");
  assert_int_equal(r.levels[2], MRT_LOG_INFO);
  assert_string_equal(r.messages[2], "a-3");

  r.count = 0;
  assert_int_equal(mrt_set_log_level(MRT_LOG_TRACE), MRT_OK);
  log_all_levels("b");
  assert_int_equal(r.count, 5);
  assert_int_equal(r.levels[4], MRT_LOG_TRACE);
  assert_string_equal(r.messages[4], "b-5");

  r.count = 0;
  assert_int_equal(mrt_set_log_level(MRT_LOG_OFF), MRT_OK);
  log_all_levels("c");
  assert_int_equal(r.count, 0);

  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(r.frees, 1);
  assert_int_equal(mrt_set_log_level(MRT_LOG_WARN), MRT_OK);
}

static void failed_calls_are_logged_at_debug(void **state) {
  (void)state;
  recorder r = {0};
  assert_int_equal(mrt_set_log_callback(record, &r, count_free), MRT_OK);
  assert_int_equal(mrt_set_log_level(MRT_LOG_DEBUG), MRT_OK);
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR + 3, 0), MRT_VERSION_MISMATCH);
  assert_int_equal(r.count, 1);
  assert_int_equal(r.levels[0], MRT_LOG_DEBUG);
  assert_non_null(strstr(r.messages[0], "mrt_check_version failed with MRT_VERSION_MISMATCH"));
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_set_log_level(MRT_LOG_WARN), MRT_OK);
}

static void replacing_frees_the_previous_user_data_once(void **state) {
  (void)state;
  recorder first = {0}, second = {0};
  assert_int_equal(mrt_set_log_callback(record, &first, count_free), MRT_OK);
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, "to first"), MRT_OK);
  assert_int_equal(mrt_set_log_callback(record, &second, count_free), MRT_OK);
  assert_int_equal(first.frees, 1);
  assert_int_equal(second.frees, 0);
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, "to second"), MRT_OK);
  assert_int_equal(first.count, 1);
  assert_string_equal(first.messages[0], "to first");
  assert_int_equal(second.count, 1);
  assert_string_equal(second.messages[0], "to second");

  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(first.frees, 1);
  assert_int_equal(second.frees, 1);
}

static void user_data_with_no_callback_is_freed_at_once(void **state) {
  (void)state;
  recorder r = {0};
  assert_int_equal(mrt_set_log_callback(NULL, &r, count_free), MRT_OK);
  assert_int_equal(r.frees, 1);
}

static void callback_cannot_replace_itself(void **state) {
  (void)state;
  recorder r = {0};
  r.try_reentrant = 1;
  assert_int_equal(mrt_set_log_callback(record, &r, count_free), MRT_OK);
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, "first message"), MRT_OK);
  assert_int_equal(r.reentrant_status, MRT_FAILED_PRECONDITION);
  assert_int_equal(r.count, 1);
  assert_string_equal(r.messages[0], "first message");
  assert_int_equal(r.frees, 0); /* still registered */
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, "second message"), MRT_OK);
  assert_int_equal(r.count, 2);
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(r.frees, 1);
}

static void bad_levels_and_null_message_are_rejected(void **state) {
  (void)state;
  assert_int_equal(mrt_set_log_level(42), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "log level 42 is not in 0..5"));
  assert_int_equal(mrt_get_log_level(), MRT_LOG_WARN);
  assert_int_equal(mrt_log_message(MRT_LOG_OFF, "x"), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "log level 0 is not in 1..5"));
  assert_int_equal(mrt_set_log_level(-3), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "log level -3 is not in 0..5"));
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, NULL), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "message must not be NULL"));
}

static void write_byte(void *user_data) {
  int fd = *(int *)user_data;
  ssize_t written = write(fd, "F", 1);
  (void)written;
}

static void user_data_is_freed_once_at_unload(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    static int write_fd;
    write_fd = fds[1];
    close(fds[0]);
    mrt_set_log_callback(record, &write_fd, write_byte);
    exit(0); /* the library's destructors run here */
  }
  close(fds[1]);
  char buffer[8];
  ssize_t total = 0, n;
  while ((n = read(fds[0], buffer + total, sizeof buffer - (size_t)total)) > 0) total += n;
  close(fds[0]);
  int wstatus = 0;
  assert_int_equal(waitpid(child, &wstatus, 0), child);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 0);
  assert_int_equal(total, 1);
  assert_int_equal(buffer[0], 'F');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(callback_receives_messages_at_the_set_level),
      cmocka_unit_test(failed_calls_are_logged_at_debug),
      cmocka_unit_test(replacing_frees_the_previous_user_data_once),
      cmocka_unit_test(user_data_with_no_callback_is_freed_at_once),
      cmocka_unit_test(callback_cannot_replace_itself),
      cmocka_unit_test(bad_levels_and_null_message_are_rejected),
      cmocka_unit_test(user_data_is_freed_once_at_unload),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
