// 10,000 random mutations and truncations of valid model files (the sample
// model, a two-model file and every example model): each load
// either fails with a clean mrt::Error naming the file, or gives a model that
// verifies and whose every byte can be read. Run it under ASan/UBSan too
// (the asan preset) to prove no mutation reads out of bounds.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "internal_example_models.hpp"
#include "popef/format.hpp"
#include "popef/reader.hpp"
#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using example_models::buildExampleModel;
using example_models::exampleModelNames;
using example_models::ExampleOptions;
using example_models::exampleWeights;

using test::BlobSpan;

constexpr int kIterations = 10'000;

struct Seed {
  std::string executable;  // the model to load from the file
  std::vector<std::byte> bytes;
  std::vector<BlobSpan> spans;
};

enum class Mutation {
  FlipAnywhere,       // random bits anywhere, checksums left stale
  Truncate,           // cut the file at a random length
  FlipPayloadSealed,  // random bits in payloads, checksums recomputed
  FlipDescriptorSealed,  // random bits in one FlatBuffer descriptor, resealed
  HeaderFieldSealed,  // a random value in a header or prefix field, resealed
  SpliceSealed,       // a random range removed or duplicated, resealed
  kCount,
};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : random_(seed) {}

  std::vector<std::byte> mutate(const Seed &seed, Mutation mutation) {
    std::vector<std::byte> bytes = seed.bytes;
    switch (mutation) {
      case Mutation::FlipAnywhere:
        flip(bytes, 0, bytes.size(), 1 + below(8));
        break;
      case Mutation::Truncate:
        bytes.resize(below(bytes.size()));
        break;
      case Mutation::FlipPayloadSealed: {
        const BlobSpan &blob = pick(seed.spans);
        flip(bytes, blob.payloadOffset, blob.payloadSize, 1 + below(4));
        test::resealChecksums(bytes);
        break;
      }
      case Mutation::FlipDescriptorSealed: {
        const BlobSpan &blob = pick(seed.spans);
        const auto size = format::load<std::uint32_t>(std::span(bytes), blob.payloadOffset);
        flip(bytes, blob.payloadOffset + format::kPayloadPrefixSize, size, 1 + below(3));
        test::resealChecksums(bytes);
        break;
      }
      case Mutation::HeaderFieldSealed: {
        const BlobSpan &blob = pick(seed.spans);
        // Fields: version, type, payload size, prefix descriptor size, data offset.
        static constexpr std::size_t kFieldOffsets[] = {8, 12, 16, 64, 72};
        const std::size_t at = blob.offset + kFieldOffsets[below(std::size(kFieldOffsets))];
        const std::uint64_t interesting[] = {0, 1, 63, 64, 65, 0xffffffffull, ~0ull, random_()};
        const std::uint64_t value = interesting[below(std::size(interesting))];
        format::store<std::uint32_t>(std::span(bytes), at, static_cast<std::uint32_t>(value));
        test::resealChecksums(bytes);
        break;
      }
      case Mutation::SpliceSealed: {
        const std::size_t begin = below(bytes.size());
        const std::size_t length = 1 + below(std::min<std::size_t>(256, bytes.size() - begin));
        if (random_() % 2 == 0) {
          bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                      bytes.begin() + static_cast<std::ptrdiff_t>(begin + length));
        } else {
          const std::vector<std::byte> copy(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                                            bytes.begin() + static_cast<std::ptrdiff_t>(begin + length));
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(below(bytes.size())),
                       copy.begin(), copy.end());
        }
        test::resealChecksums(bytes);
        break;
      }
      case Mutation::kCount:
        break;
    }
    return bytes;
  }

  std::size_t below(std::size_t bound) { return bound == 0 ? 0 : random_() % bound; }

 private:
  void flip(std::vector<std::byte> &bytes, std::size_t begin, std::size_t size, std::size_t count) {
    if (size == 0) return;
    for (std::size_t i = 0; i < count; ++i) {
      bytes[begin + below(size)] ^= static_cast<std::byte>(1u << below(8));
    }
  }
  const BlobSpan &pick(const std::vector<BlobSpan> &spans) { return spans[below(spans.size())]; }

  std::mt19937_64 random_;
};

