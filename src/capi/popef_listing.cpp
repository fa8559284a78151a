// mrt_popef_listing (include/mrt_c.h, "Inspecting PopEF files"): the blobs
// of PopEF files read as far as their framing can be followed, then the
// models loaded through the real reader, with the first problem found kept
// in the listing instead of failing the call, so that a damaged file is
// still shown up to where it breaks (mrt-info).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/sized_struct.hpp"
#include "popef/blob_scanner.hpp"
#include "popef/descriptor_codec.hpp"
#include "popef/mapped_file.hpp"
#include "popef/payload.hpp"
#include "popef/reader.hpp"

struct mrt_popef_listing {
  // What the C struct borrows lives here.
  struct Blob {
    mrt_blob_info info{};  // strings and shape are set when it is handed out
    std::string executable, name, problem;
    std::vector<std::int64_t> shape;
  };
  struct File {
    std::string path;
    std::uint64_t size = 0;
    std::vector<Blob> blobs;
  };
  std::vector<File> files;
  std::vector<std::shared_ptr<mrt::popef::Model>> models;
  mrt_status status = MRT_OK;  // of the first problem
  std::string message;         // "" if none
};

namespace {

namespace popef = mrt::popef;
using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;
using Listing = mrt_popef_listing;

static_assert(static_cast<int>(popef::BlobType::Metadata) == MRT_BLOB_METADATA);
static_assert(static_cast<int>(popef::BlobType::Executable) == MRT_BLOB_EXECUTABLE);
static_assert(static_cast<int>(popef::BlobType::TensorData) == MRT_BLOB_TENSOR_DATA);
static_assert(static_cast<int>(popef::BlobType::FeedData) == MRT_BLOB_FEED_DATA);
static_assert(static_cast<int>(popef::BlobType::Opaque) == MRT_BLOB_OPAQUE);

// Keeps the first problem only: later ones are often its consequences.
void record(Listing &listing, const Error &error) {
  if (listing.status != MRT_OK) return;
  listing.status = static_cast<mrt_status>(error.code());
  listing.message = error.what();
}

// Names a blob from its descriptor; a blob whose descriptor cannot be read
// keeps empty names and says why.
Listing::Blob describeBlob(const popef::ScannedBlob &scanned, std::size_t file) {
  Listing::Blob blob;
  mrt_blob_info &info = blob.info;
  info.file = file;
  info.index = scanned.location.index;
  info.type = static_cast<std::int32_t>(scanned.location.type);
  info.offset = scanned.location.offset;
  info.payload_size = scanned.payload.size();
  info.stored_checksum = scanned.storedChecksum;
  info.computed_checksum = scanned.computedChecksum();
  info.data_type = -1;
  try {
    const popef::PayloadParts parts = popef::splitPayload(scanned);
    const popef::BlobWhere where(scanned.location);
    if (scanned.location.type == popef::BlobType::Metadata) {
      blob.executable = popef::decodeMetadata(parts.descriptor, where, parts.descriptorOffset).executable();
    } else {
      popef::DataDescriptor descriptor =
          popef::decodeDescriptor(scanned.location.type, parts.descriptor, where, parts.descriptorOffset);
      blob.executable = std::move(descriptor.executable);
      blob.name = std::move(descriptor.name);
      if (descriptor.tensorInfo) {
        info.data_type = static_cast<std::int32_t>(descriptor.tensorInfo->dataType());
        blob.shape = descriptor.tensorInfo->shape();
        info.num_tensors = scanned.location.type == popef::BlobType::FeedData ? descriptor.numTensors : 1;
      }
    }
    info.data_size = parts.data.size();
  } catch (const Error &error) {
    blob.problem = error.what();
  }
  return blob;
}

Listing::File scanFile(const std::string &path, std::size_t index, Listing &listing) {
  Listing::File file;
  file.path = path;
  std::vector<popef::ScannedBlob> scanned;
  try {
    const auto mapped = popef::MappedFile::open(path);
    file.size = mapped->bytes().size();
    try {
      popef::scanBlobs(*mapped, scanned);
    } catch (const Error &framing) {
      record(listing, framing);  // the blobs before it are still listed
    }
    for (const popef::ScannedBlob &blob : scanned) file.blobs.push_back(describeBlob(blob, index));
  } catch (const Error &open) {
    record(listing, open);
  }
  return file;
}

// The framing is sound: load through the real reader, which checks the rest.
void loadModels(const std::vector<std::string> &paths, const char *modelName, Listing &listing) {
  try {
    auto reader = std::make_shared<popef::Reader>();
    for (const std::string &path : paths) reader->parseFile(path);
    const popef::ModelBuilder builder(reader);
    if (modelName != nullptr) {
      listing.models.push_back(builder.createModel(modelName));
      return;
    }
    const std::vector<std::string> names = reader->modelNames();
    // Without any Metadata, createModel() throws the error naming the files.
    if (names.empty()) builder.createModel();
    for (const std::string &name : names) listing.models.push_back(builder.createModel(name));
  } catch (const Error &error) {
    record(listing, error);
  }
}

const Listing &listingOf(const mrt_popef_listing *listing) {
  requireNotNull(listing, "listing");
  return *listing;
}

const Listing::File &fileOf(const Listing &listing, std::size_t file) {
  if (file >= listing.files.size()) {
    throw Error(ErrorCode::InvalidArgument, "file {} is out of range (the listing has {} files)", file,
                listing.files.size());
  }
  return listing.files[file];
}

}  // namespace

