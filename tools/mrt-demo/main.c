/* mrt-demo: shows what libmrt offers, through the public C API only.
 * It grows with the library: today the version and logging. */
#include <stdio.h>
#include <stdlib.h>

#include "mrt_c.h"

static void print_log(mrt_log_level level, const char *message, void *user_data) {
  (void)user_data;
  printf("  [log %d] %s\n", (int)level, message);
}

int main(void) {
  if (mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR) != MRT_OK) {
    fprintf(stderr, "mrt-demo: %s\n", mrt_last_error_message());
    return EXIT_FAILURE;
  }
  printf("libmrt %s (header %d.%d.%d)\n", mrt_version_string(), MRT_VERSION_MAJOR,
         MRT_VERSION_MINOR, MRT_VERSION_PATCH);

  printf("Errors come back as a status and a message naming the bad value:\n");
  mrt_status status = mrt_check_version(MRT_VERSION_MAJOR + 1, 0);
  printf("  %s\n  %s\n", mrt_status_string(status), mrt_last_error_message());

  printf("Log messages can be routed to the application:\n");
  mrt_set_log_callback(print_log, NULL, NULL);
  mrt_set_log_level(MRT_LOG_INFO);
  mrt_log_message(MRT_LOG_INFO, "hello from the demo through libmrt's logger");
  mrt_set_log_callback(NULL, NULL, NULL);
  return EXIT_SUCCESS;
}
