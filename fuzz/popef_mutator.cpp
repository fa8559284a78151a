// A libFuzzer custom mutator (and cross-over) for PopEF files.
//
// Flipping bytes of a PopEF file almost always breaks a checksum, and the
// loader stops there: plain libFuzzer would fuzz the blob scanner and little
// else. This mutator parses the blob framing (docs/popef.md), mutates inside
// one blob - its descriptor FlatBuffer or its data section (the serialized
// executable, tensor bytes), with libFuzzer's own LLVMFuzzerMutate - or, less
// often, a header or payload-prefix field or the order of the blobs, then
// writes the file back with every size, offset and XXH3 checksum recomputed.
// So mutations reach the Metadata, the Executable and the model-vs-executable
// checks, and from there the Session and the ModelRunner.
//
// Linked into the libFuzzer targets only (fuzz preset); the ctest replay
// builds do not mutate.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "popef/format.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t *data, std::size_t size, std::size_t maxSize);

namespace {

namespace format = mrt::popef::format;
namespace offset = format::header_offset;
using Bytes = std::vector<std::uint8_t>;
using Rng = std::minstd_rand;

constexpr std::uint32_t kMetadata = 1;
constexpr std::uint32_t kExecutable = 2;
constexpr std::uint32_t kTensorData = 3;

struct Blob {
  std::array<std::uint8_t, format::kHeaderSize> header{};
  Bytes payload;
  // A header field was mutated: write the header as it is (payload size
  // included), re-hashing it only if `rehashHeader`.
  bool rawHeader = false;
  bool rehashHeader = true;
};

struct File {
  std::vector<Blob> blobs;
  Bytes tail;  // whatever follows the last blob that parsed
};

template <typename T>
T get(const std::uint8_t *bytes, std::size_t at) {
  T value;
  std::memcpy(&value, bytes + at, sizeof(T));
  return value;
}

template <typename T>
void put(std::uint8_t *bytes, std::size_t at, T value) {
  std::memcpy(bytes + at, &value, sizeof(T));
}

std::uint64_t hash(const std::uint8_t *bytes, std::size_t size) {
  return format::checksum(std::span(reinterpret_cast<const std::byte *>(bytes), size));
}

std::size_t pick(Rng &rng, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }
bool chance(Rng &rng, unsigned percent) { return pick(rng, 100) < percent; }

// The blobs whose magic is right and whose payload fits, from the start.
bool parse(const std::uint8_t *data, std::size_t size, File &file) {
  std::size_t at = 0;
  while (size - at >= format::kHeaderSize &&
         std::memcmp(data + at + offset::kMagic, format::kMagic.data(), format::kMagic.size()) == 0) {
    const auto payloadSize = get<std::uint64_t>(data, at + offset::kPayloadSize);
    if (payloadSize > size - at - format::kHeaderSize) break;
    Blob blob;
    std::memcpy(blob.header.data(), data + at, format::kHeaderSize);
    const std::uint8_t *payload = data + at + format::kHeaderSize;
    blob.payload.assign(payload, payload + payloadSize);
    file.blobs.push_back(std::move(blob));
    at = std::min<std::uint64_t>(size, format::alignUp(at + format::kHeaderSize + payloadSize));
  }
  file.tail.assign(data + at, data + size);
  return !file.blobs.empty();
}

std::size_t sizeOf(const File &file) {
  std::size_t size = file.tail.size();
  for (const Blob &blob : file.blobs) size += format::kHeaderSize + format::alignUp(blob.payload.size());
  return size;
}

// Writes `file` with sizes and checksums made right; 0 if it needs more
// than `maxSize` bytes.
std::size_t write(const File &file, std::uint8_t *out, std::size_t maxSize) {
  if (sizeOf(file) > maxSize) return 0;
  std::size_t at = 0;
  for (const Blob &blob : file.blobs) {
    std::uint8_t *header = out + at;
    std::memcpy(header, blob.header.data(), format::kHeaderSize);
    if (!blob.rawHeader) put<std::uint64_t>(header, offset::kPayloadSize, blob.payload.size());
    put<std::uint64_t>(header, offset::kPayloadChecksum, hash(blob.payload.data(), blob.payload.size()));
    if (blob.rehashHeader) {
      put<std::uint64_t>(header, offset::kHeaderChecksum, hash(header, format::kHeaderHashedBytes));
    }
    at += format::kHeaderSize;
    if (!blob.payload.empty()) std::memcpy(out + at, blob.payload.data(), blob.payload.size());
    const std::size_t padded = format::alignUp(blob.payload.size());
    std::memset(out + at + blob.payload.size(), 0, padded - blob.payload.size());
    at += padded;
  }
  if (!file.tail.empty()) std::memcpy(out + at, file.tail.data(), file.tail.size());
  return at + file.tail.size();
}

std::uint32_t typeOf(const Blob &blob) { return get<std::uint32_t>(blob.header.data(), offset::kType); }

// A blob, Metadata and Executable four times as likely as the others.
std::size_t pickBlob(const File &file, Rng &rng) {
  std::vector<unsigned> weights;
  for (const Blob &blob : file.blobs) {
    const std::uint32_t type = typeOf(blob);
    weights.push_back(type == kMetadata || type == kExecutable ? 4 : 1);
  }
  return std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng);
}

