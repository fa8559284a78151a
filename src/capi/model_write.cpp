// Writing models as PopEF files (include/mrt_c.h, "Writing models"): whole,
// split into a program file and a data file, or several fused into one.
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "popef/fuse.hpp"
#include "popef/writer.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;
namespace popef = mrt::popef;

// Writes the blobs `write` puts in a new file at path (created or
// truncated). A failed write removes the file, so that no half-written model
// is left behind to be loaded later.
template <typename Write>
void writeFile(const std::string &path, Write &&write) {
  popef::Writer writer(path);
  try {
    write(writer);
    writer.close();
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
}

bool sameFile(const std::string &a, const std::string &b) {
  if (a == b) return true;
  std::error_code error;  // a file that does not exist yet is not the other one
  return std::filesystem::equivalent(a, b, error) && !error;
}

}  // namespace

extern "C" {

MRT_API mrt_status mrt_model_write(const mrt_model *model, const char *path) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *mrt::capi::modelOf(model, "model");
    requireNotNull(path, "path");
    writeFile(path, [&](popef::Writer &writer) { writer.writeModel(m); });
  });
}

MRT_API mrt_status mrt_model_write_split(const mrt_model *model, const char *model_path,
                                         const char *data_path) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *mrt::capi::modelOf(model, "model");
    requireNotNull(model_path, "model_path");
    requireNotNull(data_path, "data_path");
    if (sameFile(model_path, data_path)) {
      throw Error(ErrorCode::InvalidArgument, "model_path '{}' and data_path '{}' are the same file",
                  model_path, data_path);
    }
    // A PopEF file holds at least one blob: an empty data file could not be
    // loaded back.
    if (m.tensorDataList().empty() && m.feedDataList().empty() && m.opaqueBlobs().empty()) {
      throw Error(ErrorCode::InvalidArgument,
                  "model '{}' has no TensorData, FeedData or Opaque blob to write to data_path "
                  "'{}'; write it as one file with mrt_model_write",
                  m.metadata.executable(), data_path);
    }
    writeFile(model_path, [&](popef::Writer &writer) { writer.writeModelHead(m); });
    try {
      writeFile(data_path, [&](popef::Writer &writer) { writer.writeModelData(m); });
    } catch (...) {
      std::remove(model_path);  // no program file without its data
      throw;
    }
  });
}

MRT_API mrt_status mrt_model_fuse(const mrt_model *const *models, size_t num_models, const char *path) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (num_models > 0) requireNotNull(models, "models");
    requireNotNull(path, "path");
    std::vector<std::shared_ptr<const popef::Model>> inputs;
    for (size_t i = 0; i < num_models; ++i) {
      inputs.push_back(mrt::capi::modelOf(models[i], fmt::format("models[{}]", i).c_str()));
    }
    const auto fused = popef::fuseModels(inputs);
    writeFile(path, [&](popef::Writer &writer) { popef::writeFusedModels(writer, fused); });
  });
}

}  // extern "C"
