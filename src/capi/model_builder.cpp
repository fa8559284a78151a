// The PopEF model builder of the C API (include/mrt_c.h, "Writing models"):
// collects a popef::GraphModelDescription against an executable compiled
// already, checking each piece as it is added so that the error names the
// call that brought it, and hands it to popef::buildModel, which derives the
// anchors' types from the executable as for the example models.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capi/executable.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/option_pairs.hpp"
#include "capi/sized_struct.hpp"
#include "device/device_options.hpp"
#include "popef/executable_check.hpp"
#include "popef/graph_model_builder.hpp"

struct mrt_model_builder {
  hwsim::Executable executable;
  mrt::popef::SharedBytes serialized;  // shared by every model built
  mrt::popef::GraphModelDescription description;
};

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;
namespace popef = mrt::popef;
using ProgramIndex = popef::ProgramFlow::ProgramIndexType;

// The first published layout: callers may pass this size or larger.

mrt_anchor_config defaultAnchorConfig() noexcept {
  mrt_anchor_config config{};
  config.struct_size = sizeof(mrt_anchor_config);
  config.data_source = MRT_DATA_SOURCE_NONE;
  return config;
}

mrt_model_builder &builderOf(mrt_model_builder *builder) {
  requireNotNull(builder, "builder");
  return *builder;
}

// A non-NULL, non-empty C string argument.
std::string requireName(const char *name, const char *argument) {
  requireNotNull(name, argument);
  if (*name == '\0') throw Error(ErrorCode::InvalidArgument, "{} must not be empty", argument);
  return name;
}

// Checks that every program index is one of the executable's; `what` names
// the anchor or phase in the message.
std::vector<ProgramIndex> programsOf(const mrt_model_builder &builder, const uint64_t *programs,
                                     std::size_t count, const std::string &what) {
  if (count > 0) requireNotNull(programs, "programs");
  const unsigned numPrograms = builder.executable.numPrograms();
  std::vector<ProgramIndex> result(programs, programs + count);
  for (const ProgramIndex program : result) {
    if (program >= numPrograms) {
      throw Error(ErrorCode::InvalidArgument,
                  "{}: program {} is out of range (the executable has {} programs)", what, program,
                  numPrograms);
    }
  }
  return result;
}

std::vector<popef::TensorInfo::ShapeDimType> shapeOf(const int64_t *shape, std::size_t rank,
                                                     const std::string &what) {
  if (rank > 0) requireNotNull(shape, "shape");
  std::vector<popef::TensorInfo::ShapeDimType> result(shape, shape + rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (result[i] < 0) {
      throw Error(ErrorCode::InvalidArgument, "{}: dimension {} of the shape is {}", what, i,
                  result[i]);
    }
  }
  return result;
}

popef::TensorInfo tensorInfoOf(int32_t dataType, const int64_t *shape, std::size_t rank,
                               const std::string &what) {
  const auto type = dataType < 0 ? std::nullopt
                                 : popef::dataTypeFromValue(static_cast<std::uint64_t>(dataType));
  if (!type) {
    throw Error(ErrorCode::InvalidArgument, "{}: data_type {} is not an mrt_data_type", what, dataType);
  }
  return popef::TensorInfo(*type, shapeOf(shape, rank, what));
}

// size bytes of data, copied into a 64-byte aligned allocation as TensorData
// read from a file would be; data may be NULL only when size is 0.
popef::SharedBytes copyData(const void *data, uint64_t size) {
  if (size > 0) requireNotNull(data, "data");
  return popef::SharedBytes::alignedCopyOf(
      std::span(static_cast<const std::byte *>(data), static_cast<std::size_t>(size)));
}

template <typename Blobs>
void requireNewBlobName(const Blobs &blobs, const std::string &name, const char *kind) {
  const bool taken = std::any_of(blobs.begin(), blobs.end(),
                                 [&](const auto &blob) { return blob.name() == name; });
  if (taken) throw Error(ErrorCode::InvalidArgument, "{} '{}' was already added", kind, name);
}

