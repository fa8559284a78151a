// What mrt-info knows about a set of PopEF files: every blob it could frame
// (with its checksum status, even a bad one), and the models they hold.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "popef/blob_type.hpp"
#include "popef/model.hpp"

namespace mrt::info {

struct BlobRow {
  std::size_t index = 0;
  popef::BlobType type = popef::BlobType::Opaque;
  std::string executable;  // the model it belongs to ("" if unreadable)
  std::string name;        // "" for Metadata
  std::uint64_t offset = 0;
  std::uint64_t payloadSize = 0;
  std::uint64_t storedChecksum = 0;
  std::uint64_t computedChecksum = 0;
  bool checksumOk() const { return storedChecksum == computedChecksum; }
  std::string problem;  // why its descriptor could not be read, if so
};

struct FileReport {
  std::string path;
  std::uint64_t size = 0;
  std::vector<BlobRow> blobs;  // as far as the framing could be followed
};

struct Report {
  std::vector<FileReport> files;
  std::vector<std::shared_ptr<const popef::Model>> models;
  // The first problem found (one line); empty if the files are sound.
  std::string error;
};

// Reads `paths`; with `model` set, only that model is reported (an error if
// the files do not hold it). Never throws for bad files: see Report::error.
Report inspect(const std::vector<std::string> &paths, const std::optional<std::string> &model);

std::string renderText(const Report &report);
std::string renderJson(const Report &report);

}  // namespace mrt::info