// A payload cut into its descriptor and data section (docs/popef.md).
struct Parts {
  Bytes descriptor;
  Bytes data;
};

bool split(const Bytes &payload, Parts &parts) {
  if (payload.size() < format::kPayloadPrefixSize) return false;
  const auto descriptorSize = get<std::uint32_t>(payload.data(), 0);
  const auto dataOffset = get<std::uint64_t>(payload.data(), 8);
  if (descriptorSize == 0 || descriptorSize > payload.size() - format::kPayloadPrefixSize ||
      dataOffset != format::dataOffsetFor(descriptorSize) || dataOffset > payload.size()) {
    return false;
  }
  const auto *descriptor = payload.data() + format::kPayloadPrefixSize;
  parts.descriptor.assign(descriptor, descriptor + descriptorSize);
  parts.data.assign(payload.begin() + static_cast<std::ptrdiff_t>(dataOffset), payload.end());
  return true;
}

Bytes join(const Parts &parts) {
  const std::uint64_t dataOffset = format::dataOffsetFor(parts.descriptor.size());
  Bytes payload(dataOffset, 0);
  put<std::uint32_t>(payload.data(), 0, static_cast<std::uint32_t>(parts.descriptor.size()));
  put<std::uint64_t>(payload.data(), 8, dataOffset);
  std::copy(parts.descriptor.begin(), parts.descriptor.end(), payload.begin() + format::kPayloadPrefixSize);
  payload.insert(payload.end(), parts.data.begin(), parts.data.end());
  return payload;
}

// libFuzzer's mutations on `bytes`, which may grow by up to `grow`.
void mutateBytes(Bytes &bytes, std::size_t grow, Rng &rng) {
  if (bytes.empty()) {
    if (grow == 0) return;
    bytes.push_back(static_cast<std::uint8_t>(rng()));
  }
  const std::size_t size = bytes.size();
  bytes.resize(size + grow);
  bytes.resize(LLVMFuzzerMutate(bytes.data(), size, size + grow));
}

// libFuzzer's mutations on a few bytes of `bytes`, whose size stays: the
// usual way to change a FlatBuffer's values without breaking its offsets.
void mutateWindow(Bytes &bytes, Rng &rng) {
  if (bytes.empty()) return;
  const std::size_t length = std::min<std::size_t>(bytes.size(), 1 + pick(rng, 16));
  const std::size_t at = pick(rng, bytes.size() - length + 1);
  std::array<std::uint8_t, 16> window{};
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), length, window.begin());
  const std::size_t n = LLVMFuzzerMutate(window.data(), length, length);
  std::copy_n(window.begin(), std::min(n, length), bytes.begin() + static_cast<std::ptrdiff_t>(at));
}

