// The model part of the C API (include/mrt_c.h, "Models (PopEF)"), over
// src/popef.
#include "capi/model.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/sized_struct.hpp"
#include "popef/reader.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::fillSized;
using mrt::capi::anchorInfo;
using mrt::capi::modelOf;
using mrt::capi::pathsOf;
using mrt::capi::requireNotNull;
namespace popef = mrt::popef;

static_assert(static_cast<int>(popef::DataType::BOOL) == MRT_BOOL);
static_assert(static_cast<int>(popef::DataType::U8) == MRT_U8);
static_assert(static_cast<int>(popef::DataType::S8) == MRT_S8);
static_assert(static_cast<int>(popef::DataType::U16) == MRT_U16);
static_assert(static_cast<int>(popef::DataType::S16) == MRT_S16);
static_assert(static_cast<int>(popef::DataType::S32) == MRT_S32);
static_assert(static_cast<int>(popef::DataType::U32) == MRT_U32);
static_assert(static_cast<int>(popef::DataType::S64) == MRT_S64);
static_assert(static_cast<int>(popef::DataType::U64) == MRT_U64);
static_assert(static_cast<int>(popef::DataType::F16) == MRT_F16);
static_assert(static_cast<int>(popef::DataType::F32) == MRT_F32);
static_assert(static_cast<int>(popef::DataType::F64) == MRT_F64);
static_assert(static_cast<int>(popef::TensorType::INPUT) == MRT_TENSOR_INPUT);
static_assert(static_cast<int>(popef::TensorType::OUTPUT) == MRT_TENSOR_OUTPUT);
static_assert(static_cast<int>(popef::TensorType::UNKNOWN) == MRT_TENSOR_UNKNOWN);
static_assert(static_cast<int>(popef::DataSource::None) == MRT_DATA_SOURCE_NONE);
static_assert(static_cast<int>(popef::DataSource::TensorData) == MRT_DATA_SOURCE_TENSOR_DATA);
static_assert(static_cast<int>(popef::DataSource::FeedData) == MRT_DATA_SOURCE_FEED_DATA);

// The first published layouts: callers may pass these sizes or larger.


// `executable` empty: the only model of the files.
void loadInto(const char *const *paths, std::size_t numPaths, std::string_view executable,
              mrt_model **out) {
  requireNotNull(out, "out");
  auto model = popef::loadModel(pathsOf(paths, numPaths), executable);
  *out = new mrt_model{std::move(model)};
}

void writeBytes(std::span<const std::byte> bytes, const void **outData, uint64_t *outSize) {
  requireNotNull(outData, "out_data");
  requireNotNull(outSize, "out_size");
  *outData = bytes.data();
  *outSize = bytes.size();
}

}  // namespace

namespace mrt::capi {

mrt_anchor_info anchorInfo(const popef::Anchor &anchor) {
  namespace popef = mrt::popef;
  mrt_anchor_info info{};
  info.struct_size = sizeof(mrt_anchor_info);
  info.name = anchor.name().c_str();
  info.handle = anchor.handle().c_str();
  info.data_type = static_cast<int32_t>(anchor.tensorInfo().dataType());
  info.shape = anchor.tensorInfo().shape().empty() ? nullptr : anchor.tensorInfo().shape().data();
  info.rank = anchor.tensorInfo().shape().size();
  info.size_in_bytes = anchor.tensorInfo().sizeInBytes();
  info.programs = anchor.programs().empty() ? nullptr : anchor.programs().data();
  info.num_programs = anchor.programs().size();
  info.is_per_replica = anchor.isPerReplica();
  info.tensor_type = static_cast<int32_t>(anchor.type());
  info.data_source = static_cast<int32_t>(anchor.dataSource());
  if (anchor.remoteBuffer()) {
    info.remote_buffer = anchor.remoteBuffer()->name.c_str();
    info.remote_buffer_repeats = anchor.remoteBuffer()->repeats;
  }
  return info;
}

std::vector<std::string> pathsOf(const char *const *paths, std::size_t numPaths) {
  requireNotNull(paths, "paths");
  if (numPaths == 0) throw Error(ErrorCode::InvalidArgument, "num_paths must be at least 1");
  std::vector<std::string> result;
  for (std::size_t i = 0; i < numPaths; ++i) {
    if (paths[i] == nullptr) throw Error(ErrorCode::InvalidArgument, "paths[{}] must not be NULL", i);
    result.emplace_back(paths[i]);
  }
  return result;
}

const std::shared_ptr<popef::Model> &modelOf(const mrt_model *handle, const char *argument) {
  requireNotNull(handle, argument);
  return handle->model;
}

}  // namespace mrt::capi

