// Writes the sample PopEF files the C API tests (tests/c/test_model.c) read,
// with the raw bytes they must find in them:
//   sample.popef                     test::sampleModel() ("sample")
//   two.popef                        models "alpha" and "beta"
//   graph.popef + weights.popef      "sample" split: metadata/executable, data
//   w.bin, feed.bin, executable.bin  the expected bytes of "sample"
// Usage: popef_write_samples DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace {

using namespace mrt::popef;

void writeRaw(const std::filesystem::path &path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const auto sample = test::sampleModel();
    test::writeModelFile(*sample, (dir / "sample.popef").string());
    {
      Writer writer((dir / "two.popef").string());
      writer.writeModel(*test::sampleModel("alpha", 10));
      writer.writeModel(*test::sampleModel("beta", 20));
      writer.close();
    }
    {
      Writer graph((dir / "graph.popef").string());
      graph.writeMetadata(sample->metadata);
      graph.writeExecutable("sample", sample->executable().bytes());
      graph.close();
      Writer weights((dir / "weights.popef").string());
      for (const TensorData &data : sample->tensorDataList()) weights.writeTensorData("sample", data);
      for (const FeedData &feed : sample->feedDataList()) weights.writeFeedData("sample", feed);
      weights.close();
    }
    writeRaw(dir / "w.bin", sample->tensorData("w").bytes());
    writeRaw(dir / "feed.bin", sample->feedData("feed").bytes());
    writeRaw(dir / "executable.bin", sample->executable().bytes());
  } catch (const std::exception &error) {
    std::fprintf(stderr, "popef_write_samples: %s\n", error.what());
    return 1;
  }
  return 0;
}
