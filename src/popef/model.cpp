#include "popef/model.hpp"

#include "common/error.hpp"

namespace mrt::popef {

namespace {

// Builds name -> index for one kind of blob; a second blob of the same name
// is an error naming both.
template <typename Blob>
std::map<std::string, std::size_t, std::less<>> indexByName(const std::vector<Blob> &blobs,
                                                            BlobType type) {
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    const Blob &blob = blobs[i];
    if (blob.name().empty()) {
      throw Error(ErrorCode::CorruptModel, "{}: {} blob has an empty name",
                  describe(blob.origin(), type), toString(type));
    }
    const auto [it, inserted] = index.emplace(blob.name(), i);
    if (!inserted) {
      throw Error(ErrorCode::CorruptModel, "{}: duplicate {} name '{}' (first in {})",
                  describe(blob.origin(), type), toString(type), blob.name(),
                  describe(blobs[it->second].origin(), type));
    }
  }
  return index;
}

template <typename Blob>
const Blob *find(const std::vector<Blob> &blobs,
                 const std::map<std::string, std::size_t, std::less<>> &index,
                 std::string_view name) noexcept {
  const auto it = index.find(name);
  return it == index.end() ? nullptr : &blobs[it->second];
}

}  // namespace

Model::Model(ModelParts parts)
    : metadata(std::move(parts.metadata)),
      metadataOrigin_(std::move(parts.metadataOrigin)),
      executable_(std::move(parts.executable)),
      tensorData_(std::move(parts.tensorData)),
      feedData_(std::move(parts.feedData)),
      opaqueBlobs_(std::move(parts.opaqueBlobs)),
      tensorIndex_(indexByName(tensorData_, BlobType::TensorData)),
      feedIndex_(indexByName(feedData_, BlobType::FeedData)),
      opaqueIndex_(indexByName(opaqueBlobs_, BlobType::Opaque)) {
  verify();
}

const TensorData *Model::findTensorData(std::string_view name) const noexcept {
  return find(tensorData_, tensorIndex_, name);
}

const FeedData *Model::findFeedData(std::string_view name) const noexcept {
  return find(feedData_, feedIndex_, name);
}

const OpaqueBlob *Model::findOpaque(std::string_view name) const noexcept {
  return find(opaqueBlobs_, opaqueIndex_, name);
}

const TensorData &Model::tensorData(std::string_view name) const {
  if (const TensorData *data = findTensorData(name)) return *data;
  throw Error(ErrorCode::NotFound, "model '{}' has no TensorData named '{}'",
              metadata.executable(), name);
}

const FeedData &Model::feedData(std::string_view name) const {
  if (const FeedData *data = findFeedData(name)) return *data;
  throw Error(ErrorCode::NotFound, "model '{}' has no FeedData named '{}'", metadata.executable(),
              name);
}

void Model::verify() const {
  const BlobWhere metadataWhere(metadataOrigin_, BlobType::Metadata);
  metadata.validate(metadataWhere);

  const BlobWhere executableWhere(executable_.origin(), BlobType::Executable);
  if (executable_.name() != metadata.executableBlob()) {
    throw Error(ErrorCode::CorruptModel, "{}: executable '{}' is not the '{}' named by {}",
                executableWhere, executable_.name(), metadata.executableBlob(), metadataWhere);
  }
  if (executable_.bytes().empty()) {
    throw Error(ErrorCode::CorruptModel, "{}: executable '{}' is empty", executableWhere,
                executable_.name());
  }

  // The constructor built the name indexes, which rejects duplicates; a
  // model can only be verified after construction, so they are complete.
  for (const TensorData &data : tensorData_) {
    if (static_cast<std::uint64_t>(data.tensorInfo().sizeInBytes()) != data.size()) {
      throw Error(ErrorCode::CorruptModel, "{}: TensorData '{}' holds {} bytes but {} needs {}",
                  describe(data.origin(), BlobType::TensorData), data.name(), data.size(),
                  data.tensorInfo().toString(), data.tensorInfo().sizeInBytes());
    }
  }
  for (const FeedData &feed : feedData_) {
    const auto elementBytes = static_cast<std::uint64_t>(feed.tensorInfo().sizeInBytes());
    const BlobWhere where(feed.origin(), BlobType::FeedData);
    if (feed.numTensors() == 0 || elementBytes == 0) {
      throw Error(ErrorCode::CorruptModel, "{}: FeedData '{}' has {} tensors of {} bytes", where,
                  feed.name(), feed.numTensors(), elementBytes);
    }
    // Divide instead of multiplying so a huge numTensors cannot overflow.
    if (feed.bytes().size() % elementBytes != 0 ||
        feed.bytes().size() / elementBytes != feed.numTensors()) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: FeedData '{}' holds {} bytes but {} tensors of {} need {} bytes each",
                  where, feed.name(), feed.bytes().size(), feed.numTensors(),
                  feed.tensorInfo().toString(), elementBytes);
    }
  }

  for (const Anchor &anchor : metadata.anchors()) {
    const TensorInfo *info = nullptr;
    if (anchor.dataSource() == DataSource::TensorData) {
      const TensorData *data = findTensorData(anchor.name());
      if (data != nullptr) info = &data->tensorInfo();
    } else if (anchor.dataSource() == DataSource::FeedData) {
      const FeedData *feed = findFeedData(anchor.name());
      if (feed != nullptr) info = &feed->tensorInfo();
    } else {
      continue;
    }
    if (info == nullptr) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: anchor '{}' takes its data from {} '{}', which model '{}' does not have",
                  metadataWhere, anchor.name(), toString(anchor.dataSource()), anchor.name(),
                  metadata.executable());
    }
    if (!(*info == anchor.tensorInfo())) {
      throw Error(ErrorCode::CorruptModel, "{}: anchor '{}' is {} but its {} is {}", metadataWhere,
                  anchor.name(), anchor.tensorInfo().toString(), toString(anchor.dataSource()),
                  info->toString());
    }
  }
}

void requireModelName(const Model &model, std::string_view name) {
  if (!name.empty() && name != model.metadata.executable()) {
    throw Error(ErrorCode::InvalidArgument, "the config asks for model '{}', the model given is '{}'", name,
                model.metadata.executable());
  }
}

std::shared_ptr<Model> withEngineOptions(const Model &model, const OptionsMap &options) {
  ModelParts parts{model.metadata, model.metadataOrigin(), model.executable(), model.tensorDataList(),
                   model.feedDataList(), model.opaqueBlobs()};
  OptionsMap engineOptions = parts.metadata.engineOptions();
  for (const auto &[key, value] : options) engineOptions.insert_or_assign(key, value);
  parts.metadata.setEngineOptions(std::move(engineOptions));
  return std::make_shared<Model>(std::move(parts));
}

}  // namespace mrt::popef