popef::GraphAnchor anchorOf(const mrt_model_builder &builder, const mrt_anchor_config &config) {
  const std::string handle = requireName(config.handle, "config->handle");
  popef::GraphAnchor anchor;
  anchor.handle = handle;
  anchor.name = (config.name == nullptr || *config.name == '\0') ? handle : config.name;
  const std::string what = "anchor '" + anchor.name + "'";
  anchor.shape = shapeOf(config.shape, config.rank, what);
  anchor.programs = programsOf(builder, config.programs, config.num_programs, what);
  anchor.isPerReplica = config.is_per_replica;
  switch (config.data_source) {
    case MRT_DATA_SOURCE_NONE: anchor.dataSource = popef::DataSource::None; break;
    case MRT_DATA_SOURCE_TENSOR_DATA: anchor.dataSource = popef::DataSource::TensorData; break;
    case MRT_DATA_SOURCE_FEED_DATA: anchor.dataSource = popef::DataSource::FeedData; break;
    default:
      throw Error(ErrorCode::InvalidArgument, "{}: data_source {} is not an mrt_data_source", what,
                  config.data_source);
  }
  for (const popef::GraphAnchor &other : builder.description.anchors) {
    if (other.name == anchor.name || other.handle == anchor.handle) {
      throw Error(ErrorCode::InvalidArgument,
                  "{} (handle '{}'): an anchor named '{}' with handle '{}' was already added", what,
                  anchor.handle, other.name, other.handle);
    }
  }
  return anchor;
}

}  // namespace

extern "C" {

MRT_API mrt_status mrt_model_builder_create(const char *name, const mrt_executable *executable,
                                            mrt_model_builder **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    std::string modelName = requireName(name, "name");
    const hwsim::Executable &exe = mrt::capi::executableOf(executable, "executable");
    requireNotNull(out, "out");
    auto builder = std::make_unique<mrt_model_builder>();
    builder->executable = exe;
    builder->serialized = popef::SharedBytes::fromVector(executable->serialized);
    builder->description.name = std::move(modelName);
    for (unsigned i = 0; i < exe.numPrograms(); ++i) {
      builder->description.programNames.push_back(exe.programName(i));
    }
    *out = builder.release();
  });
}

MRT_API void mrt_model_builder_destroy(mrt_model_builder *builder) noexcept { delete builder; }

MRT_API mrt_status mrt_model_builder_set_inference(mrt_model_builder *builder,
                                                   bool is_inference) noexcept {
  return mrt::capi::guard(__func__, [&] { builderOf(builder).description.isInference = is_inference; });
}

MRT_API mrt_status mrt_model_builder_set_option(mrt_model_builder *builder, int32_t set,
                                                const char *key, const char *value) noexcept {
  return mrt::capi::guard(__func__, [&] {
    popef::GraphModelDescription &description = builderOf(builder).description;
    const std::string k = requireName(key, "key");
    requireNotNull(value, "value");
    const popef::OptionsMap option{{k, value}};
    if (set == MRT_MODEL_ENGINE_OPTIONS) {
      mrt::capi::requireValidEngineOption(k, value);
      description.engineOptions.insert_or_assign(k, value);
    } else if (set == MRT_MODEL_DEVICE_OPTIONS) {
      mrt::validateDeviceOptions(option, "device option: ");
      description.deviceOptions.insert_or_assign(k, value);
    } else {
      throw Error(ErrorCode::InvalidArgument, "set {} is not an mrt_model_options value", set);
    }
  });
}

MRT_API mrt_status mrt_model_builder_set_seed_handle(mrt_model_builder *builder,
                                                     const char *handle) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    requireNotNull(handle, "handle");
    b.description.seedHandle = handle;  // "" clears it; build checks it names an anchor
  });
}

MRT_API mrt_status mrt_model_builder_set_program_name(mrt_model_builder *builder, uint64_t program,
                                                      const char *name) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    requireNotNull(name, "name");
    const std::vector<ProgramIndex> index =
        programsOf(b, &program, 1, fmt::format("program name '{}'", name));
    b.description.programNames[index.front()] = name;
  });
}

MRT_API mrt_status mrt_model_builder_set_program_flow(mrt_model_builder *builder, int32_t phase,
                                                      const uint64_t *programs,
                                                      size_t num_programs) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    std::vector<ProgramIndex> *flow = nullptr;
    switch (phase) {
      case MRT_PHASE_LOAD: flow = &b.description.load; break;
      case MRT_PHASE_MAIN: flow = &b.description.main; break;
      case MRT_PHASE_SAVE: flow = &b.description.save; break;
      default:
        throw Error(ErrorCode::InvalidArgument, "phase {} is not an mrt_program_phase value", phase);
    }
    *flow = programsOf(b, programs, num_programs, fmt::format("phase {}", phase));
  });
}

