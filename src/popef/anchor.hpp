// popef::Anchor: one tensor that crosses the host/device boundary (an input,
// an output, a weight loaded by Load, a state read back by Save). The Session
// binds a callback, TensorData or FeedData to each anchor by its handle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "popef/program_flow.hpp"
#include "popef/tensor_info.hpp"

namespace mrt::popef {

// Direction of the transfer, seen from the device. Numbering is part of the
// file format: only append.
enum class TensorType : std::uint8_t { INPUT, OUTPUT, UNKNOWN };

// Where the bytes of an input anchor come from when the user does not
// provide them: a TensorData blob (the same bytes every time), a FeedData
// blob (a sequence of tensors fed in turn) or nowhere (the user must).
enum class DataSource : std::uint8_t { None, TensorData, FeedData };

std::string_view toString(TensorType type) noexcept;
std::string_view toString(DataSource source) noexcept;

// The anchor's tensor lives in a device remote buffer of `repeats` slots
// named `name` in the executable; the Session fills it from the anchor's data.
struct RemoteBufferInfo {
  std::string name;
  std::int64_t repeats = 1;

  friend bool operator==(const RemoteBufferInfo &, const RemoteBufferInfo &) = default;
};

class Anchor {
 public:
  Anchor() = default;
  Anchor(std::string name, std::string handle, TensorInfo tensorInfo,
         std::vector<ProgramFlow::ProgramIndexType> programs, TensorType type,
         bool isPerReplica = false, DataSource dataSource = DataSource::None,
         std::optional<RemoteBufferInfo> remoteBuffer = std::nullopt)
      : name_(std::move(name)), handle_(std::move(handle)), tensorInfo_(std::move(tensorInfo)),
        programs_(std::move(programs)), isPerReplica_(isPerReplica), type_(type),
        dataSource_(dataSource), remoteBuffer_(std::move(remoteBuffer)) {}

  // The tensor's name in the model; TensorData/FeedData blobs match it.
  const std::string &name() const noexcept { return name_; }
  // The stream handle in the executable; unique per model.
  const std::string &handle() const noexcept { return handle_; }
  const TensorInfo &tensorInfo() const noexcept { return tensorInfo_; }
  // Indices of the programs that transfer this anchor.
  const std::vector<ProgramFlow::ProgramIndexType> &programs() const noexcept { return programs_; }
  // True if each replica has its own copy (one transfer per replica).
  bool isPerReplica() const noexcept { return isPerReplica_; }
  TensorType type() const noexcept { return type_; }
  DataSource dataSource() const noexcept { return dataSource_; }
  const std::optional<RemoteBufferInfo> &remoteBuffer() const noexcept { return remoteBuffer_; }
  bool useRemoteBuffers() const noexcept { return remoteBuffer_.has_value(); }

  void setName(std::string name) { name_ = std::move(name); }
  void setHandle(std::string handle) { handle_ = std::move(handle); }
  void setTensorInfo(TensorInfo info) { tensorInfo_ = std::move(info); }
  void setPrograms(std::vector<ProgramFlow::ProgramIndexType> programs) { programs_ = std::move(programs); }
  void setIsPerReplica(bool perReplica) { isPerReplica_ = perReplica; }
  void setType(TensorType type) { type_ = type; }
  void setDataSource(DataSource source) { dataSource_ = source; }
  void setRemoteBuffer(std::optional<RemoteBufferInfo> info) { remoteBuffer_ = std::move(info); }

  friend bool operator==(const Anchor &, const Anchor &) = default;

 private:
  std::string name_;
  std::string handle_;
  TensorInfo tensorInfo_;
  std::vector<ProgramFlow::ProgramIndexType> programs_;
  bool isPerReplica_ = false;
  TensorType type_ = TensorType::UNKNOWN;
  DataSource dataSource_ = DataSource::None;
  std::optional<RemoteBufferInfo> remoteBuffer_;
};

}  // namespace mrt::popef
