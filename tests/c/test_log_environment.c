/* MRT_LOG_LEVEL and MRT_LOG_DEST, set by ctest before the process starts:
 * messages at or above the level land in the destination file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"

static void environment_sets_level_and_file(void **state) {
  (void)state;
  const char *path = getenv("MRT_LOG_DEST");
  assert_non_null(path);
  remove(path);
  assert_int_equal(mrt_get_log_level(), MRT_LOG_INFO); /* from MRT_LOG_LEVEL=info */
  assert_int_equal(mrt_log_message(MRT_LOG_INFO, "info line for the file"), MRT_OK);
  assert_int_equal(mrt_log_message(MRT_LOG_DEBUG, "debug line not wanted"), MRT_OK);

  FILE *file = fopen(path, "r");
  assert_non_null(file);
  char content[4096] = {0};
  size_t n = fread(content, 1, sizeof content - 1, file);
  fclose(file);
  assert_true(n > 0);
  assert_non_null(strstr(content, "[mrt] [info]"));
  assert_non_null(strstr(content, "info line for the file"));
  assert_null(strstr(content, "debug line not wanted"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(environment_sets_level_and_file)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
