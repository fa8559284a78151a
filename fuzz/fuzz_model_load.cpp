// fuzz_model_load: the input is one PopEF file, loaded with mrt_model_load().
// A model that loads is then read back through every model query of the C
// API, touching each borrowed string, shape and data section, so that a
// loaded model pointing outside its file is found here too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "harness.hpp"

namespace {

volatile std::uint64_t g_sink;  // keeps the reads below from being optimised away

void touch(const char *text) {
  if (text != nullptr) g_sink = g_sink + std::strlen(text);
}

void touch(const void *data, std::uint64_t size) {
  if (data == nullptr || size == 0) return;
  const auto *bytes = static_cast<const unsigned char *>(data);
  g_sink = g_sink + bytes[0] + bytes[size - 1];
}

void readBack(const mrt_model *model) {
  using mrt_fuzz::checkStatus;
  mrt_model_info info{};
  info.struct_size = sizeof(info);
  checkStatus(mrt_model_get_info(model, &info), "mrt_model_get_info");
  touch(info.executable);
  touch(info.seed_handle);
  touch(info.package_hash);
  const void *data = nullptr;
  std::uint64_t size = 0;
  if (mrt_model_executable(model, &data, &size) == MRT_OK) touch(data, size);
  for (std::size_t i = 0; i < info.num_anchors; ++i) {
    mrt_anchor_info anchor{};
    anchor.struct_size = sizeof(anchor);
    checkStatus(mrt_model_anchor(model, i, &anchor), "mrt_model_anchor");
    touch(anchor.name);
    touch(anchor.handle);
    touch(anchor.remote_buffer);
    touch(anchor.shape, anchor.rank * sizeof(std::int64_t));
    touch(anchor.programs, anchor.num_programs * sizeof(std::uint64_t));
    mrt_anchor_info again{};
    again.struct_size = sizeof(again);
    if (anchor.name != nullptr) checkStatus(mrt_model_anchor_by_name(model, anchor.name, &again), "mrt_model_anchor_by_name");
    if (anchor.handle != nullptr) checkStatus(mrt_model_anchor_by_handle(model, anchor.handle, &again), "mrt_model_anchor_by_handle");
    if (anchor.name != nullptr && mrt_model_tensor_data(model, anchor.name, &data, &size) == MRT_OK) touch(data, size);
    std::uint64_t count = 0;
    if (anchor.name != nullptr && mrt_model_feed_data(model, anchor.name, &data, &size, &count) == MRT_OK) touch(data, size);
  }
  for (std::size_t i = 0; i < info.num_programs; ++i) {
    std::uint64_t index = 0;
    const char *name = nullptr;
    checkStatus(mrt_model_program(model, i, &index, &name), "mrt_model_program");
    touch(name);
  }
  for (int32_t phase : {MRT_PHASE_LOAD, MRT_PHASE_MAIN, MRT_PHASE_SAVE}) {
    const std::uint64_t *programs = nullptr;
    std::size_t count = 0;
    checkStatus(mrt_model_program_flow(model, phase, &programs, &count), "mrt_model_program_flow");
    touch(programs, count * sizeof(std::uint64_t));
  }
  const std::size_t options[] = {info.num_engine_options, info.num_device_options};
  for (int32_t set : {MRT_MODEL_ENGINE_OPTIONS, MRT_MODEL_DEVICE_OPTIONS}) {
    for (std::size_t i = 0; i < options[set]; ++i) {
      const char *key = nullptr;
      const char *value = nullptr;
      checkStatus(mrt_model_option(model, set, i, &key, &value), "mrt_model_option");
      touch(key);
      touch(value);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  mrt_model *model = mrt_fuzz::loadModel(data, size);
  if (model == nullptr) return 0;
  readBack(model);
  mrt_model_destroy(model);
  return 0;
}
