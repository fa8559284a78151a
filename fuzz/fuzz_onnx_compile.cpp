// fuzz_onnx_compile: the input is one ONNX model (protobuf bytes), compiled
// with mrt_onnx_compile_memory() for a small simulated IPU (ipu-model-small,
// so that a compile is quick) at batch 2. A model that compiles is written
// to memory as a PopEF file and loaded back. Seeds: fuzz/corpus/onnx/
// (fuzz/make_onnx_corpus.py).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using mrt_fuzz::checkStatus;
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.target = "ipu-model-small";
  options.batch_size = 2;
  mrt_model *model = nullptr;
  const mrt_status status = mrt_onnx_compile_memory(data, size, &options, &model);
  checkStatus(status, "mrt_onnx_compile_memory");
  if (status != MRT_OK) return 0;
  std::size_t bytes = 0;
  checkStatus(mrt_model_write_to_memory(model, nullptr, 0, &bytes), "mrt_model_write_to_memory");
  std::vector<unsigned char> file(bytes);
  checkStatus(mrt_model_write_to_memory(model, file.data(), file.size(), &bytes), "mrt_model_write_to_memory");
  mrt_model_destroy(model);
  // What the frontend wrote must load.
  mrt_model *loaded = nullptr;
  const mrt_status load = mrt_model_load_from_memory(file.data(), bytes, &loaded);
  if (load != MRT_OK) {
    std::fprintf(stderr, "mrt-fuzz: a compiled ONNX model does not load back: %s: %s\n", mrt_status_string(load),
                 mrt_last_error_message());
    std::abort();
  }
  mrt_model_destroy(loaded);
  return 0;
}
