// What mrt-info knows about a set of PopEF files, all of it read through the
// public API (mrt_popef_listing): every blob it could frame (with its
// checksum status, even a bad one), and the models they hold.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mrt.hpp"

namespace mrt::info {

using Options = std::vector<std::pair<std::string, std::string>>;

// One model as mrt-info shows it. Its data blobs are the listing's rows,
// which say where each came from.
struct ModelReport {
  ModelInfo info;
  std::optional<std::uint32_t> batchingDim;
  Options engineOptions, deviceOptions;
  std::vector<std::uint64_t> load, main, save;
  std::map<std::uint64_t, std::string> programs;
  std::vector<AnchorInfo> anchors;
  std::uint64_t executableBytes = 0;
  std::vector<BlobInfo> tensorData, feedData, opaque;
  std::optional<BlobInfo> metadata;  // the blob it was read from
};

struct Report {
  std::vector<ListedFile> files;
  std::vector<ModelReport> models;
  // The first problem found (one line); empty if the files are sound.
  std::string error;
};

// Reads `paths`; with `model` set, only that model is reported (an error if
// the files do not hold it). Never throws for bad files: see Report::error.
Report inspect(const std::vector<std::string> &paths, const std::optional<std::string> &model);

// The path of the file a listed blob is in.
inline const std::string &fileOf(const Report &report, const BlobInfo &blob) {
  return report.files.at(blob.file).path;
}

std::string renderText(const Report &report);
std::string renderJson(const Report &report);

}  // namespace mrt::info
