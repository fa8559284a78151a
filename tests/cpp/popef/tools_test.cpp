// mrt-gen and mrt-info as a user runs them: mrt-gen writes every example
// model exactly as buildExampleModel() builds it, and mrt-info's text and
// JSON output of each agrees with what the reader finds in the file. Bad
// input gives a non-zero exit and one line on stderr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "internal_example_models.hpp"
#include "popef/reader.hpp"
#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using example_models::buildExampleModel;
using example_models::exampleModelNames;
using example_models::ExampleOptions;
using example_models::exampleWeights;

struct ToolRun {
  int exitCode = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ToolsTest : public ::testing::Test {
 protected:
  // Runs `program` with `arguments` (no shell metacharacters in them).
  ToolRun run(const std::string &program, const std::string &arguments) {
    const std::string out = dir_.file("stdout.txt");
    const std::string err = dir_.file("stderr.txt");
    const std::string command = fmt::format("{} {} >{} 2>{}", program, arguments, out, err);
    const int status = std::system(command.c_str());
    ToolRun result;
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = slurp(out);
    result.err = slurp(err);
    return result;
  }
  ToolRun gen(const std::string &arguments) { return run(MRT_GEN_PATH, arguments); }
  ToolRun info(const std::string &arguments) { return run(MRT_INFO_PATH, arguments); }

  // Writes example `name` with mrt-gen and returns its path.
  std::string generate(const std::string &name) {
    const std::string path = dir_.file(name + ".popef");
    const ToolRun result = gen(fmt::format("{} -o {} --batch 2 --tiles 16 --seed 3", name, path));
    EXPECT_EQ(result.exitCode, 0) << result.err;
    EXPECT_EQ(result.out.rfind("wrote " + name + " to " + path, 0), 0u) << result.out;
    return path;
  }

  static ExampleOptions generatedOptions() {
    ExampleOptions options;
    options.batch = 2;
    options.tiles = 16;
    options.seed = 3;
    return options;
  }

  test::TempDir dir_;
};

TEST_F(ToolsTest, MrtGenWritesEveryExampleModel) {
  for (const std::string &name : exampleModelNames()) {
    SCOPED_TRACE(name);
    const auto written = loadModel({generate(name)});
    test::expectSameModel(*written, *buildExampleModel(name, generatedOptions()));
  }
}

TEST_F(ToolsTest, MrtInfoJsonAgreesWithTheReaderForEveryExample) {
  for (const std::string &name : exampleModelNames()) {
    SCOPED_TRACE(name);
    const std::string path = generate(name);
    const ToolRun result = info(path + " --json");
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_TRUE(json["error"].is_null());

    auto reader = std::make_shared<Reader>();
    reader->parseFile(path);
    const auto &blobs = json["files"][0]["blobs"];
    ASSERT_EQ(blobs.size(), reader->blobs().size());
    for (std::size_t i = 0; i < blobs.size(); ++i) {
      const ParsedBlob &blob = reader->blobs()[i];
      EXPECT_EQ(blobs[i]["index"], i);
      EXPECT_EQ(blobs[i]["type"], std::string(toString(blob.location.type)));
      EXPECT_EQ(blobs[i]["executable"], blob.executable);
      EXPECT_EQ(blobs[i]["name"], blob.name);
      EXPECT_EQ(blobs[i]["offset"], blob.location.offset);
      EXPECT_EQ(blobs[i]["size"], blob.payloadSize);
      EXPECT_EQ(blobs[i]["checksum"], fmt::format("0x{:016x}", blob.checksum));
      EXPECT_EQ(blobs[i]["checksum_ok"], true);
    }

    const auto model = ModelBuilder(reader).createModel();
    const Metadata &m = model->metadata;
    ASSERT_EQ(json["models"].size(), 1u);
    const auto &j = json["models"][0];
    EXPECT_EQ(j["executable"], m.executable());
    EXPECT_EQ(j["replication_factor"], m.replicationFactor());
    EXPECT_EQ(j["num_ipus"], m.numIpus());
    EXPECT_EQ(j["ipu_version"], m.ipuVersion());
    EXPECT_EQ(j["is_inference"], m.isInference());
    EXPECT_EQ(j["package_hash"], m.packageHash());
    EXPECT_EQ(j["executable_bytes"], model->executable().bytes().size());
    EXPECT_EQ(j["program_flow"]["load"].get<std::vector<std::uint64_t>>(), m.programFlow().load());
    EXPECT_EQ(j["program_flow"]["main"].get<std::vector<std::uint64_t>>(), m.programFlow().main());
    EXPECT_EQ(j["program_flow"]["save"].get<std::vector<std::uint64_t>>(), m.programFlow().save());
    for (const auto &[index, programName] : m.programFlow().programsMap()) {
      EXPECT_EQ(j["program_flow"]["programs"][std::to_string(index)], programName);
    }
    ASSERT_EQ(j["anchors"].size(), m.anchors().size());
    for (std::size_t i = 0; i < m.anchors().size(); ++i) {
      const Anchor &a = m.anchors()[i];
      const auto &ja = j["anchors"][i];
      EXPECT_EQ(ja["name"], a.name());
      EXPECT_EQ(ja["handle"], a.handle());
      EXPECT_EQ(ja["type"], std::string(toString(a.type())));
      EXPECT_EQ(ja["tensor_info"]["dtype"], std::string(toString(a.tensorInfo().dataType())));
      EXPECT_EQ(ja["tensor_info"]["shape"].get<std::vector<std::int64_t>>(), a.tensorInfo().shape());
      EXPECT_EQ(ja["tensor_info"]["bytes"], a.tensorInfo().sizeInBytes());
      EXPECT_EQ(ja["programs"].get<std::vector<std::uint64_t>>(), a.programs());
      EXPECT_EQ(ja["is_per_replica"], a.isPerReplica());
      EXPECT_EQ(ja["data_source"], std::string(toString(a.dataSource())));
      if (a.remoteBuffer()) {
        EXPECT_EQ(ja["remote_buffer"]["name"], a.remoteBuffer()->name);
        EXPECT_EQ(ja["remote_buffer"]["repeats"], a.remoteBuffer()->repeats);
      } else {
        EXPECT_TRUE(ja["remote_buffer"].is_null());
      }
    }
    ASSERT_EQ(j["tensor_data"].size(), model->tensorDataList().size());
    for (std::size_t i = 0; i < model->tensorDataList().size(); ++i) {
      const TensorData &t = model->tensorDataList()[i];
      EXPECT_EQ(j["tensor_data"][i]["name"], t.name());
      EXPECT_EQ(j["tensor_data"][i]["bytes"], t.size());
      EXPECT_EQ(j["tensor_data"][i]["origin"]["blob"], t.origin()->index);
    }
  }
}

TEST_F(ToolsTest, MrtInfoTextShowsBlobsMetadataFlowAndAnchorsOfEveryExample) {
  for (const std::string &name : exampleModelNames()) {
    SCOPED_TRACE(name);
    const std::string path = generate(name);
    const ToolRun result = info(path);
    ASSERT_EQ(result.exitCode, 0) << result.err;
    EXPECT_TRUE(result.err.empty());
    const auto model = loadModel({path});
    const std::string &text = result.out;
    EXPECT_NE(text.find(fmt::format("File '{}' ({} bytes, ", path, std::filesystem::file_size(path))),
              std::string::npos);
    EXPECT_NE(text.find("  #  type        executable"), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("  0  Metadata    {}", name)), std::string::npos) << text;
    EXPECT_NE(text.find("Model '" + name + "'"), std::string::npos);
    EXPECT_NE(text.find(fmt::format("replication factor  {}", model->metadata.replicationFactor())),
              std::string::npos);
    EXPECT_NE(text.find("package hash        libmrt-hwsim-exe1"), std::string::npos);
    EXPECT_NE(text.find("Program flow"), std::string::npos);
    EXPECT_NE(text.find(fmt::format("main  {} (main)", model->metadata.programFlow().main()[0])),
              std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("Anchors ({})", model->metadata.anchors().size())),
              std::string::npos);
    // One table row per anchor: name, handle, type, dtype, shape, bytes in order.
    for (const Anchor &a : model->metadata.anchors()) {
      const std::size_t row = text.find("\n    " + a.name() + " ");
      ASSERT_NE(row, std::string::npos) << a.name() << "\n" << text;
      const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
      std::istringstream cells(line);
      std::string nameCell, handle, type, dtype, shape, bytes;
      cells >> nameCell >> handle >> type >> dtype >> shape >> bytes;
      EXPECT_EQ(handle, a.handle());
      EXPECT_EQ(type, std::string(toString(a.type())));
      EXPECT_EQ(dtype, std::string(toString(a.tensorInfo().dataType())));
      EXPECT_EQ(shape, fmt::format("[{}]", fmt::join(a.tensorInfo().shape(), ",")));
      EXPECT_EQ(bytes, std::to_string(a.tensorInfo().sizeInBytes()));
    }
  }
}

