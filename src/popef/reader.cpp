#include "popef/reader.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "popef/blob_scanner.hpp"
#include "popef/descriptor_codec.hpp"
#include "popef/mapped_file.hpp"
#include "popef/payload.hpp"

namespace mrt::popef {

namespace {

// The seal hwsim keeps an executable read from a blob under: the stored
// payload checksum, then every payload byte before the executable's
// (prefix, descriptor, padding). Equal executable bytes under an equal seal
// make an equal payload, whose checksum was verified when it was read.
std::vector<std::uint8_t> sealOf(const ScannedBlob &scanned, const PayloadParts &parts) {
  std::vector<std::uint8_t> seal(sizeof scanned.storedChecksum + (scanned.payload.size() - parts.data.size()));
  std::memcpy(seal.data(), &scanned.storedChecksum, sizeof scanned.storedChecksum);
  std::memcpy(seal.data() + sizeof scanned.storedChecksum, scanned.payload.data(),
              seal.size() - sizeof scanned.storedChecksum);
  return seal;
}

// An Executable blob's seal, and the executable hwsim kept from a blob equal
// to this one if there is one: found with one comparison of its bytes
// instead of a checksum and a comparison.
struct SealedExecutable {
  std::vector<std::uint8_t> seal;
  hwsim::Executable kept;
};
SealedExecutable sealedExecutable(const ScannedBlob &scanned, const PayloadParts &parts) {
  SealedExecutable sealed{sealOf(scanned, parts), {}};
  sealed.kept = hwsim::Executable::findKept(parts.data.data(), parts.data.size(), sealed.seal);
  return sealed;
}

// The payload's parts, or nothing if its prefix is inconsistent: a blob's
// checksum is checked before its prefix is reported.
std::optional<PayloadParts> splitIfConsistent(const ScannedBlob &scanned) {
  try {
    return splitPayload(scanned);
  } catch (const Error &) {
    return std::nullopt;
  }
}

ParsedBlob parseBlob(const ScannedBlob &scanned, const std::shared_ptr<const MappedFile> &file) {
  const BlobWhere where(scanned.location);
  const BlobType type = scanned.location.type;
  const std::optional<PayloadParts> split = splitIfConsistent(scanned);
  SealedExecutable sealed =
      type == BlobType::Executable && split ? sealedExecutable(scanned, *split) : SealedExecutable();
  if (!sealed.kept.valid()) {
    const std::uint64_t computed = scanned.computedChecksum();
    if (computed != scanned.storedChecksum) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: payload checksum mismatch over bytes {}..{} (stored {:#018x}, computed "
                  "{:#018x})",
                  where, scanned.payloadOffset, scanned.payloadOffset + scanned.payload.size(),
                  scanned.storedChecksum, computed);
    }
  }
  const PayloadParts parts = split ? *split : splitPayload(scanned);  // the second throws the prefix's error
  ParsedBlob blob;
  blob.location = scanned.location;
  blob.payloadSize = scanned.payload.size();
  blob.checksum = scanned.storedChecksum;  // verified above, or by the kept executable's seal
  if (type == BlobType::Metadata) {
    Metadata metadata = decodeMetadata(parts.descriptor, where, parts.descriptorOffset);
    if (!parts.data.empty()) {
      throw Error(ErrorCode::CorruptModel, "{}: {} unexpected bytes after the metadata at byte {}",
                  where, parts.data.size(), parts.dataOffset);
    }
    // Rules that need no other blob are checked here, so a bad file is
    // refused when parsed even if nobody builds its model.
    metadata.validate(where);
    blob.executable = metadata.executable();
    blob.metadata = std::move(metadata);
    return blob;
  }
  DataDescriptor descriptor = decodeDescriptor(type, parts.descriptor, where, parts.descriptorOffset);
  blob.executable = std::move(descriptor.executable);
  blob.name = std::move(descriptor.name);
  blob.tensorInfo = std::move(descriptor.tensorInfo);
  blob.numTensors = descriptor.numTensors;
  // Shares ownership of the mapping: this is what keeps TensorData valid.
  blob.data = SharedBytes(file, parts.data);
  blob.seal = std::move(sealed.seal);
  blob.keptExecutable = std::move(sealed.kept);
  return blob;
}

std::string describeNames(const std::vector<std::string> &names) {
  return fmt::format("'{}'", fmt::join(names, "', '"));
}

}  // namespace

void Reader::parseFile(const std::string &path) { parseImage(MappedFile::open(path)); }

void Reader::parseMemory(std::span<const std::byte> bytes, std::string name) {
  parseImage(MappedFile::copyOf(std::move(name), bytes));
}

void Reader::parseImage(const std::shared_ptr<const MappedFile> &file) {
  std::vector<ParsedBlob> parsed;
  for (const ScannedBlob &scanned : scanBlobs(*file)) parsed.push_back(parseBlob(scanned, file));
  blobs_.insert(blobs_.end(), std::make_move_iterator(parsed.begin()),
                std::make_move_iterator(parsed.end()));
  files_.push_back(file->path());
}

std::vector<std::string> Reader::modelNames() const {
  std::vector<std::string> names;
  for (const ParsedBlob &blob : blobs_) {
    if (blob.metadata) names.push_back(blob.executable);
  }
  return names;
}

std::shared_ptr<Model> ModelBuilder::createModel(std::string_view executable) const {
  if (!reader_) throw Error(ErrorCode::InvalidArgument, "ModelBuilder has no Reader");
  // One model's Metadata given twice is one model, not a choice of two: it
  // is chosen below, and the duplicate is reported as the corruption it is.
  std::vector<std::string> names;
  for (std::string &name : reader_->modelNames()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  std::string chosen(executable);
  if (chosen.empty()) {
    if (names.empty()) {
      throw Error(ErrorCode::CorruptModel, "no Metadata blob in {}", describeNames(reader_->files()));
    }
    if (names.size() > 1) {
      throw Error(ErrorCode::InvalidArgument,
                  "{} hold {} models ({}); pick one by executable name",
                  describeNames(reader_->files()), names.size(), describeNames(names));
    }
    chosen = names.front();
  }

  const ParsedBlob *metadataBlob = nullptr;
  for (const ParsedBlob &blob : reader_->blobs()) {
    if (blob.location.type != BlobType::Metadata || blob.executable != chosen) continue;
    if (metadataBlob != nullptr) {
      throw Error(ErrorCode::CorruptModel, "{}: second Metadata for executable '{}' (first in {})",
                  blob.location.describe(), chosen, metadataBlob->location.describe());
    }
    metadataBlob = &blob;
  }
  if (metadataBlob == nullptr) {
    throw Error(ErrorCode::NotFound, "no Metadata for executable '{}' in {}{}", chosen,
                describeNames(reader_->files()),
                names.empty() ? std::string() : " (models: " + describeNames(names) + ")");
  }
  // A fused model's executable is shared with the models fused with it and
  // has a name of its own; its data blobs still carry the model's name.
  const std::string &executableName = metadataBlob->metadata->executableBlob();

  ModelParts parts;
  const ParsedBlob *executableBlob = nullptr;
  for (const ParsedBlob &blob : reader_->blobs()) {
    const BlobType type = blob.location.type;
    if (blob.executable != (type == BlobType::Executable ? executableName : chosen)) continue;
    switch (type) {
      case BlobType::Metadata:
        break;
      case BlobType::Executable:
        if (executableBlob != nullptr) {
          throw Error(ErrorCode::CorruptModel, "{}: second Executable named '{}' (first in {})",
                      blob.location.describe(), executableName, executableBlob->location.describe());
        }
        executableBlob = &blob;
        break;
      case BlobType::TensorData:
        parts.tensorData.emplace_back(blob.name, *blob.tensorInfo, blob.data, blob.location);
        break;
      case BlobType::FeedData:
        parts.feedData.emplace_back(blob.name, *blob.tensorInfo, blob.numTensors, blob.data,
                                    blob.location);
        break;
      case BlobType::Opaque:
        parts.opaqueBlobs.emplace_back(blob.name, blob.data, blob.location);
        break;
    }
  }
  if (executableBlob == nullptr) {
    throw Error(ErrorCode::CorruptModel, "{}: the metadata names executable '{}', which no parsed file holds",
                metadataBlob->location.describe(), executableName);
  }
  parts.metadata = *metadataBlob->metadata;
  parts.metadataOrigin = metadataBlob->location;
  parts.executable = ExecutableBlob(executableBlob->name, executableBlob->data, executableBlob->location,
                                    executableBlob->seal, executableBlob->keptExecutable);
  return std::make_shared<Model>(std::move(parts));
}

std::shared_ptr<Model> loadModel(const std::vector<std::string> &paths, std::string_view executable) {
  if (paths.empty()) throw Error(ErrorCode::InvalidArgument, "no PopEF file to load a model from");
  auto reader = std::make_shared<Reader>();
  for (const std::string &path : paths) reader->parseFile(path);
  auto model = ModelBuilder(reader).createModel(executable);
  log::logger().info("loaded model '{}' from {}", model->metadata.executable(), fmt::join(paths, ", "));
  return model;
}

std::shared_ptr<Model> loadModelFromMemory(std::span<const std::byte> bytes,
                                           std::string_view executable) {
  auto reader = std::make_shared<Reader>();
  reader->parseMemory(bytes);
  return ModelBuilder(reader).createModel(executable);
}

}  // namespace mrt::popef
