// What the ONNX tests share: the directories CMake compiles in, and reading
// the FLOAT tensors of an ONNX test data set (input_<i>.pb, output_<i>.pb).
#pragma once

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace onnx_test {

namespace fs = std::filesystem;

// The directory `fallback` (compiled in by CMake), unless the environment
// variable `name` overrides it.
inline fs::path envDir(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value != nullptr ? fs::path(value) : fs::path(fallback);
}

inline std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A FLOAT tensor of an ONNX test data set (.pb); *name gets its name (may be empty).
inline std::vector<float> readTensor(const fs::path &path, std::string *name = nullptr) {
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(readBytes(path))) << path;
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT) << path;
  if (name != nullptr) *name = t.name();
  if (t.has_raw_data()) {
    std::vector<float> v(t.raw_data().size() / sizeof(float));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    return v;
  }
  return std::vector<float>(t.float_data().begin(), t.float_data().end());
}

}  // namespace onnx_test