extern "C" {

MRT_API mrt_status mrt_model_load(const char *const *paths, size_t num_paths,
                                  mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] { loadInto(paths, num_paths, {}, out); });
}

MRT_API mrt_status mrt_model_load_named(const char *const *paths, size_t num_paths,
                                        const char *executable, mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(executable, "executable");
    if (*executable == '\0') throw Error(ErrorCode::InvalidArgument, "executable must not be empty");
    loadInto(paths, num_paths, executable, out);
  });
}

MRT_API void mrt_model_destroy(mrt_model *model) noexcept { delete model; }

MRT_API mrt_status mrt_model_tensor_data(const mrt_model *model, const char *name,
                                         const void **out_data, uint64_t *out_size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = modelOf(model, "model");
    requireNotNull(name, "name");
    requireNotNull(out_data, "out_data");
    requireNotNull(out_size, "out_size");
    writeBytes(m->tensorData(name).bytes(), out_data, out_size);
  });
}

MRT_API mrt_status mrt_model_feed_data(const mrt_model *model, const char *name,
                                       const void **out_data, uint64_t *out_size,
                                       uint64_t *out_num_tensors) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = modelOf(model, "model");
    requireNotNull(name, "name");
    requireNotNull(out_data, "out_data");
    requireNotNull(out_size, "out_size");
    const popef::FeedData &feed = m->feedData(name);
    writeBytes(feed.bytes(), out_data, out_size);
    if (out_num_tensors != nullptr) *out_num_tensors = feed.numTensors();
  });
}

MRT_API mrt_status mrt_model_executable(const mrt_model *model, const void **out_data,
                                        uint64_t *out_size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = modelOf(model, "model");
    writeBytes(m->executable().bytes(), out_data, out_size);
  });
}

MRT_API mrt_status mrt_model_get_info(const mrt_model *model, mrt_model_info *out_info) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *modelOf(model, "model");
    const popef::Metadata &meta = m.metadata;
    mrt_model_info info{};
    info.executable = meta.executable().c_str();
    info.replication_factor = meta.replicationFactor();
    info.num_ipus = meta.numIpus();
    info.ipu_version = meta.ipuVersion();
    info.is_inference = meta.isInference();
    info.seed_handle = meta.seedHandle().c_str();
    info.package_hash = meta.packageHash().c_str();
    info.num_anchors = meta.anchors().size();
    info.num_programs = meta.programFlow().programsMap().size();
    info.num_engine_options = meta.engineOptions().size();
    info.num_device_options = meta.deviceOptions().size();
    info.num_tensor_data = m.tensorDataList().size();
    info.num_feed_data = m.feedDataList().size();
    info.shared_executable = meta.sharedExecutable().c_str();
    fillSized(out_info, info, MRT_MODEL_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_model_batching_dim(const mrt_model *model, uint32_t *out_dim) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Metadata &meta = modelOf(model, "model")->metadata;
    requireNotNull(out_dim, "out_dim");
    *out_dim = meta.batchingDim().value_or(MRT_BATCHING_DISABLED);
  });
}

