/* Status strings, versions and the copy-out of the last error message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"

static void every_status_has_its_own_name(void **state) {
  (void)state;
  static const struct { mrt_status code; const char *prefix; } expected[] = {
      {MRT_OK, "MRT_OK:"},
      {MRT_INVALID_ARGUMENT, "MRT_INVALID_ARGUMENT:"},
      {MRT_NOT_FOUND, "MRT_NOT_FOUND:"},
      {MRT_FAILED_PRECONDITION, "MRT_FAILED_PRECONDITION:"},
      {MRT_RESOURCE_EXHAUSTED, "MRT_RESOURCE_EXHAUSTED:"},
      {MRT_DEADLINE_EXCEEDED, "MRT_DEADLINE_EXCEEDED:"},
      {MRT_CANCELLED, "MRT_CANCELLED:"},
      {MRT_UNAVAILABLE, "MRT_UNAVAILABLE:"},
      {MRT_DEVICE_ERROR, "MRT_DEVICE_ERROR:"},
      {MRT_CORRUPT_MODEL, "MRT_CORRUPT_MODEL:"},
      {MRT_VERSION_MISMATCH, "MRT_VERSION_MISMATCH:"},
      {MRT_UNIMPLEMENTED, "MRT_UNIMPLEMENTED:"},
      {MRT_INTERNAL, "MRT_INTERNAL:"},
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
    const char *text = mrt_status_string(expected[i].code);
    assert_non_null(text);
    assert_int_equal(strncmp(text, expected[i].prefix, strlen(expected[i].prefix)), 0);
  }
}

static void status_codes_are_stable(void **state) {
  (void)state;
  /* The ABI promise: these numbers never change. */
  assert_int_equal(MRT_OK, 0);
  assert_int_equal(MRT_INVALID_ARGUMENT, 1);
  assert_int_equal(MRT_NOT_FOUND, 2);
  assert_int_equal(MRT_FAILED_PRECONDITION, 3);
  assert_int_equal(MRT_RESOURCE_EXHAUSTED, 4);
  assert_int_equal(MRT_DEADLINE_EXCEEDED, 5);
  assert_int_equal(MRT_CANCELLED, 6);
  assert_int_equal(MRT_UNAVAILABLE, 7);
  assert_int_equal(MRT_DEVICE_ERROR, 8);
  assert_int_equal(MRT_CORRUPT_MODEL, 9);
  assert_int_equal(MRT_VERSION_MISMATCH, 10);
  assert_int_equal(MRT_UNIMPLEMENTED, 11);
  assert_int_equal(MRT_INTERNAL, 12);
}

static void unknown_status_is_named_unknown(void **state) {
  (void)state;
  assert_string_equal(mrt_status_string(-1), "unknown status code");
  assert_string_equal(mrt_status_string(9999), "unknown status code");
}

static void version_string_matches_header(void **state) {
  (void)state;
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", MRT_VERSION_MAJOR, MRT_VERSION_MINOR,
           MRT_VERSION_PATCH);
  assert_string_equal(mrt_version_string(), expected);
  int major = -1, minor = -1, patch = -1;
  mrt_version(&major, &minor, &patch);
  assert_int_equal(major, MRT_VERSION_MAJOR);
  assert_int_equal(minor, MRT_VERSION_MINOR);
  assert_int_equal(patch, MRT_VERSION_PATCH);
  mrt_version(NULL, NULL, NULL); /* any part may be skipped */
}

static void check_version_accepts_same_major_older_minor(void **state) {
  (void)state;
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR), MRT_OK);
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR, 0), MRT_OK);
}

static void check_version_rejects_other_major_or_newer_minor(void **state) {
  (void)state;
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR + 1, 0), MRT_VERSION_MISMATCH);
  char expected[64];
  snprintf(expected, sizeof expected, "caller needs libmrt %d.0, this library is %s",
           MRT_VERSION_MAJOR + 1, mrt_version_string());
  assert_non_null(strstr(mrt_last_error_message(), expected));
  assert_non_null(strstr(mrt_last_error_message(), "mrt_check_version"));

  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR + 1), MRT_VERSION_MISMATCH);
  assert_int_equal(mrt_check_version(-1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "version -1.0 is not a version"));
}

static void success_keeps_the_last_error(void **state) {
  (void)state;
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR + 7, 0), MRT_VERSION_MISMATCH);
  char before[256];
  snprintf(before, sizeof before, "%s", mrt_last_error_message());
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR, 0), MRT_OK);
  assert_string_equal(mrt_last_error_message(), before);
}

static void copy_truncates_and_reports_full_length(void **state) {
  (void)state;
  assert_int_equal(mrt_check_version(MRT_VERSION_MAJOR + 1, 0), MRT_VERSION_MISMATCH);
  const char *message = mrt_last_error_message();
  size_t full = strlen(message);
  assert_true(full > 10);

  size_t length = 0;
  assert_int_equal(mrt_last_error_message_copy(NULL, 0, &length), MRT_OK);
  assert_int_equal(length, full);

  char small[8];
  memset(small, 'x', sizeof small);
  assert_int_equal(mrt_last_error_message_copy(small, sizeof small, &length), MRT_OK);
  assert_int_equal(length, full);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, mrt_last_error_message(), sizeof small - 1);

  char big[512];
  assert_int_equal(mrt_last_error_message_copy(big, sizeof big, NULL), MRT_OK);
  assert_string_equal(big, mrt_last_error_message());

  /* A bad call to the copy function does not replace the message it copies. */
  assert_int_equal(mrt_last_error_message_copy(NULL, 4, &length), MRT_INVALID_ARGUMENT);
  assert_string_equal(big, mrt_last_error_message());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_status_has_its_own_name),
      cmocka_unit_test(status_codes_are_stable),
      cmocka_unit_test(unknown_status_is_named_unknown),
      cmocka_unit_test(version_string_matches_header),
      cmocka_unit_test(check_version_accepts_same_major_older_minor),
      cmocka_unit_test(check_version_rejects_other_major_or_newer_minor),
      cmocka_unit_test(success_keeps_the_last_error),
      cmocka_unit_test(copy_truncates_and_reports_full_length),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
