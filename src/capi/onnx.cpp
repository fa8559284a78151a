// mrt_onnx_* (include/mrt_c.h, "Importing ONNX models"): the C face of the
// ONNX frontend in src/onnx/. Options are read as a sized input struct and
// resolved into onnx::OnnxOptions; the result is an ordinary mrt_model.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/sized_struct.hpp"
#include "capi/target.hpp"
#include "capi/user_data.hpp"
#include "onnx/frontend.hpp"

using mrt::Error;
using mrt::ErrorCode;

namespace {

static_assert(MRT_ONNX_OPTIONS_V1_SIZE == offsetof(mrt_onnx_options, input_shapes),
              "V1 ends where the appended fields begin");

mrt_onnx_options defaults() {
  mrt_onnx_options o{};
  o.struct_size = sizeof(mrt_onnx_options);
  o.target = "gc200";
  o.num_ipus = 1;
  o.replication_factor = 1;
  o.batch_size = 1;
  o.batching_dim = MRT_BATCHING_DISABLED;
  return o;
}

std::map<std::string, std::vector<std::int64_t>> inputShapes(const mrt_onnx_options &o) {
  if (o.num_input_shapes > 0) mrt::capi::requireNotNull(o.input_shapes, "options->input_shapes");
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (std::size_t i = 0; i < o.num_input_shapes; ++i) {
    const mrt_onnx_input_shape &s = o.input_shapes[i];
    const std::string which = fmt::format("options->input_shapes[{}]", i);
    mrt::capi::requireNotNull(s.name, (which + ".name").c_str());
    if (s.rank > 0) mrt::capi::requireNotNull(s.dims, (which + ".dims").c_str());
    if (!shapes.emplace(s.name, std::vector<std::int64_t>(s.dims, s.dims + s.rank)).second) {
      throw Error(ErrorCode::InvalidArgument, "{}: a second shape for '{}'", which, s.name);
    }
  }
  return shapes;
}

// The resolved options; `owned` keeps the caller's user_data until the
// compilation is over (its free function runs exactly once, also on failure).
mrt::onnx::OnnxOptions resolve(const mrt_onnx_options &o, const std::shared_ptr<mrt::capi::UserData> &owned) {
  mrt::onnx::OnnxOptions out;
  if (o.num_ipus == 0 || o.num_ipus > 64) {
    throw Error(ErrorCode::InvalidArgument, "options->num_ipus is {}; it must be 1 to 64", o.num_ipus);
  }
  if (o.replication_factor == 0 || o.replication_factor > 64) {
    throw Error(ErrorCode::InvalidArgument, "options->replication_factor is {}; it must be 1 to 64",
                o.replication_factor);
  }
  if (o.batch_size <= 0) {
    throw Error(ErrorCode::InvalidArgument, "options->batch_size is {}; it must be at least 1", o.batch_size);
  }
  if (o.custom_target != nullptr) {
    out.target = mrt::capi::targetOf(o.custom_target, "options->custom_target");
  } else {
    mrt_target target{};
    target.struct_size = sizeof(target);
    const mrt_status status = mrt_target_init(o.target != nullptr ? o.target : "gc200", o.num_ipus, &target);
    if (status != MRT_OK) {
      throw Error(static_cast<ErrorCode>(status), "options->target '{}' is not a known system (gc200, bow, c600, "
                                                  "ipu-model-small)", o.target);
    }
    out.target = mrt::capi::targetOf(&target, "options->target");
  }
  out.replicationFactor = o.replication_factor;
  out.batchSize = o.batch_size;
  out.inputShapes = inputShapes(o);
  if (o.precision != MRT_ONNX_PRECISION_F32 && o.precision != MRT_ONNX_PRECISION_F16) {
    throw Error(ErrorCode::InvalidArgument, "options->precision is {}; it must be MRT_ONNX_PRECISION_F32 (0) or "
                                            "MRT_ONNX_PRECISION_F16 (1)", o.precision);
  }
  out.halfPrecision = o.precision == MRT_ONNX_PRECISION_F16;
  if (o.batching_dim != MRT_BATCHING_DISABLED) out.batchingDim = o.batching_dim;
  out.numIOTiles = o.num_io_tiles;
  if (o.model_name != nullptr) out.modelName = o.model_name;
  if (o.progress != nullptr) {
    const mrt_progress_fn progress = o.progress;
    out.progress = [progress, owned](int step, int total) {
      try {
        progress(step, total, owned->get());
      } catch (...) {
        // A C++ caller's exception must not unwind through the frontend.
      }
    };
  }
  return out;
}

template <typename Compile>
void compile(const mrt_onnx_options *options, mrt_model **out, Compile &&compileWith) {
  // First, so user_data_free runs exactly once whatever fails below.
  const auto owned = options != nullptr ? mrt::capi::ownUserData(options->user_data, options->user_data_free)
                                        : mrt::capi::ownUserData(nullptr, nullptr);
  mrt::capi::requireNotNull(out, "out");
  const mrt_onnx_options o =
      options != nullptr ? mrt::capi::readSized(options, defaults(), MRT_ONNX_OPTIONS_V1_SIZE, "options") : defaults();
  const mrt::onnx::OnnxOptions resolved = resolve(o, owned);
  auto model = compileWith(resolved);
  *out = new mrt_model{std::move(model)};
}

}  // namespace

MRT_API mrt_status mrt_onnx_options_init_sized(mrt_onnx_options *options, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::initSized(options, defaults(), size, MRT_ONNX_OPTIONS_V1_SIZE,
                         MRT_STRUCT_SIZE(mrt_onnx_options, num_io_tiles), "options");
  });
}

// The symbol of callers built before mrt_onnx_options_init_sized: V1 fields.
MRT_API void(mrt_onnx_options_init)(mrt_onnx_options *options) noexcept {
  if (options != nullptr) mrt_onnx_options_init_sized(options, MRT_ONNX_OPTIONS_V1_SIZE);
}

MRT_API mrt_status mrt_onnx_compile_file(const char *path, const mrt_onnx_options *options,
                                         mrt_model **out) noexcept {
  return mrt::capi::guard("mrt_onnx_compile_file", [&] {
    compile(options, out, [&](const mrt::onnx::OnnxOptions &resolved) {
      mrt::capi::requireNotNull(path, "path");
      return mrt::onnx::compileOnnxFile(path, resolved);
    });
  });
}

MRT_API mrt_status mrt_onnx_compile_memory(const void *data, size_t size, const mrt_onnx_options *options,
                                           mrt_model **out) noexcept {
  return mrt::capi::guard("mrt_onnx_compile_memory", [&] {
    compile(options, out, [&](const mrt::onnx::OnnxOptions &resolved) {
      mrt::capi::requireNotNull(data, "data");
      return mrt::onnx::compileOnnxMemory(data, size, resolved);
    });
  });
}