MRT_API mrt_status mrt_anchor_config_init_sized(mrt_anchor_config *config, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::initSized(config, defaultAnchorConfig(), size, MRT_ANCHOR_CONFIG_V1_SIZE,
                         MRT_STRUCT_SIZE(mrt_anchor_config, data_source), "config");
  });
}

// The symbol of callers built before mrt_anchor_config_init_sized: V1 fields.
MRT_API void(mrt_anchor_config_init)(mrt_anchor_config *config) noexcept {
  if (config != nullptr) mrt_anchor_config_init_sized(config, MRT_ANCHOR_CONFIG_V1_SIZE);
}

MRT_API mrt_status mrt_model_builder_add_anchor(mrt_model_builder *builder,
                                                const mrt_anchor_config *config) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    const mrt_anchor_config c =
        mrt::capi::readSized(config, defaultAnchorConfig(), MRT_ANCHOR_CONFIG_V1_SIZE, "config");
    popef::GraphAnchor anchor = anchorOf(b, c);
    // Checked now against the executable, so the error comes from this call.
    popef::makeAnchor(anchor, b.executable, b.description.name);
    b.description.anchors.push_back(std::move(anchor));
  });
}

MRT_API mrt_status mrt_model_builder_add_tensor_data(mrt_model_builder *builder, const char *name,
                                                     int32_t data_type, const int64_t *shape,
                                                     size_t rank, const void *data,
                                                     uint64_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    const std::string blobName = requireName(name, "name");
    const std::string what = "tensor data '" + blobName + "'";
    popef::TensorInfo info = tensorInfoOf(data_type, shape, rank, what);
    if (static_cast<uint64_t>(info.sizeInBytes()) != size) {
      throw Error(ErrorCode::InvalidArgument, "{} is {} = {} bytes, but size is {}", what,
                  info.toString(), info.sizeInBytes(), size);
    }
    requireNewBlobName(b.description.tensorData, blobName, "tensor data");
    b.description.tensorData.emplace_back(blobName, std::move(info), copyData(data, size));
  });
}

MRT_API mrt_status mrt_model_builder_add_feed_data(mrt_model_builder *builder, const char *name,
                                                   int32_t data_type, const int64_t *shape,
                                                   size_t rank, const void *data, uint64_t size,
                                                   uint64_t num_tensors) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_model_builder &b = builderOf(builder);
    const std::string blobName = requireName(name, "name");
    const std::string what = "feed data '" + blobName + "'";
    popef::TensorInfo info = tensorInfoOf(data_type, shape, rank, what);
    if (num_tensors == 0) {
      throw Error(ErrorCode::InvalidArgument, "{}: num_tensors must be at least 1", what);
    }
    // size == num_tensors x tensorSize, without overflowing the product.
    const auto tensorSize = static_cast<uint64_t>(info.sizeInBytes());
    const bool matches = tensorSize == 0 ? size == 0
                                         : size % tensorSize == 0 && size / tensorSize == num_tensors;
    if (!matches) {
      throw Error(ErrorCode::InvalidArgument, "{} is {} tensors of {} ({} bytes each), but size is {}",
                  what, num_tensors, info.toString(), tensorSize, size);
    }
    requireNewBlobName(b.description.feedData, blobName, "feed data");
    b.description.feedData.emplace_back(blobName, std::move(info), num_tensors, copyData(data, size));
  });
}

MRT_API mrt_status mrt_model_builder_build(mrt_model_builder *builder, mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt_model_builder &b = builderOf(builder);
    requireNotNull(out, "out");
    // A copy: the builder stays as it is, to be changed and built again.
    std::shared_ptr<popef::Model> model = popef::buildModel(b.executable, b.serialized, b.description);
    // What a runner or session would refuse later is refused here.
    popef::checkAgainstExecutable(*model, b.executable);
    *out = new mrt_model{std::move(model)};
  });
}

}  // extern "C"