TEST_F(ToolsTest, MrtInfoReadsAModelSplitOverFilesAndPicksModels) {
  const auto model = test::sampleModel();
  const std::string graph = dir_.file("graph.popef");
  const std::string weights = dir_.file("weights.popef");
  {
    Writer g(graph);
    g.writeMetadata(model->metadata);
    g.writeExecutable("sample", model->executable().bytes());
    g.close();
    Writer w(weights);
    for (const TensorData &t : model->tensorDataList()) w.writeTensorData("sample", t);
    for (const FeedData &f : model->feedDataList()) w.writeFeedData("sample", f);
    w.close();
  }
  const ToolRun split = info(graph + " " + weights + " --json");
  ASSERT_EQ(split.exitCode, 0) << split.err;
  const auto json = nlohmann::json::parse(split.out);
  EXPECT_EQ(json["files"].size(), 2u);
  EXPECT_EQ(json["models"][0]["tensor_data"][0]["origin"]["file"], weights);
  EXPECT_EQ(json["models"][0]["feed_data"][0]["num_tensors"], 5);
  EXPECT_EQ(json["models"][0]["engine_options"]["target.workerThreads"], "4");

  const ToolRun alone = info(graph);
  EXPECT_EQ(alone.exitCode, 1);
  EXPECT_EQ(alone.err, fmt::format("mrt-info: '{}' blob 0 (Metadata) at byte 0: anchor 'w' takes its "
                                   "data from TensorData 'w', which model 'sample' does not have\n",
                                   graph));
  EXPECT_NE(alone.out.find("File '" + graph + "'"), std::string::npos);  // blobs still listed

  const std::string two = dir_.file("two.popef");
  {
    Writer writer(two);
    writer.writeModel(*test::sampleModel("alpha", 1));
    writer.writeModel(*test::sampleModel("beta", 2));
    writer.close();
  }
  const auto both = nlohmann::json::parse(info(two + " --json").out);
  ASSERT_EQ(both["models"].size(), 2u);
  EXPECT_EQ(both["models"][1]["executable"], "beta");
  const auto picked = nlohmann::json::parse(info(two + " --json --model beta").out);
  ASSERT_EQ(picked["models"].size(), 1u);
  EXPECT_EQ(picked["models"][0]["executable"], "beta");
}

