#include "onnx/tensor_file.hpp"

#include <filesystem>
#include <fstream>
#include <optional>

#include "common/error.hpp"
#include "onnx/host_tensor.hpp"

namespace mrt::onnx {

namespace {

// NotFound unless path is a regular file (a directory opens as a stream, of
// a nonsense size).
void requireRegularFile(const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw Error(ErrorCode::NotFound, "'{}': no such file", path);
  if (!std::filesystem::is_regular_file(status))
    throw Error(ErrorCode::InvalidArgument, "'{}': not a regular file", path);
}

}  // namespace

std::vector<std::uint8_t> readTensorFile(const std::string &path, hwsim::Type type, std::uint64_t elements) {
  requireRegularFile(path);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::NotFound, "'{}': cannot open the file", path);
  ::onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&file)) throw Error(ErrorCode::InvalidArgument, "'{}': not an ONNX TensorProto", path);
  HostTensor tensor;
  try {
    tensor = fromProto(proto);
  } catch (const Error &e) {
    throw Error(ErrorCode::InvalidArgument, "'{}': {}", path, e.what());
  }
  if (deviceType(tensor.type) != std::optional<hwsim::Type>(type))
    throw Error(ErrorCode::InvalidArgument, "'{}': the file holds {}, the tensor is {}", path, typeName(tensor.type),
                hwsim::toString(type));
  if (tensor.numElements() != elements)
    throw Error(ErrorCode::InvalidArgument, "'{}': the file holds {} elements {}, the tensor needs {}", path,
                tensor.numElements(), toString(tensor.dims), elements);
  try {
    return toDeviceBytes(tensor, type, path);
  } catch (const Error &e) {
    throw Error(ErrorCode::InvalidArgument, "{}", e.what());
  }
}

}  // namespace mrt::onnx
