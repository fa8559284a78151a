// popef::Metadata: everything the runtime needs to know about a model before
// touching its executable: which executable, how many IPUs and replicas, the
// options to create the device and engine with, the program flow and the
// anchors. Stored in the file as a FlatBuffer (src/popef/popef.fbs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "popef/anchor.hpp"
#include "popef/blob_type.hpp"
#include "popef/program_flow.hpp"

namespace mrt::popef {

using OptionsMap = std::map<std::string, std::string>;

class Metadata {
 public:
  // The IPU architecture versions a model can be compiled for (DESIGN.md 5).
  static constexpr std::uint32_t kIpu2 = 2;
  static constexpr std::uint32_t kIpu21 = 21;

  // Name of the Executable blob this metadata describes; it also picks the
  // model when one file holds several.
  const std::string &executable() const noexcept { return executable_; }
  // A model fused with others (docs/popef.md, "Fused models") shares their
  // Executable blob, named here; empty for a model with its own executable.
  const std::string &sharedExecutable() const noexcept { return sharedExecutable_; }
  // The name of the model's Executable blob: sharedExecutable(), else executable().
  const std::string &executableBlob() const noexcept {
    return sharedExecutable_.empty() ? executable_ : sharedExecutable_;
  }
  std::uint64_t replicationFactor() const noexcept { return replicationFactor_; }
  // IPUs the executable runs on, all replicas together (an hwsim
  // Executable's numIpus(): per-replica IPUs x replicationFactor).
  std::uint64_t numIpus() const noexcept { return numIpus_; }
  std::uint32_t ipuVersion() const noexcept { return ipuVersion_; }
  bool isInference() const noexcept { return isInference_; }
  const OptionsMap &engineOptions() const noexcept { return engineOptions_; }
  const OptionsMap &deviceOptions() const noexcept { return deviceOptions_; }
  // Handle of the anchor that seeds the device's random generator; empty if none.
  const std::string &seedHandle() const noexcept { return seedHandle_; }
  // Hash of the runtime package the executable was compiled with; compared
  // by Session when check_package_hash is set.
  const std::string &packageHash() const noexcept { return packageHash_; }
  const ProgramFlow &programFlow() const noexcept { return programFlow_; }
  const std::vector<Anchor> &anchors() const noexcept { return anchors_; }
  // The dimension ModelRunner batches requests along when its config names
  // none (the model compiler's choice, e.g. mrt_onnx_options.batching_dim);
  // empty if the model records none.
  const std::optional<std::uint32_t> &batchingDim() const noexcept { return batchingDim_; }

  // nullptr if there is no such anchor.
  const Anchor *findAnchor(std::string_view name) const noexcept;
  const Anchor *findAnchorByHandle(std::string_view handle) const noexcept;

  void setExecutable(std::string name) { executable_ = std::move(name); }
  void setSharedExecutable(std::string name) { sharedExecutable_ = std::move(name); }
  void setReplicationFactor(std::uint64_t factor) { replicationFactor_ = factor; }
  void setNumIpus(std::uint64_t numIpus) { numIpus_ = numIpus; }
  void setIpuVersion(std::uint32_t version) { ipuVersion_ = version; }
  void setIsInference(bool inference) { isInference_ = inference; }
  void setEngineOptions(OptionsMap options) { engineOptions_ = std::move(options); }
  void setDeviceOptions(OptionsMap options) { deviceOptions_ = std::move(options); }
  void setSeedHandle(std::string handle) { seedHandle_ = std::move(handle); }
  void setPackageHash(std::string hash) { packageHash_ = std::move(hash); }
  void setProgramFlow(ProgramFlow flow) { programFlow_ = std::move(flow); }
  void setAnchors(std::vector<Anchor> anchors) { anchors_ = std::move(anchors); }
  void addAnchor(Anchor anchor) { anchors_.push_back(std::move(anchor)); }
  void setBatchingDim(std::optional<std::uint32_t> dim) { batchingDim_ = dim; }

  // Checks the rules a model's metadata obeys on its own (docs/popef.md,
  // "Validation"): counts >= 1, a known IPU version, unique non-empty anchor
  // names and handles, every program index named in the programs map, a
  // seed handle that names an anchor. Throws mrt::Error(CorruptModel) with a
  // message that starts with `where`.
  void validate(const BlobWhere &where) const;

  friend bool operator==(const Metadata &, const Metadata &) = default;

 private:
  std::string executable_;
  std::string sharedExecutable_;
  std::uint64_t replicationFactor_ = 1;
  std::uint64_t numIpus_ = 1;
  std::uint32_t ipuVersion_ = kIpu2;
  bool isInference_ = true;
  OptionsMap engineOptions_;
  OptionsMap deviceOptions_;
  std::string seedHandle_;
  std::string packageHash_;
  ProgramFlow programFlow_;
  std::vector<Anchor> anchors_;
  std::optional<std::uint32_t> batchingDim_;
};

}  // namespace mrt::popef
