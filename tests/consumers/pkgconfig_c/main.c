/* A C application built with `pkg-config --cflags --libs mrt`. */
#include <stdio.h>
#include <string.h>

#include <mrt_c.h>

int main(void) {
  if (mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR) != MRT_OK) {
    fprintf(stderr, "version check failed: %s\n", mrt_last_error_message());
    return 1;
  }
  if (mrt_check_version(MRT_VERSION_MAJOR + 1, 0) != MRT_VERSION_MISMATCH ||
      strstr(mrt_last_error_message(), "caller needs libmrt") == NULL) {
    fprintf(stderr, "a mismatched version was not reported\n");
    return 1;
  }
  printf("pkg-config consumer: libmrt %s\n", mrt_version_string());
  return 0;
}
