// Reading models from PopEF files, the seeds' way:
//
//   auto reader = std::make_shared<popef::Reader>();
//   reader->parseFile("weights.popef");
//   reader->parseFile("model.popef");
//   popef::ModelBuilder builder(reader);
//   std::shared_ptr<popef::Model> model = builder.createModel();
//
// or loadModel({paths...}). Each file is memory-mapped read-only and every
// blob is checked (framing, checksums, FlatBuffers verifier) when parsed;
// TensorData, FeedData, Opaque and Executable bytes stay in the map. File
// content already in memory is parsed the same way from an aligned copy
// (parseMemory, loadModelFromMemory), named kMemoryName in messages.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hwsim/executable.hpp>

#include "popef/blob_type.hpp"
#include "popef/metadata.hpp"
#include "popef/model.hpp"
#include "popef/shared_bytes.hpp"
#include "popef/tensor_info.hpp"

namespace mrt::popef {

// One verified blob of a parsed file.
struct ParsedBlob {
  BlobLocation location;
  std::uint64_t payloadSize = 0;
  std::uint64_t checksum = 0;       // XXH3-64 of the payload (verified)
  std::string executable;           // the model the blob belongs to
  std::string name;                 // empty for Metadata
  std::optional<Metadata> metadata;      // Metadata blobs
  std::optional<TensorInfo> tensorInfo;  // TensorData and FeedData
  std::uint64_t numTensors = 0;          // FeedData
  SharedBytes data;  // the data section: executable, tensor, feed or opaque bytes
  std::vector<std::uint8_t> seal;        // Executable: see ExecutableBlob
  hwsim::Executable keptExecutable;      // Executable: kept under the seal, if found
};

// What messages call bytes parsed from memory, where a file name would be.
inline constexpr std::string_view kMemoryName = "<memory>";

class MappedFile;

class Reader {
 public:
  // Maps `path` and checks each of its blobs. Throws mrt::Error: NotFound if
  // the file does not exist, CorruptModel naming the file, blob and byte
  // offset for anything wrong in it. On error nothing of the file is kept.
  void parseFile(const std::string &path);
  // The same for the content of a PopEF file in memory: the bytes are
  // copied (64-byte aligned, as a mapping is), so the caller may free them.
  // `name` stands for the file name in messages and files().
  void parseMemory(std::span<const std::byte> bytes, std::string name = std::string(kMemoryName));

  const std::vector<ParsedBlob> &blobs() const noexcept { return blobs_; }
  // The paths parsed successfully, in order.
  const std::vector<std::string> &files() const noexcept { return files_; }
  // Executable names of the Metadata blobs found, in file order: the models
  // a ModelBuilder can create.
  std::vector<std::string> modelNames() const;

 private:
  void parseImage(const std::shared_ptr<const MappedFile> &file);

  std::vector<ParsedBlob> blobs_;
  std::vector<std::string> files_;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(std::shared_ptr<const Reader> reader) : reader_(std::move(reader)) {}

  // The model whose Metadata names `executable`; with an empty name, the
  // only model of the parsed files. Throws mrt::Error: InvalidArgument if the
  // name is empty and there are several models, NotFound if no Metadata names
  // it, CorruptModel for a duplicate or missing blob or an inconsistent model.
  std::shared_ptr<Model> createModel(std::string_view executable = {}) const;

 private:
  std::shared_ptr<const Reader> reader_;
};

// Parses every path and builds the model named `executable` (or the only one).
std::shared_ptr<Model> loadModel(const std::vector<std::string> &paths,
                                 std::string_view executable = {});
// Parses one PopEF file's content from memory (copied) and builds its model.
std::shared_ptr<Model> loadModelFromMemory(std::span<const std::byte> bytes,
                                           std::string_view executable = {});

}  // namespace mrt::popef