// Reads everything a runtime would read from a loaded model.
std::uint64_t touchEverything(const Model &model) {
  std::uint64_t sum = model.metadata.anchors().size();
  for (const Anchor &anchor : model.metadata.anchors()) {
    sum += static_cast<std::uint64_t>(anchor.tensorInfo().sizeInBytes()) + anchor.name().size();
  }
  for (const std::byte b : model.executable().bytes()) sum += static_cast<std::uint64_t>(b);
  for (const TensorData &data : model.tensorDataList()) {
    for (const std::byte b : data.bytes()) sum += static_cast<std::uint64_t>(b);
  }
  for (const FeedData &feed : model.feedDataList()) {
    for (std::uint64_t i = 0; i < feed.numTensors(); ++i) sum += feed.tensor(i).size();
  }
  return sum;
}

// The kind of problem an error reports: its text after the location, with
// quoted names and numbers blanked so that equal problems group together.
std::string problemKind(const std::string &message) {
  std::size_t start = 0;
  for (const char *end : {"': ", ": "}) {
    const std::size_t at = message.find(end);
    if (at != std::string::npos) {
      start = at + std::strlen(end);
      break;
    }
  }
  // The location ends at the first ": " after "at byte N" when there is one.
  const std::size_t byte = message.find(" at byte ");
  if (byte != std::string::npos && message.find(": ", byte) != std::string::npos) {
    start = message.find(": ", byte) + 2;
  }
  std::string kind;
  bool quoted = false;
  for (std::size_t i = start; i < message.size(); ++i) {
    const char c = message[i];
    if (c == '\'') {
      if (!quoted) kind += "'_'";
      quoted = !quoted;
    } else if (!quoted && std::isdigit(static_cast<unsigned char>(c))) {
      if (kind.empty() || kind.back() != 'N') kind += 'N';
    } else if (!quoted) {
      kind += c;
    }
  }
  return kind.substr(0, 80);
}

Seed makeSeed(const std::string &path, const std::string &executable) {
  Seed seed{executable, test::readBytes(path), {}};
  seed.spans = test::blobSpans(seed.bytes);
  return seed;
}

TEST(PopefFuzzTest, MutatedFilesLoadCleanlyOrVerify) {
  test::TempDir dir(test::memoryBackedTempBase());
  std::vector<Seed> seeds;
  test::writeModelFile(*test::sampleModel(), dir.file("sample.popef"));
  seeds.push_back(makeSeed(dir.file("sample.popef"), "sample"));
  {
    Writer writer(dir.file("two.popef"));
    writer.writeModel(*test::sampleModel("alpha", 5));
    writer.writeModel(*test::sampleModel("beta", 6));
    writer.close();
  }
  seeds.push_back(makeSeed(dir.file("two.popef"), "beta"));
  // Every example model of DESIGN.md 9, as mrt-gen writes them (small tile
  // count: the executable's size does not change what is being fuzzed).
  ExampleOptions options;
  options.tiles = 16;
  for (const std::string &name : exampleModelNames()) {
    test::writeModelFile(*buildExampleModel(name, options), dir.file(name + ".popef"));
    seeds.push_back(makeSeed(dir.file(name + ".popef"), name));
  }

  const std::string path = dir.file("mutated.popef");
  // MRT_POPEF_FUZZ_SEED explores other mutations; the default keeps CI deterministic.
  const char *seedText = std::getenv("MRT_POPEF_FUZZ_SEED");
  Mutator mutator(seedText != nullptr ? std::strtoull(seedText, nullptr, 10) : 20240611);
  std::map<std::string, int> outcomes;
  for (int i = 0; i < kIterations; ++i) {
    const Seed &seed = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const auto mutation = static_cast<Mutation>(mutator.below(static_cast<std::size_t>(Mutation::kCount)));
    test::writeBytes(path, mutator.mutate(seed, mutation));
    try {
      const auto model = loadModel({path}, seed.executable);
      model->verify();
      EXPECT_GT(touchEverything(*model), 0u);
      ++outcomes["loaded"];
    } catch (const Error &error) {
      const std::string message = error.what();
      ASSERT_TRUE(error.code() == ErrorCode::CorruptModel || error.code() == ErrorCode::NotFound)
          << "iteration " << i << ": " << message;
      ASSERT_NE(message.find(path), std::string::npos) << "iteration " << i << ": " << message;
      ++outcomes[problemKind(message)];
    }
  }
  // The sealed mutations must get past the checksums to the deeper checks.
  int verifierFailures = 0;
  int loaded = outcomes["loaded"];
  for (const auto &[kind, count] : outcomes) {
    if (kind.find("fails verification") != std::string::npos) verifierFailures += count;
  }
  EXPECT_GT(verifierFailures, 50);
  EXPECT_GT(loaded, 0);  // some mutations only touch tensor bytes
  for (const auto &[kind, count] : outcomes) std::printf("%6d  %s\n", count, kind.c_str());
}

}  // namespace
}  // namespace mrt::popef
