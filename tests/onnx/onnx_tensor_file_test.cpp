// mrt_onnx_read_tensor_file: TensorProto files written here with ONNX's own
// protobuf classes, read as device tensors, and every refusal.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include "mrt_c.h"

namespace fs = std::filesystem;

namespace {

class OnnxTensorFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mrt_onnx_tensor_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string &name, const ::onnx::TensorProto &tensor) const {
    const std::string path = (dir_ / name).string();
    std::ofstream file(path, std::ios::binary);
    tensor.SerializeToOstream(&file);
    return path;
  }
  std::string writeBytes(const std::string &name, const std::string &bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // The status of reading path as `count` elements of `type` into `out`,
  // which must stay untouched on failure.
  template <class T>
  mrt_status read(const std::string &path, int32_t type, std::vector<T> &out) const {
    return mrt_onnx_read_tensor_file(path.c_str(), type, out.data(), out.size() * sizeof(T));
  }

  static std::string lastError() { return mrt_last_error_message(); }

  fs::path dir_;
};

::onnx::TensorProto floats(std::vector<int64_t> dims, const std::vector<float> &values) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float)));
  return t;
}

TEST_F(OnnxTensorFile, RawFloatsAreReadInAnyShape) {
  const std::string path = write("x.pb", floats({2, 2}, {1.5f, -2.0f, 3.25f, 0.0f}));
  std::vector<float> out(4, 9.0f);
  ASSERT_EQ(read(path, MRT_F32, out), MRT_OK) << lastError();
  EXPECT_EQ(out, (std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f}));
}

TEST_F(OnnxTensorFile, Int64FillsAnS32TensorAsTheCompilerNarrowsIt) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::INT64);
  t.add_dims(3);
  for (int64_t v : {7, -1, 100000}) t.add_int64_data(v);
  const std::string path = write("ids.pb", t);
  std::vector<int32_t> out(3, 0);
  ASSERT_EQ(read(path, MRT_S32, out), MRT_OK) << lastError();
  EXPECT_EQ(out, (std::vector<int32_t>{7, -1, 100000}));

  t.set_int64_data(1, int64_t{1} << 40);
  const std::string big = write("big.pb", t);
  EXPECT_EQ(read(big, MRT_S32, out), MRT_INVALID_ARGUMENT);
  EXPECT_EQ(out, (std::vector<int32_t>{7, -1, 100000})) << "unchanged on failure";
}

TEST_F(OnnxTensorFile, RefusalsNameTheFileAndTheMismatch) {
  const std::string path = write("x.pb", floats({4}, {1, 2, 3, 4}));
  std::vector<float> two(2, 9.0f);
  EXPECT_EQ(read(path, MRT_F32, two), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("'" + path + "': the file holds 4 elements [4], the tensor needs 2"), std::string::npos)
      << lastError();
  EXPECT_EQ(two, (std::vector<float>{9.0f, 9.0f}));

  std::vector<int32_t> ints(4);
  EXPECT_EQ(read(path, MRT_S32, ints), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("the file holds FLOAT, the tensor is S32"), std::string::npos) << lastError();

  std::vector<float> four(4);
  EXPECT_EQ(read(writeBytes("junk.pb", "\xff\xff\xff not protobuf"), MRT_F32, four), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("not an ONNX TensorProto"), std::string::npos) << lastError();
  const std::string missing = (dir_ / "missing.pb").string();
  EXPECT_EQ(read(missing, MRT_F32, four), MRT_NOT_FOUND);
  EXPECT_NE(lastError().find("'" + missing + "': no such file"), std::string::npos) << lastError();
  EXPECT_EQ(read(dir_.string(), MRT_F32, four), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("not a regular file"), std::string::npos) << lastError();

  EXPECT_EQ(mrt_onnx_read_tensor_file(path.c_str(), MRT_F32, four.data(), 15), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("size 15 is not a whole number of 4-byte elements"), std::string::npos) << lastError();
  EXPECT_EQ(mrt_onnx_read_tensor_file(path.c_str(), 99, four.data(), 16), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("data_type 99"), std::string::npos) << lastError();
  EXPECT_EQ(mrt_onnx_read_tensor_file(nullptr, MRT_F32, four.data(), 16), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("path must not be NULL"), std::string::npos) << lastError();
  EXPECT_EQ(mrt_onnx_read_tensor_file(path.c_str(), MRT_F32, nullptr, 16), MRT_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("buffer must not be NULL"), std::string::npos) << lastError();
}

}  // namespace
