// popef::Model: one complete model, its Metadata plus the executable and data
// blobs it names, checked for consistency when constructed. Read from files
// by ModelBuilder (reader.hpp), built in memory from ModelParts, written by
// Writer. Immutable: share it as std::shared_ptr<const Model> freely across
// threads. Data read from a file points into the file's memory map, which
// stays mapped as long as the model or any copy of its parts lives.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "popef/blobs.hpp"
#include "popef/metadata.hpp"

namespace mrt::popef {

struct ModelParts {
  Metadata metadata;
  std::optional<BlobLocation> metadataOrigin;  // empty for a model built in memory
  ExecutableBlob executable;
  std::vector<TensorData> tensorData;
  std::vector<FeedData> feedData;
  std::vector<OpaqueBlob> opaqueBlobs;
};

class Model {
 public:
  // Throws mrt::Error(CorruptModel) if the parts do not form a valid model
  // (see verify()).
  explicit Model(ModelParts parts);

  // Public like the seeds' `model.metadata.programFlow()`; const because the
  // model was checked against it.
  const Metadata metadata;

  const std::optional<BlobLocation> &metadataOrigin() const noexcept { return metadataOrigin_; }
  const ExecutableBlob &executable() const noexcept { return executable_; }
  const std::vector<TensorData> &tensorDataList() const noexcept { return tensorData_; }
  const std::vector<FeedData> &feedDataList() const noexcept { return feedData_; }
  const std::vector<OpaqueBlob> &opaqueBlobs() const noexcept { return opaqueBlobs_; }

  // nullptr if the model has no TensorData / FeedData / Opaque blob of that name.
  const TensorData *findTensorData(std::string_view name) const noexcept;
  const FeedData *findFeedData(std::string_view name) const noexcept;
  const OpaqueBlob *findOpaque(std::string_view name) const noexcept;
  // Throw mrt::Error(NotFound) naming the model if there is none.
  const TensorData &tensorData(std::string_view name) const;
  const FeedData &feedData(std::string_view name) const;

  // Checks every rule of docs/popef.md "Validation" again: the metadata on
  // its own, the executable it names, unique blob names, data sizes that
  // match their TensorInfo, anchors whose TensorData/FeedData exists with
  // the same TensorInfo. Throws mrt::Error(CorruptModel) naming the blob.
  void verify() const;

 private:
  std::optional<BlobLocation> metadataOrigin_;
  ExecutableBlob executable_;
  std::vector<TensorData> tensorData_;
  std::vector<FeedData> feedData_;
  std::vector<OpaqueBlob> opaqueBlobs_;
  // name -> index into the vectors above
  std::map<std::string, std::size_t, std::less<>> tensorIndex_;
  std::map<std::string, std::size_t, std::less<>> feedIndex_;
  std::map<std::string, std::size_t, std::less<>> opaqueIndex_;
};

// A copy of `model` whose engine options have `options` set (replacing the
// values of the same keys); blobs are shared with `model`, not copied. For
// per-run overrides such as profiling (mrt-run --profile, runner replicas).
std::shared_ptr<Model> withEngineOptions(const Model &model, const OptionsMap &options);

// For a config that names the model to serve (SessionConfig::model_name,
// ModelRunnerConfig::model_name): nothing if `name` is empty or the model's
// name, else mrt::Error(InvalidArgument) naming both.
void requireModelName(const Model &model, std::string_view name);

}  // namespace mrt::popef