// Values that cross limits: sizes, counts, indices, shapes (FlatBuffer
// scalars are aligned to their size from the buffer's start).
void setInterestingValue(Bytes &bytes, Rng &rng) {
  static constexpr std::uint64_t kValues[] = {
      0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 127, 128, 255, 256, 1023, 1024, 4096, 65535, 65536,
      0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0x200000000, 0x7fffffffffffffff,
      0x8000000000000000, 0xffffffffffffffff, 0xfffffffffffffffe, std::uint64_t{1} << 62};
  const bool wide = chance(rng, 40);
  const std::size_t width = wide ? 8 : 4;
  if (bytes.size() < width) return;
  const std::size_t at = pick(rng, bytes.size() / width) * width;
  std::uint64_t value = kValues[pick(rng, std::size(kValues))];
  if (chance(rng, 25)) value = ~value + 1;  // negative
  if (wide) {
    put<std::uint64_t>(bytes.data(), at, value);
  } else {
    put<std::uint32_t>(bytes.data(), at, static_cast<std::uint32_t>(value));
  }
}

// Mutates the blob's descriptor or data section; `room` bytes may be added.
void mutatePayload(Blob &blob, std::size_t room, Rng &rng) {
  Parts parts;
  if (!split(blob.payload, parts)) {
    mutateBytes(blob.payload, std::min<std::size_t>(room, 256), rng);
    return;
  }
  const std::uint32_t type = typeOf(blob);
  // Executable: its data section is the program. TensorData: the bytes are
  // only weights, the descriptor (name, TensorInfo) matters more.
  const unsigned dataPercent = type == kMetadata ? 0 : type == kExecutable ? 60 : type == kTensorData ? 10 : 30;
  Bytes &section = chance(rng, dataPercent) && !parts.data.empty() ? parts.data : parts.descriptor;
  // Descriptors and executables are FlatBuffers: mostly values changed in
  // place; inserting or erasing bytes mostly fails the verifier.
  const std::size_t how = pick(rng, 100);
  if (how < 40) {
    mutateWindow(section, rng);
  } else if (how < 70) {
    setInterestingValue(section, rng);
  } else {
    mutateBytes(section, std::min<std::size_t>(room, 256), rng);
  }
  if (parts.descriptor.empty()) return;  // the loader requires one; keep the old payload
  blob.payload = join(parts);
}

// A header field: type, version, payload size, reserved or magic bytes.
void mutateHeader(Blob &blob, Rng &rng) {
  blob.rawHeader = true;
  std::uint8_t *header = blob.header.data();
  put<std::uint64_t>(header, offset::kPayloadSize, blob.payload.size());
  switch (pick(rng, 6)) {
    case 0: put<std::uint32_t>(header, offset::kType, static_cast<std::uint32_t>(pick(rng, 8))); break;
    case 1: put<std::uint32_t>(header, offset::kVersion, static_cast<std::uint32_t>(pick(rng, 4))); break;
    case 2: {
      const std::uint64_t size = blob.payload.size();
      const std::uint64_t deltas[] = {1, 8, 64, 4096};
      const std::uint64_t delta = deltas[pick(rng, std::size(deltas))];
      put<std::uint64_t>(header, offset::kPayloadSize, chance(rng, 50) ? size + delta : size - std::min(size, delta));
      break;
    }
    case 3: put<std::uint64_t>(header, offset::kPayloadSize, ~std::uint64_t{0} - pick(rng, 128)); break;
    case 4: header[offset::kReserved + pick(rng, format::kHeaderSize - offset::kReserved)] = static_cast<std::uint8_t>(rng() | 1); break;
    default: header[offset::kMagic + pick(rng, format::kMagic.size())] ^= static_cast<std::uint8_t>(1u << pick(rng, 8)); break;
  }
  blob.rehashHeader = !chance(rng, 5);
}