TEST_F(ToolsTest, MrtInfoListsDamagedBlobsAndFails) {
  const std::string path = generate("stateful");
  std::vector<std::byte> bytes = test::readBytes(path);
  const auto spans = test::blobSpans(bytes);
  bytes[spans[1].payloadOffset + 100] ^= std::byte{1};
  const std::string bad = dir_.file("bad.popef");
  test::writeBytes(bad, bytes);
  const ToolRun result = info(bad);
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.out.find("1  Executable  stateful    stateful  " + std::to_string(spans[1].offset)),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("BAD (stored "), std::string::npos);
  EXPECT_EQ(result.err.rfind(fmt::format("mrt-info: '{}' blob 1 (Executable) at byte {}: payload "
                                         "checksum mismatch",
                                         bad, spans[1].offset),
                             0),
            0u)
      << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
  const auto json = nlohmann::json::parse(info(bad + " --json").out);
  EXPECT_EQ(json["files"][0]["blobs"][1]["checksum_ok"], false);
  EXPECT_TRUE(json["models"].empty());
  EXPECT_TRUE(json["error"].is_string());
}

// --bytes gives add_one's sample size in bytes: 1 MiB and 16 MiB models.
TEST_F(ToolsTest, MrtGenWritesLargeAddOneGivenInBytes) {
  for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20}) {
    const std::string path = dir_.file(fmt::format("add_one_{}.popef", bytes));
    const ToolRun result = gen(fmt::format("add_one -o {} --bytes {}", path, bytes));
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const ToolRun described = info(path + " --json");
    ASSERT_EQ(described.exitCode, 0) << described.err;
    EXPECT_NE(described.out.find(std::to_string(bytes / 4)), std::string::npos) << described.out;
  }
}

