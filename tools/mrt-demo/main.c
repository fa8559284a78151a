/* mrt-demo MODEL.popef: a tour of libmrt through the public C API only -
 * the library version, the simulated IPU system, a model's anchors and
 * weights, and a device attached for it. `make demo` runs it on the mlp
 * example model written by mrt-gen. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrt_c.h"

static int failed(const char *what, mrt_status status) {
  fprintf(stderr, "mrt-demo: %s failed: %s\n  %s\n", what, mrt_status_string(status),
          mrt_last_error_message());
  return EXIT_FAILURE;
}

static const char *type_name(int32_t type) {
  static const char *const names[] = {"bool", "u8",  "s8",  "u16", "s16", "s32",
                                      "u32",  "s64", "u64", "f16", "f32", "f64"};
  return type >= 0 && type <= MRT_F64 ? names[type] : "?";
}

static int print_system(mrt_device_manager *manager) {
  int64_t version = 0;
  size_t count = 0;
  mrt_status s = mrt_device_manager_ipu_hardware_version(manager, &version);
  if (s == MRT_OK) s = mrt_device_manager_device_count(manager, &count);
  if (s != MRT_OK) return failed("reading the simulated system", s);
  printf("\nSimulated IPU system (IPU version %" PRId64 "; set MRT_HWSIM_IPUS to change it):\n",
         version);
  printf("  %-4s %-6s %-8s %-7s %s\n", "id", "IPUs", "target", "tiles", "state");
  for (size_t i = 0; i < count; ++i) {
    mrt_device_info info = {0};
    info.struct_size = sizeof info;
    if ((s = mrt_device_manager_device_info(manager, i, &info)) != MRT_OK)
      return failed("mrt_device_manager_device_info", s);
    printf("  %-4" PRId64 " %-6" PRId64 " %-8s %-7" PRId64 " %s\n", info.id, info.num_ipus,
           info.target_name, info.tiles_per_ipu * info.num_ipus, info.is_free ? "free" : "busy");
  }
  return EXIT_SUCCESS;
}

static int print_model(const mrt_model *model) {
  mrt_model_info info = {0};
  info.struct_size = sizeof info;
  mrt_status s = mrt_model_get_info(model, &info);
  if (s != MRT_OK) return failed("mrt_model_get_info", s);
  printf("\nModel '%s': %" PRIu64 " IPU(s), IPU version %u, %zu anchors, %zu TensorData blobs\n",
         info.executable, info.num_ipus, info.ipu_version, info.num_anchors, info.num_tensor_data);
  printf("  %-8s %-6s %-5s %-14s %-10s %s\n", "anchor", "dir", "type", "shape", "bytes", "data");
  for (size_t i = 0; i < info.num_anchors; ++i) {
    mrt_anchor_info anchor = {0};
    anchor.struct_size = sizeof anchor;
    if ((s = mrt_model_anchor(model, i, &anchor)) != MRT_OK) return failed("mrt_model_anchor", s);
    char shape[64] = "[";
    size_t used = 1;
    for (size_t d = 0; d < anchor.rank && used < sizeof shape; ++d)
      used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%" PRId64, d ? "," : "",
                               anchor.shape[d]);
    if (used < sizeof shape - 1) snprintf(shape + used, sizeof shape - used, "]");
    const char *source = anchor.data_source == MRT_DATA_SOURCE_TENSOR_DATA ? "TensorData"
                         : anchor.data_source == MRT_DATA_SOURCE_FEED_DATA ? "FeedData"
                                                                            : "user";
    printf("  %-8s %-6s %-5s %-14s %-10" PRId64 " %s\n", anchor.name,
           anchor.tensor_type == MRT_TENSOR_INPUT ? "in" : "out", type_name(anchor.data_type),
           shape, anchor.size_in_bytes, source);
  }
  return EXIT_SUCCESS;
}

static const char kUsage[] = "usage: mrt-demo MODEL.popef   (write one with: mrt-gen mlp -o mlp.popef)\n";

int main(int argc, char **argv) {
  /* The exit codes of every mrt-* tool (tools/common/tool_cli.hpp): 0 also
   * after --help and --version, 2 for a usage error. */
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Tours libmrt through its C API: the library version, the simulated IPU system,\n"
           "a model's anchors and weights, and a device attached for it.\n%s", kUsage);
    return EXIT_SUCCESS;
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("mrt-demo %d.%d.%d (libmrt)\n", MRT_VERSION_MAJOR, MRT_VERSION_MINOR, MRT_VERSION_PATCH);
    return EXIT_SUCCESS;
  }
  if (argc == 2 && argv[1][0] == '-') {
    fprintf(stderr, "mrt-demo: unknown option '%s' (see --help)\n", argv[1]);
    return 2;
  }
  if (argc != 2) {
    fprintf(stderr, "mrt-demo: expected one MODEL.popef (see --help)\n");
    return 2;
  }
  mrt_status s = mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR);
  if (s != MRT_OK) return failed("mrt_check_version", s);
  printf("libmrt %s\n", mrt_version_string());

  mrt_device_manager *manager = NULL;
  if ((s = mrt_device_manager_create(&manager)) != MRT_OK)
    return failed("mrt_device_manager_create", s);
  int rc = print_system(manager);

  mrt_model *model = NULL;
  const char *paths[] = {argv[1]};
  if (rc == EXIT_SUCCESS && (s = mrt_model_load(paths, 1, &model)) != MRT_OK)
    rc = failed("mrt_model_load", s);
  if (rc == EXIT_SUCCESS) rc = print_model(model);

  if (rc == EXIT_SUCCESS) {
    mrt_device *device = NULL;
    mrt_device_wait_config wait;
    mrt_device_wait_config_init(&wait);
    if ((s = mrt_device_manager_get_device_for_model(manager, model, &wait, &device)) != MRT_OK) {
      rc = failed("mrt_device_manager_get_device_for_model", s);
    } else {
      int64_t id = -1, ipus = 0;
      mrt_device_id(device, &id);
      mrt_device_num_ipus(device, &ipus);
      printf("\nAttached device %" PRId64 " (%" PRId64 " IPU) for the model; released on exit.\n",
             id, ipus);
      mrt_device_destroy(device);
    }
  }

  printf("\nAn error names the bad value, e.g. loading a missing file:\n");
  const char *missing[] = {"/nonexistent/model.popef"};
  mrt_model *none = NULL;
  s = mrt_model_load(missing, 1, &none);
  printf("  %s\n  %s\n", mrt_status_string(s), mrt_last_error_message());

  mrt_model_destroy(model);
  mrt_device_manager_destroy(manager);
  return rc;
}