// The 16-byte payload prefix: descriptor size, reserved, data offset.
void mutatePrefix(Blob &blob, Rng &rng) {
  if (blob.payload.size() < format::kPayloadPrefixSize) return;
  Bytes prefix(blob.payload.begin(), blob.payload.begin() + format::kPayloadPrefixSize);
  if (chance(rng, 50)) {
    setInterestingValue(prefix, rng);
  } else {
    mutateBytes(prefix, 0, rng);
  }
  std::copy(prefix.begin(), prefix.end(), blob.payload.begin());
}

// Blob order and count: duplicate, drop or swap blobs.
void mutateStructure(File &file, std::size_t room, Rng &rng) {
  const std::size_t n = file.blobs.size();
  const std::size_t i = pick(rng, n);
  switch (pick(rng, 3)) {
    case 0:
      if (format::kHeaderSize + format::alignUp(file.blobs[i].payload.size()) <= room) {
        Blob copy = file.blobs[i];
        file.blobs.insert(file.blobs.begin() + static_cast<std::ptrdiff_t>(pick(rng, n + 1)), std::move(copy));
      }
      break;
    case 1:
      if (n > 1) file.blobs.erase(file.blobs.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    default: std::swap(file.blobs[i], file.blobs[pick(rng, n)]); break;
  }
}

std::size_t roomIn(const File &file, std::size_t maxSize) {
  const std::size_t size = sizeOf(file) + format::kAlignment;  // slack for the padding
  return maxSize > size ? maxSize - size : 0;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t *data, std::size_t size, std::size_t maxSize,
                                               unsigned int seed) {
  Rng rng(seed);
  File file;
  // Not PopEF-framed (or, rarely, on purpose): plain byte mutations, the
  // checksums left as they fall.
  if (!parse(data, size, file) || chance(rng, 3)) return LLVMFuzzerMutate(data, size, maxSize);
  const std::size_t room = roomIn(file, maxSize);
  const std::size_t kind = pick(rng, 100);
  if (kind < 75) {
    mutatePayload(file.blobs[pickBlob(file, rng)], room, rng);
  } else if (kind < 85) {
    mutateHeader(file.blobs[pickBlob(file, rng)], rng);
  } else if (kind < 92) {
    mutatePrefix(file.blobs[pickBlob(file, rng)], rng);
  } else {
    mutateStructure(file, room, rng);
  }
  const std::size_t written = write(file, data, maxSize);
  return written != 0 ? written : LLVMFuzzerMutate(data, size, maxSize);
}

// Splices two inputs at blob level: one blob's descriptor or data section
// replaced by that of a blob of the same type in the other input (an
// executable under another model's metadata, weights of another size, ...),
// or a blob of the other input inserted.
extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t *data1, std::size_t size1,
                                                 const std::uint8_t *data2, std::size_t size2,
                                                 std::uint8_t *out, std::size_t maxOutSize, unsigned int seed) {
  Rng rng(seed);
  File first;
  File second;
  if (!parse(data1, size1, first) || !parse(data2, size2, second)) return 0;
  const Blob &donor = second.blobs[pickBlob(second, rng)];
  std::vector<std::size_t> sameType;
  for (std::size_t i = 0; i < first.blobs.size(); ++i) {
    if (typeOf(first.blobs[i]) == typeOf(donor)) sameType.push_back(i);
  }
  Parts from;
  Parts to;
  if (sameType.empty() || chance(rng, 20) || !split(donor.payload, from)) {
    first.blobs.insert(first.blobs.begin() + static_cast<std::ptrdiff_t>(pick(rng, first.blobs.size() + 1)), donor);
  } else {
    Blob &blob = first.blobs[sameType[pick(rng, sameType.size())]];
    if (!split(blob.payload, to)) return 0;
    // Metadata has no data section; for the others the data is the usual
    // swap (the descriptor names the model the blob belongs to).
    if (typeOf(blob) == kMetadata || chance(rng, 25)) {
      to.descriptor = from.descriptor;
    } else {
      to.data = from.data;
    }
    blob.payload = join(to);
  }
  return write(first, out, maxOutSize);
}
