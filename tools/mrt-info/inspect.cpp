#include "inspect.hpp"

#include "common/error.hpp"
#include "popef/blob_scanner.hpp"
#include "popef/descriptor_codec.hpp"
#include "popef/mapped_file.hpp"
#include "popef/payload.hpp"
#include "popef/reader.hpp"

namespace mrt::info {

namespace {

// Names a blob from its descriptor; a blob whose descriptor cannot be read
// keeps empty names and says why.
BlobRow describeBlob(const popef::ScannedBlob &scanned) {
  BlobRow row;
  row.index = scanned.location.index;
  row.type = scanned.location.type;
  row.offset = scanned.location.offset;
  row.payloadSize = scanned.payload.size();
  row.storedChecksum = scanned.storedChecksum;
  row.computedChecksum = scanned.computedChecksum;
  try {
    const popef::PayloadParts parts = popef::splitPayload(scanned);
    const std::string where = scanned.location.describe();
    if (row.type == popef::BlobType::Metadata) {
      row.executable = popef::decodeMetadata(parts.descriptor, where, parts.descriptorOffset).executable();
    } else {
      popef::DataDescriptor descriptor =
          popef::decodeDescriptor(row.type, parts.descriptor, where, parts.descriptorOffset);
      row.executable = std::move(descriptor.executable);
      row.name = std::move(descriptor.name);
    }
  } catch (const Error &error) {
    row.problem = error.what();
  }
  return row;
}

FileReport scanFile(const std::string &path, std::string &error) {
  FileReport report;
  report.path = path;
  std::vector<popef::ScannedBlob> scanned;
  try {
    const auto file = popef::MappedFile::open(path);
    report.size = file->bytes().size();
    try {
      popef::scanBlobs(*file, scanned);
    } catch (const Error &framing) {
      if (error.empty()) error = framing.what();
    }
    for (const popef::ScannedBlob &blob : scanned) report.blobs.push_back(describeBlob(blob));
  } catch (const Error &open) {
    if (error.empty()) error = open.what();
  }
  return report;
}

}  // namespace

Report inspect(const std::vector<std::string> &paths, const std::optional<std::string> &model) {
  Report report;
  for (const std::string &path : paths) report.files.push_back(scanFile(path, report.error));
  if (!report.error.empty()) return report;
  // The framing is sound: load through the real reader, which checks the rest.
  try {
    auto reader = std::make_shared<popef::Reader>();
    for (const std::string &path : paths) reader->parseFile(path);
    const popef::ModelBuilder builder(reader);
    if (model) {
      report.models.push_back(builder.createModel(*model));
    } else {
      const std::vector<std::string> names = reader->modelNames();
      // Without any Metadata, createModel() throws the error naming the files.
      if (names.empty()) builder.createModel();
      for (const std::string &name : names) report.models.push_back(builder.createModel(name));
    }
  } catch (const Error &error) {
    report.error = error.what();
  }
  return report;
}

}  // namespace mrt::info