extern "C" {

MRT_API mrt_status mrt_popef_listing_create(const char *const *paths, size_t num_paths, const char *model_name,
                                            mrt_popef_listing **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const std::vector<std::string> checked = mrt::capi::pathsOf(paths, num_paths);
    if (model_name != nullptr && *model_name == '\0') {
      throw Error(ErrorCode::InvalidArgument, "model_name must not be empty (NULL: every model)");
    }
    requireNotNull(out, "out");
    auto listing = std::make_unique<Listing>();
    for (std::size_t i = 0; i < checked.size(); ++i) listing->files.push_back(scanFile(checked[i], i, *listing));
    if (listing->status == MRT_OK) loadModels(checked, model_name, *listing);
    *out = listing.release();
  });
}

MRT_API void mrt_popef_listing_destroy(mrt_popef_listing *listing) noexcept { delete listing; }

MRT_API const char *mrt_blob_type_name(int32_t type) noexcept {
  // Any std::uint32_t is a BlobType value (a negative one too, converted),
  // and toString names those that are none "Unknown". Its views are of
  // string literals: NUL-terminated, static.
  return popef::toString(static_cast<popef::BlobType>(static_cast<std::uint32_t>(type))).data();
}

MRT_API mrt_status mrt_popef_listing_error(const mrt_popef_listing *listing, mrt_status *out_status,
                                           const char **out_message) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const Listing &l = listingOf(listing);
    if (out_status != nullptr) *out_status = l.status;
    if (out_message != nullptr) *out_message = l.message.c_str();
  });
}

MRT_API mrt_status mrt_popef_listing_file(const mrt_popef_listing *listing, size_t file, const char **out_path,
                                          uint64_t *out_size, size_t *out_num_blobs) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const Listing::File &f = fileOf(listingOf(listing), file);
    if (out_path != nullptr) *out_path = f.path.c_str();
    if (out_size != nullptr) *out_size = f.size;
    if (out_num_blobs != nullptr) *out_num_blobs = f.blobs.size();
  });
}

MRT_API mrt_status mrt_popef_listing_blob(const mrt_popef_listing *listing, size_t file, size_t index,
                                          mrt_blob_info *out_blob) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const Listing::File &f = fileOf(listingOf(listing), file);
    if (index >= f.blobs.size()) {
      throw Error(ErrorCode::InvalidArgument, "blob index {} is out of range (file {} has {} listed blobs)",
                  index, file, f.blobs.size());
    }
    const Listing::Blob &blob = f.blobs[index];
    mrt_blob_info info = blob.info;
    info.executable = blob.executable.c_str();
    info.name = blob.name.c_str();
    info.problem = blob.problem.c_str();
    info.shape = blob.shape.empty() ? nullptr : blob.shape.data();
    info.rank = blob.shape.size();
    mrt::capi::fillSized(out_blob, info, MRT_BLOB_INFO_V1_SIZE, "out_blob");
  });
}

MRT_API mrt_status mrt_popef_listing_num_models(const mrt_popef_listing *listing, size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const Listing &l = listingOf(listing);
    requireNotNull(out_count, "out_count");
    *out_count = l.models.size();
  });
}

MRT_API mrt_status mrt_popef_listing_model(const mrt_popef_listing *listing, size_t index,
                                           mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const Listing &l = listingOf(listing);
    requireNotNull(out, "out");
    if (index >= l.models.size()) {
      throw Error(ErrorCode::InvalidArgument, "model index {} is out of range (the listing has {} models)",
                  index, l.models.size());
    }
    *out = new mrt_model{l.models[index]};
  });
}

}  // extern "C"