TEST_F(ToolsTest, BadCommandLinesFailWithOneLine) {
  const auto expectOneLineFailure = [](const ToolRun &result, int code, const std::string &start) {
    EXPECT_EQ(result.exitCode, code);
    EXPECT_EQ(result.err.rfind(start, 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  };
  expectOneLineFailure(gen("resnet -o " + dir_.file("x.popef")), 2, "mrt-gen: MODEL: resnet not in");
  expectOneLineFailure(gen("add_one"), 2, "mrt-gen: no output file given (-o FILE)");
  expectOneLineFailure(gen("add_one -o " + dir_.file("x.popef") + " --batch 0"), 2, "mrt-gen: --batch");
  expectOneLineFailure(gen("pipeline2 -o " + dir_.file("x.popef") + " --ipus 3"), 1,
                       "mrt-gen: pipeline2 runs on 2 IPU(s), not 3");
  expectOneLineFailure(gen("add_one -o " + dir_.file("no/such/dir.popef")), 1,
                       "mrt-gen: mrt_model_write: '" + dir_.file("no/such/dir.popef") +
                           "': cannot create PopEF file");
  expectOneLineFailure(info(""), 2, "mrt-info: FILE is required");
  expectOneLineFailure(info(dir_.file("missing.popef")), 1,
                       "mrt-info: '" + dir_.file("missing.popef") + "': no such PopEF file");
  expectOneLineFailure(info(dir_.path().string()), 1,
                       "mrt-info: '" + dir_.path().string() + "': is a directory, not a PopEF file");
  const std::string one = generate("add_one");
  expectOneLineFailure(info(one + " --model nope"), 1, "mrt-info: no Metadata for executable 'nope'");
  expectOneLineFailure(gen("add_one -o " + dir_.file("x.popef") + " --bytes 6"), 2,
                       "mrt-gen: --bytes 6 is not a whole number of F32 elements");
  expectOneLineFailure(gen("add_one -o " + dir_.file("x.popef") + " --bytes 2000000000"), 1,
                       "mrt-gen: add_one: x of [1, 500000000] F32 needs 2000000000 bytes, more than the IPU's memory");
  EXPECT_EQ(gen("--list").out, "add_one\nmlp\nstateful\nconditional\nremote_buffer\ntime_major\nreplicated\npipeline2\n");
  EXPECT_EQ(gen("--help").exitCode, 0);
  EXPECT_EQ(info("--help").exitCode, 0);
}

}  // namespace
}  // namespace mrt::popef
