#include "onnx/reader.hpp"

#include <climits>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>

#include "common/error.hpp"

namespace mrt::onnx {
namespace {

namespace fs = std::filesystem;

::onnx::ModelProto parse(const void *data, std::size_t size, const std::string &what) {
  if (size == 0) throw Error(ErrorCode::CorruptModel, "{}: the model is empty (0 bytes)", what);
  if (size > static_cast<std::size_t>(INT_MAX)) {
    // protobuf cannot parse messages of 2 GiB or more; ONNX stores larger
    // weights as external data for that reason.
    throw Error(ErrorCode::CorruptModel, "{}: {} bytes is beyond protobuf's 2 GiB limit; store the weights "
                                         "as external data", what, size);
  }
  ::onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(static_cast<const std::uint8_t *>(data), static_cast<int>(size));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    throw Error(ErrorCode::CorruptModel, "{}: not a valid ONNX protobuf ({} bytes; truncated or not an ONNX file)",
                what, size);
  }
  if (!model.has_graph()) throw Error(ErrorCode::CorruptModel, "{}: the model has no graph", what);
  return model;
}

std::vector<char> readFile(const fs::path &path, const std::string &what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error(ErrorCode::NotFound, "{}: no such file '{}'", what, path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::NotFound, "{}: cannot open '{}'", what, path.string());
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Inlines one tensor's external data (keys location, offset, length) as raw_data.
void inlineExternal(::onnx::TensorProto &tensor, const fs::path &directory) {
  std::string location;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      else if (entry.key() == "offset") offset = std::stoull(entry.value());
      else if (entry.key() == "length") length = std::stoull(entry.value());
    } catch (const std::exception &) {
      throw Error(ErrorCode::CorruptModel, "tensor '{}': external data {} '{}' is not a number", tensor.name(),
                  entry.key(), entry.value());
    }
  }
  const fs::path relative(location);
  // A model file must not make us read files elsewhere on the machine.
  if (location.empty() || relative.is_absolute() || relative.lexically_normal().string().rfind("..", 0) == 0) {
    throw Error(ErrorCode::CorruptModel, "tensor '{}': external data location '{}' is not a path inside the "
                                         "model's directory", tensor.name(), location);
  }
  const std::vector<char> bytes = readFile(directory / relative, "tensor '" + tensor.name() + "'");
  const std::uint64_t size = length.value_or(bytes.size() >= offset ? bytes.size() - offset : 0);
  if (offset > bytes.size() || size > bytes.size() - offset) {
    throw Error(ErrorCode::CorruptModel, "tensor '{}': external data [{}, {}) is beyond the {} bytes of '{}'",
                tensor.name(), offset, offset + size, bytes.size(), location);
  }
  tensor.set_raw_data(bytes.data() + offset, size);
  tensor.clear_external_data();
  tensor.set_data_location(::onnx::TensorProto::DEFAULT);
}

// Applies f to every initializer and Constant value of the graph and its subgraphs.
template <typename F>
void forEachTensor(::onnx::GraphProto &graph, const F &f) {
  for (auto &t : *graph.mutable_initializer()) f(t);
  for (auto &node : *graph.mutable_node()) {
    for (auto &attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) f(*attribute.mutable_t());
      if (attribute.has_g()) forEachTensor(*attribute.mutable_g(), f);
      for (auto &g : *attribute.mutable_graphs()) forEachTensor(g, f);
    }
  }
}

void check(const ::onnx::ModelProto &model, const std::string &what) {
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    throw Error(ErrorCode::CorruptModel, "{}: the ONNX checker rejects the model: {}", what, e.what());
  }
}

}  // namespace

::onnx::ModelProto readModelFile(const fs::path &path) {
  const std::string what = "ONNX model '" + path.string() + "'";
  const std::vector<char> bytes = readFile(path, what);
  ::onnx::ModelProto model = parse(bytes.data(), bytes.size(), what);
  const fs::path directory = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  forEachTensor(*model.mutable_graph(), [&](::onnx::TensorProto &t) {
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) inlineExternal(t, directory);
  });
  check(model, what);
  return model;
}

::onnx::ModelProto readModelMemory(const void *data, std::size_t size) {
  const std::string what = "ONNX model in memory";
  ::onnx::ModelProto model = parse(data, size, what);
  forEachTensor(*model.mutable_graph(), [&](::onnx::TensorProto &t) {
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
      throw Error(ErrorCode::CorruptModel, "{}: tensor '{}' is stored as external data, which a model in memory "
                                           "cannot reach; compile it from its file", what, t.name());
    }
  });
  check(model, what);
  return model;
}

}  // namespace mrt::onnx