MRT_API mrt_status mrt_model_option(const mrt_model *model, int32_t options, size_t index,
                                    const char **out_key, const char **out_value) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Metadata &meta = modelOf(model, "model")->metadata;
    requireNotNull(out_key, "out_key");
    requireNotNull(out_value, "out_value");
    const popef::OptionsMap *set = nullptr;
    if (options == MRT_MODEL_ENGINE_OPTIONS) {
      set = &meta.engineOptions();
    } else if (options == MRT_MODEL_DEVICE_OPTIONS) {
      set = &meta.deviceOptions();
    } else {
      throw Error(ErrorCode::InvalidArgument, "options {} is not an mrt_model_options value",
                  options);
    }
    if (index >= set->size()) {
      throw Error(ErrorCode::InvalidArgument, "option index {} is out of range (the model has {})",
                  index, set->size());
    }
    const auto entry = std::next(set->begin(), static_cast<std::ptrdiff_t>(index));
    *out_key = entry->first.c_str();
    *out_value = entry->second.c_str();
  });
}

MRT_API mrt_status mrt_model_anchor(const mrt_model *model, size_t index,
                                    mrt_anchor_info *out_anchor) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &anchors = modelOf(model, "model")->metadata.anchors();
    if (index >= anchors.size()) {
      throw Error(ErrorCode::InvalidArgument, "anchor index {} is out of range (the model has {})",
                  index, anchors.size());
    }
    fillSized(out_anchor, anchorInfo(anchors[index]), MRT_ANCHOR_INFO_V1_SIZE, "out_anchor");
  });
}

MRT_API mrt_status mrt_model_anchor_by_name(const mrt_model *model, const char *name,
                                            mrt_anchor_info *out_anchor) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *modelOf(model, "model");
    requireNotNull(name, "name");
    const popef::Anchor *anchor = m.metadata.findAnchor(name);
    if (anchor == nullptr) {
      throw Error(ErrorCode::NotFound, "model '{}' has no anchor named '{}'",
                  m.metadata.executable(), name);
    }
    fillSized(out_anchor, anchorInfo(*anchor), MRT_ANCHOR_INFO_V1_SIZE, "out_anchor");
  });
}

MRT_API mrt_status mrt_model_anchor_by_handle(const mrt_model *model, const char *handle,
                                              mrt_anchor_info *out_anchor) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *modelOf(model, "model");
    requireNotNull(handle, "handle");
    const popef::Anchor *anchor = m.metadata.findAnchorByHandle(handle);
    if (anchor == nullptr) {
      throw Error(ErrorCode::NotFound, "model '{}' has no anchor with handle '{}'",
                  m.metadata.executable(), handle);
    }
    fillSized(out_anchor, anchorInfo(*anchor), MRT_ANCHOR_INFO_V1_SIZE, "out_anchor");
  });
}

MRT_API mrt_status mrt_model_program_flow(const mrt_model *model, int32_t phase,
                                          const uint64_t **out_programs,
                                          size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::ProgramFlow &flow = modelOf(model, "model")->metadata.programFlow();
    requireNotNull(out_programs, "out_programs");
    requireNotNull(out_count, "out_count");
    const std::vector<popef::ProgramFlow::ProgramIndexType> *programs = nullptr;
    switch (phase) {
      case MRT_PHASE_LOAD: programs = &flow.load(); break;
      case MRT_PHASE_MAIN: programs = &flow.main(); break;
      case MRT_PHASE_SAVE: programs = &flow.save(); break;
      default:
        throw Error(ErrorCode::InvalidArgument, "phase {} is not an mrt_program_phase value", phase);
    }
    *out_programs = programs->empty() ? nullptr : programs->data();
    *out_count = programs->size();
  });
}

MRT_API mrt_status mrt_model_program(const mrt_model *model, size_t index,
                                     uint64_t *out_program_index, const char **out_name) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &programs = modelOf(model, "model")->metadata.programFlow().programsMap();
    requireNotNull(out_program_index, "out_program_index");
    requireNotNull(out_name, "out_name");
    if (index >= programs.size()) {
      throw Error(ErrorCode::InvalidArgument,
                  "program map index {} is out of range (the model has {} programs)", index,
                  programs.size());
    }
    const auto entry = std::next(programs.begin(), static_cast<std::ptrdiff_t>(index));
    *out_program_index = entry->first;
    *out_name = entry->second.c_str();
  });
}

}  // extern "C"
