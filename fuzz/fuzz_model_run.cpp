// fuzz_model_run: the input is one PopEF file. It is loaded, a ModelRunner
// is created for it (validate_io_params on, small rings, a short flush
// timeout), one request runs with zero-filled inputs of the sizes the runner
// reports, and everything is destroyed. This is where a model whose metadata
// disagrees with its executable shows: the runner streams what the metadata
// says through buffers the executable sized.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness.hpp"

namespace {

using mrt_fuzz::checkStatus;

// Requests bigger than this are not sent (the harness's own buffers; what
// the runner allocates for the model is the library's business).
constexpr std::uint64_t kMaxRequestBytes = 64u << 20;
// How long the request may take before it is abandoned (the future is
// destroyed pending, then the runner): a hang shows as libFuzzer's -timeout.
constexpr std::int64_t kRequestWaitNs = 1'000'000'000;

struct Tensors {
  std::vector<std::vector<unsigned char>> buffers;
  std::vector<mrt_tensor_view> views;
};

// Zero-filled buffers for `descs`; false if they would be too big.
bool allocate(const mrt_data_desc *descs, std::size_t count, Tensors &out, std::uint64_t &total) {
  out.buffers.resize(count);
  out.views.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t size = descs[i].size_in_bytes;
    if (size < 0 || static_cast<std::uint64_t>(size) > kMaxRequestBytes - total) return false;
    total += static_cast<std::uint64_t>(size);
    out.buffers[i].assign(static_cast<std::size_t>(size), 0);
    out.views[i] = mrt_tensor_view{descs[i].name, out.buffers[i].data(), static_cast<std::uint64_t>(size)};
  }
  return true;
}

// `in` and `out` must outlive the request, which may still be pending when
// this returns: the caller destroys the runner (so the request completes or
// is cancelled) before them.
void runOnce(mrt_model_runner *runner, Tensors &in, Tensors &out) {
  const mrt_data_desc *inputs = nullptr;
  const mrt_data_desc *outputs = nullptr;
  std::size_t numInputs = 0;
  std::size_t numOutputs = 0;
  checkStatus(mrt_model_runner_execute_inputs(runner, &inputs, &numInputs), "mrt_model_runner_execute_inputs");
  checkStatus(mrt_model_runner_execute_outputs(runner, &outputs, &numOutputs), "mrt_model_runner_execute_outputs");
  std::uint64_t total = 0;
  if (!allocate(inputs, numInputs, in, total) || !allocate(outputs, numOutputs, out, total)) return;
  mrt_future *future = nullptr;
  const mrt_status status = mrt_model_runner_execute_async(runner, in.views.data(), in.views.size(),
                                                           out.views.data(), out.views.size(), 0, &future);
  checkStatus(status, "mrt_model_runner_execute_async");
  if (status != MRT_OK) return;
  const mrt_status result = mrt_future_wait(future, kRequestWaitNs);
  if (std::getenv("MRT_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "mrt-fuzz: the request: %s %s\n", mrt_status_string(result),
                 result == MRT_OK ? "" : mrt_future_error_message(future));
  }
  if (result == MRT_INTERNAL) {
    std::fprintf(stderr, "mrt-fuzz: the request failed with MRT_INTERNAL (a libmrt bug): %s\n",
                 mrt_future_error_message(future));
    std::abort();
  }
  mrt_future_destroy(future);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  mrt_model *model = mrt_fuzz::loadModel(data, size);
  if (model == nullptr) return 0;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.validate_io_params = true;
  config.check_package_hash = false;        // reach further than a mutated hash
  config.timeout_ns = 20'000'000;           // flush dummy data after 20 ms without input
  config.ring_buffer_size_multiplier = 1;
  config.request_tracepoints_buffer_size = 4;
  mrt_model_runner *runner = nullptr;
  const mrt_status status = mrt_model_runner_create(model, &config, &runner);
  checkStatus(status, "mrt_model_runner_create");
  if (status == MRT_OK) {
    Tensors in;
    Tensors out;
    runOnce(runner, in, out);
    mrt_model_runner_destroy(runner);
  }
  mrt_model_destroy(model);
  return 0;
}
