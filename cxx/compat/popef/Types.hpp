// popef:: types of Graphcore's PopEF library that the Model Runtime API
// uses (DataType, TensorType, TensorInfo, Anchor, ProgramFlow, Metadata), as
// read-only descriptions of a model libmrt loaded. Part of the compatibility
// layer (docs/compat.md): header-only, over the public C API via mrt.hpp.
// Every object here is an immutable copy: any thread may read it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mrt.hpp"

namespace popef {

// Element types; the values are libmrt's (mrt_data_type), which are PopEF's.
enum class DataType {
  BOOL = MRT_BOOL, U8 = MRT_U8, S8 = MRT_S8, U16 = MRT_U16, S16 = MRT_S16, S32 = MRT_S32,
  U32 = MRT_U32, S64 = MRT_S64, U64 = MRT_U64, F16 = MRT_F16, F32 = MRT_F32, F64 = MRT_F64
};

// Whether an anchor is read by the device (INPUT) or written by it (OUTPUT).
enum class TensorType { INPUT = MRT_TENSOR_INPUT, OUTPUT = MRT_TENSOR_OUTPUT, UNKNOWN = MRT_TENSOR_UNKNOWN };

// Shape, element type and size of a tensor.
class TensorInfo {
 public:
  using ShapeDimType = int64_t;

  TensorInfo() = default;
  TensorInfo(std::vector<ShapeDimType> shape, DataType data_type, int64_t size_in_bytes)
      : shape_(std::move(shape)), dataType_(data_type), sizeInBytes_(size_in_bytes) {}

  const std::vector<ShapeDimType> &shape() const { return shape_; }
  DataType dataType() const { return dataType_; }
  // The bytes of one tensor (one model batch).
  ShapeDimType sizeInBytes() const { return sizeInBytes_; }

 private:
  std::vector<ShapeDimType> shape_;
  DataType dataType_ = DataType::F32;
  ShapeDimType sizeInBytes_ = 0;
};

// The program indices of the three phases, in the order they run.
class ProgramFlow {
 public:
  using ProgramIndexType = uint64_t;

  ProgramFlow() = default;
  ProgramFlow(std::vector<ProgramIndexType> load, std::vector<ProgramIndexType> main,
              std::vector<ProgramIndexType> save)
      : load_(std::move(load)), main_(std::move(main)), save_(std::move(save)) {}

  const std::vector<ProgramIndexType> &load() const { return load_; }
  const std::vector<ProgramIndexType> &main() const { return main_; }
  const std::vector<ProgramIndexType> &save() const { return save_; }

 private:
  std::vector<ProgramIndexType> load_, main_, save_;
};

// One stream between host and device: an input or output tensor of the model.
class Anchor {
 public:
  Anchor() = default;
  explicit Anchor(const mrt::AnchorInfo &info)
      : name_(info.name),
        handle_(info.handle),
        tensorInfo_(info.shape, static_cast<DataType>(info.data_type), info.size_in_bytes),
        programs_(info.programs),
        isPerReplica_(info.is_per_replica),
        type_(static_cast<TensorType>(info.tensor_type)),
        remoteBuffer_(info.remote_buffer),
        repeats_(info.remote_buffer_repeats) {}

  const std::string &name() const { return name_; }
  // The unique handle of the stream (what Session::setCallbackForAnchor takes).
  const std::string &handle() const { return handle_; }
  const TensorInfo &tensorInfo() const { return tensorInfo_; }
  // The programs that transfer this anchor.
  const std::vector<ProgramFlow::ProgramIndexType> &programs() const { return programs_; }
  bool isPerReplica() const { return isPerReplica_; }
  TensorType type() const { return type_; }
  // True if the anchor is backed by a remote buffer.
  bool useRemoteBuffers() const { return !remoteBuffer_.empty(); }
  int64_t repeats() const { return repeats_; }

 private:
  std::string name_, handle_;
  TensorInfo tensorInfo_;
  std::vector<ProgramFlow::ProgramIndexType> programs_;
  bool isPerReplica_ = false;
  TensorType type_ = TensorType::UNKNOWN;
  std::string remoteBuffer_;
  int64_t repeats_ = 0;
};

// What a model says about itself.
class Metadata {
 public:
  using OptionsMap = std::map<std::string, std::string>;
  using ProgramsMap = std::map<ProgramFlow::ProgramIndexType, std::string>;

  Metadata() = default;
  explicit Metadata(const mrt::Model &model) {
    const mrt::ModelInfo info = model.info();
    executable_ = info.executable;
    replicationFactor_ = static_cast<int64_t>(info.replication_factor);
    numIpus_ = static_cast<int64_t>(info.num_ipus);
    ipuVersion_ = info.ipu_version;
    isInference_ = info.is_inference;
    seedHandle_ = info.seed_handle;
    for (const auto &anchor : model.anchors()) anchors_.emplace_back(anchor);
    programFlow_ = ProgramFlow(model.programFlow(mrt::ProgramPhase::Load), model.programFlow(mrt::ProgramPhase::Main),
                               model.programFlow(mrt::ProgramPhase::Save));
    programsMap_ = model.programs();
    for (const auto &kv : model.options(mrt::ModelOptions::Engine)) engineOptions_.insert(kv);
    for (const auto &kv : model.options(mrt::ModelOptions::Device)) deviceOptions_.insert(kv);
  }

  const std::vector<Anchor> &anchors() const { return anchors_; }
  const ProgramFlow &programFlow() const { return programFlow_; }
  const ProgramsMap &programsMap() const { return programsMap_; }
  int64_t replicationFactor() const { return replicationFactor_; }
  int64_t numIpus() const { return numIpus_; }
  int64_t ipuVersion() const { return ipuVersion_; }
  bool isInference() const { return isInference_; }
  // The name of the executable this metadata describes.
  const std::string &executable() const { return executable_; }
  const std::string &seedHandle() const { return seedHandle_; }
  const OptionsMap &engineOptions() const { return engineOptions_; }
  const OptionsMap &deviceOptions() const { return deviceOptions_; }

 private:
  std::vector<Anchor> anchors_;
  ProgramFlow programFlow_;
  ProgramsMap programsMap_;
  int64_t replicationFactor_ = 1, numIpus_ = 1, ipuVersion_ = 2;
  bool isInference_ = true;
  std::string executable_, seedHandle_;
  OptionsMap engineOptions_, deviceOptions_;
};

}  // namespace popef
