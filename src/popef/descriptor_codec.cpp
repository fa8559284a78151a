#include "popef/descriptor_codec.hpp"

#include <set>

#include <flatbuffers/flatbuffers.h>

#include "common/error.hpp"
#include "popef/format.hpp"
#include "popef_generated.h"

namespace mrt::popef {

namespace {

// Metadata.batching_dim's default in popef.fbs: the model records none.
constexpr std::uint32_t kNoBatchingDim = 0xFFFFFFFFu;

// One 4-character FlatBuffers file identifier per root table, so that a
// descriptor of one blob type can never be read as another.
const char *fileIdentifier(BlobType type) {
  switch (type) {
    case BlobType::Metadata: return "MRTM";
    case BlobType::Executable: return "MRTX";
    case BlobType::TensorData: return "MRTT";
    case BlobType::FeedData: return "MRTF";
    case BlobType::Opaque: return "MRTO";
  }
  return "????";
}

std::vector<std::byte> finish(flatbuffers::FlatBufferBuilder &builder) {
  const auto *data = reinterpret_cast<const std::byte *>(builder.GetBufferPointer());
  return {data, data + builder.GetSize()};
}

// ---- encoding ----
// Strings go through CreateString(std::string) rather than the *Direct
// helpers' c_str(), so names with embedded NULs survive a round trip.

using Builder = flatbuffers::FlatBufferBuilder;

flatbuffers::Offset<fb::TensorInfo> encodeTensorInfo(Builder &builder, const TensorInfo &info) {
  const auto shape = builder.CreateVector(info.shape());
  return fb::CreateTensorInfo(builder, static_cast<fb::DataType>(info.dataType()), shape);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Option>>> encodeOptions(
    Builder &builder, const OptionsMap &options) {
  std::vector<flatbuffers::Offset<fb::Option>> entries;
  for (const auto &[key, value] : options) {
    const auto keyOffset = builder.CreateString(key);
    const auto valueOffset = builder.CreateString(value);
    entries.push_back(fb::CreateOption(builder, keyOffset, valueOffset));
  }
  return builder.CreateVector(entries);
}

flatbuffers::Offset<fb::ProgramFlow> encodeProgramFlow(Builder &builder, const ProgramFlow &flow) {
  std::vector<flatbuffers::Offset<fb::ProgramName>> names;
  for (const auto &[index, name] : flow.programsMap()) {
    const auto nameOffset = builder.CreateString(name);
    names.push_back(fb::CreateProgramName(builder, index, nameOffset));
  }
  const auto load = builder.CreateVector(flow.load());
  const auto main = builder.CreateVector(flow.main());
  const auto save = builder.CreateVector(flow.save());
  const auto programs = builder.CreateVector(names);
  return fb::CreateProgramFlow(builder, load, main, save, programs);
}

flatbuffers::Offset<fb::Anchor> encodeAnchor(Builder &builder, const Anchor &anchor) {
  const auto name = builder.CreateString(anchor.name());
  const auto handle = builder.CreateString(anchor.handle());
  const auto info = encodeTensorInfo(builder, anchor.tensorInfo());
  const auto programs = builder.CreateVector(anchor.programs());
  flatbuffers::Offset<fb::RemoteBufferInfo> remote;
  if (anchor.remoteBuffer()) {
    const auto bufferName = builder.CreateString(anchor.remoteBuffer()->name);
    remote = fb::CreateRemoteBufferInfo(builder, bufferName, anchor.remoteBuffer()->repeats);
  }
  return fb::CreateAnchor(builder, name, handle, info, programs, anchor.isPerReplica(),
                          static_cast<fb::TensorType>(anchor.type()),
                          static_cast<fb::DataSource>(anchor.dataSource()), remote);
}

// ---- decoding ----

class Decoder {
 public:
  Decoder(const BlobWhere &where, std::uint64_t fileOffset) : where_(where), offset_(fileOffset) {}

  template <typename Root>
  const Root *verify(std::span<const std::byte> bytes, BlobType type) {
    const auto *data = reinterpret_cast<const std::uint8_t *>(bytes.data());
    base_ = data;
    // Root offset + identifier: the smallest FlatBuffer that can be checked.
    constexpr std::size_t kMinimumSize = sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
    if (bytes.size() >= kMinimumSize &&
        !flatbuffers::BufferHasIdentifier(data, fileIdentifier(type))) {
      fail("descriptor at byte {} does not carry the {} identifier '{}'", offset_,
           toString(type), fileIdentifier(type));
    }
    flatbuffers::Verifier verifier(data, bytes.size());
    if (bytes.size() < kMinimumSize || !verifier.VerifyBuffer<Root>(fileIdentifier(type))) {
      fail("descriptor FlatBuffer at byte {} ({} bytes) fails verification", offset_,
           bytes.size());
    }
    return flatbuffers::GetRoot<Root>(data);
  }

  static std::string string(const flatbuffers::String *text) {
    return text == nullptr ? std::string() : text->str();
  }

  // FlatBuffers 2.0's verifier checks the alignment of a vector's length
  // but not of its elements, so a hostile buffer can place 8-byte elements
  // at a 4-byte boundary; reading them would be a misaligned load. The
  // descriptor itself starts 16-byte aligned, so checking the address is
  // checking the offset. (Empty vectors are not aligned by the builder, and
  // need not be: nothing is read.)
  template <typename T>
  std::vector<T> vector(const flatbuffers::Vector<T> *values) const {
    if (values == nullptr || values->size() == 0) return {};
    if (reinterpret_cast<std::uintptr_t>(values->Data()) % alignof(T) != 0) {
      fail("a vector of {}-byte elements at descriptor offset {} is misaligned", sizeof(T),
           static_cast<std::uint64_t>(values->Data() - base_));
    }
    return std::vector<T>(values->begin(), values->end());
  }

  TensorInfo tensorInfo(const fb::TensorInfo *info, std::string_view owner) const {
    if (info == nullptr) fail("{} has no tensor info", owner);
    const auto type = dataTypeFromValue(static_cast<std::uint64_t>(info->data_type()));
    if (!type) {
      fail("{} has unknown data type {}", owner, static_cast<unsigned>(info->data_type()));
    }
    try {
      return TensorInfo(*type, vector(info->shape()));
    } catch (const Error &error) {
      fail("{}: {}", owner, error.what());
    }
  }

  OptionsMap options(const flatbuffers::Vector<flatbuffers::Offset<fb::Option>> *entries,
                     std::string_view kind) const {
    OptionsMap options;
    if (entries == nullptr) return options;
    for (const fb::Option *entry : *entries) {
      const std::string key = string(entry->key());
      if (!options.emplace(key, string(entry->value())).second) {
        fail("{} option '{}' appears twice", kind, key);
      }
    }
    return options;
  }

  ProgramFlow programFlow(const fb::ProgramFlow *flow) const {
    if (flow == nullptr) return {};
    std::map<ProgramFlow::ProgramIndexType, std::string> names;
    if (flow->programs() != nullptr) {
      for (const fb::ProgramName *entry : *flow->programs()) {
        if (!names.emplace(entry->index(), string(entry->name())).second) {
          fail("program {} is named twice in the programs map", entry->index());
        }
      }
    }
    return ProgramFlow(vector(flow->load()), vector(flow->main()), vector(flow->save()),
                       std::move(names));
  }

  Anchor anchor(const fb::Anchor *entry) const {
    const std::string name = string(entry->name());
    const std::string owner = "anchor '" + name + "'";
    const auto rawType = static_cast<unsigned>(entry->type());
    if (rawType > static_cast<unsigned>(TensorType::UNKNOWN)) {
      fail("{} has unknown tensor type {}", owner, rawType);
    }
    const auto rawSource = static_cast<unsigned>(entry->data_source());
    if (rawSource > static_cast<unsigned>(DataSource::FeedData)) {
      fail("{} has unknown data source {}", owner, rawSource);
    }
    std::optional<RemoteBufferInfo> remote;
    if (const fb::RemoteBufferInfo *info = entry->remote_buffer()) {
      remote = RemoteBufferInfo{string(info->name()), info->repeats()};
    }
    return Anchor(name, string(entry->handle()), tensorInfo(entry->tensor_info(), owner),
                  vector(entry->programs()), static_cast<TensorType>(rawType),
                  entry->is_per_replica(), static_cast<DataSource>(rawSource), std::move(remote));
  }

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args &&...args) const {
    throw Error(ErrorCode::CorruptModel, "{}: {}", where_,
                fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  BlobWhere where_;
  std::uint64_t offset_;
  const std::uint8_t *base_ = nullptr;  // the verified buffer
};

}  // namespace

std::vector<std::byte> encodeMetadata(const Metadata &metadata) {
  Builder builder(1024);
  std::vector<flatbuffers::Offset<fb::Anchor>> anchorOffsets;
  for (const Anchor &anchor : metadata.anchors()) {
    anchorOffsets.push_back(encodeAnchor(builder, anchor));
  }
  const auto anchors = builder.CreateVector(anchorOffsets);
  const auto executable = builder.CreateString(metadata.executable());
  const auto engineOptions = encodeOptions(builder, metadata.engineOptions());
  const auto deviceOptions = encodeOptions(builder, metadata.deviceOptions());
  const auto seedHandle = builder.CreateString(metadata.seedHandle());
  const auto packageHash = builder.CreateString(metadata.packageHash());
  const auto flow = encodeProgramFlow(builder, metadata.programFlow());
  // Absent rather than empty when not fused: unfused metadata keeps its bytes.
  const auto sharedExecutable = metadata.sharedExecutable().empty()
                                    ? flatbuffers::Offset<flatbuffers::String>()
                                    : builder.CreateString(metadata.sharedExecutable());
  const auto root = fb::CreateMetadata(builder, executable, metadata.replicationFactor(),
                                       metadata.numIpus(), metadata.ipuVersion(),
                                       metadata.isInference(), engineOptions, deviceOptions,
                                       seedHandle, packageHash, flow, anchors, sharedExecutable,
                                       metadata.batchingDim().value_or(kNoBatchingDim));
  builder.Finish(root, fileIdentifier(BlobType::Metadata));
  return finish(builder);
}

std::vector<std::byte> encodeDescriptor(BlobType type, const DataDescriptor &descriptor) {
  Builder builder(256);
  const auto name = builder.CreateString(descriptor.name);
  switch (type) {
    case BlobType::Executable:
      builder.Finish(fb::CreateExecutableDescriptor(builder, name), fileIdentifier(type));
      break;
    case BlobType::TensorData:
    case BlobType::FeedData: {
      if (!descriptor.tensorInfo) {
        throw Error(ErrorCode::InvalidArgument, "{} '{}' needs a TensorInfo", toString(type),
                    descriptor.name);
      }
      const auto executable = builder.CreateString(descriptor.executable);
      const auto info = encodeTensorInfo(builder, *descriptor.tensorInfo);
      if (type == BlobType::TensorData) {
        builder.Finish(fb::CreateTensorDataDescriptor(builder, executable, name, info),
                       fileIdentifier(type));
      } else {
        builder.Finish(fb::CreateFeedDataDescriptor(builder, executable, name, info,
                                                    descriptor.numTensors),
                       fileIdentifier(type));
      }
      break;
    }
    case BlobType::Opaque: {
      const auto executable = builder.CreateString(descriptor.executable);
      builder.Finish(fb::CreateOpaqueDescriptor(builder, executable, name), fileIdentifier(type));
      break;
    }
    case BlobType::Metadata:
      throw Error(ErrorCode::Internal, "encodeDescriptor() does not encode Metadata");
  }
  return finish(builder);
}

Metadata decodeMetadata(std::span<const std::byte> bytes, const BlobWhere &where,
                        std::uint64_t fileOffset) {
  Decoder decoder(where, fileOffset);
  const fb::Metadata *root = decoder.verify<fb::Metadata>(bytes, BlobType::Metadata);
  Metadata metadata;
  metadata.setExecutable(Decoder::string(root->executable()));
  metadata.setSharedExecutable(Decoder::string(root->shared_executable()));
  metadata.setReplicationFactor(root->replication_factor());
  metadata.setNumIpus(root->num_ipus());
  metadata.setIpuVersion(root->ipu_version());
  metadata.setIsInference(root->is_inference());
  metadata.setEngineOptions(decoder.options(root->engine_options(), "engine"));
  metadata.setDeviceOptions(decoder.options(root->device_options(), "device"));
  metadata.setSeedHandle(Decoder::string(root->seed_handle()));
  metadata.setPackageHash(Decoder::string(root->package_hash()));
  metadata.setProgramFlow(decoder.programFlow(root->program_flow()));
  if (root->batching_dim() != kNoBatchingDim) metadata.setBatchingDim(root->batching_dim());
  if (root->anchors() != nullptr) {
    std::vector<Anchor> anchors;
    anchors.reserve(root->anchors()->size());
    for (const fb::Anchor *anchor : *root->anchors()) anchors.push_back(decoder.anchor(anchor));
    metadata.setAnchors(std::move(anchors));
  }
  return metadata;
}

DataDescriptor decodeDescriptor(BlobType type, std::span<const std::byte> bytes,
                                const BlobWhere &where, std::uint64_t fileOffset) {
  Decoder decoder(where, fileOffset);
  DataDescriptor descriptor;
  switch (type) {
    case BlobType::Executable: {
      const auto *root = decoder.verify<fb::ExecutableDescriptor>(bytes, type);
      descriptor.name = Decoder::string(root->name());
      descriptor.executable = descriptor.name;
      break;
    }
    case BlobType::TensorData: {
      const auto *root = decoder.verify<fb::TensorDataDescriptor>(bytes, type);
      descriptor.executable = Decoder::string(root->executable());
      descriptor.name = Decoder::string(root->name());
      descriptor.tensorInfo =
          decoder.tensorInfo(root->tensor_info(), "TensorData '" + descriptor.name + "'");
      break;
    }
    case BlobType::FeedData: {
      const auto *root = decoder.verify<fb::FeedDataDescriptor>(bytes, type);
      descriptor.executable = Decoder::string(root->executable());
      descriptor.name = Decoder::string(root->name());
      descriptor.tensorInfo =
          decoder.tensorInfo(root->tensor_info(), "FeedData '" + descriptor.name + "'");
      descriptor.numTensors = root->num_tensors();
      break;
    }
    case BlobType::Opaque: {
      const auto *root = decoder.verify<fb::OpaqueDescriptor>(bytes, type);
      descriptor.executable = Decoder::string(root->executable());
      descriptor.name = Decoder::string(root->name());
      break;
    }
    case BlobType::Metadata:
      throw Error(ErrorCode::Internal, "decodeDescriptor() does not decode Metadata");
  }
  if (descriptor.name.empty()) decoder.fail("{} descriptor has an empty name", toString(type));
  return descriptor;
}

}  // namespace mrt::popef
