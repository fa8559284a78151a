#include "onnx_tensor_file.hpp"

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "onnx/host_tensor.hpp"
#include "popef/graph_model_builder.hpp"
#include "popef/tensor_info.hpp"

namespace mrt::run {

void requireReadableFile(const std::string &name, const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw Error(ErrorCode::NotFound, "--input {}={}: no such file", name, path);
  if (!std::filesystem::is_regular_file(status))
    throw Error(ErrorCode::InvalidArgument, "--input {}={}: not a regular file", name, path);
}

std::vector<std::byte> readOnnxTensorFile(const std::string &name, const std::string &path, const DataDesc &desc,
                                          std::uint64_t expectedBytes) {
  requireReadableFile(name, path);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::NotFound, "--input {}={}: cannot open the file", name, path);
  ::onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&file))
    throw Error(ErrorCode::InvalidArgument, "--input {}={}: not an ONNX TensorProto", name, path);
  const onnx::HostTensor tensor = onnx::fromProto(proto);
  const std::optional<hwsim::Type> type = onnx::deviceType(tensor.type);
  if (!type || popef::toDataType(*type) != desc.data_type)
    throw Error(ErrorCode::InvalidArgument, "--input {}={}: the file holds {}, the input is {}", name, path,
                onnx::typeName(tensor.type), popef::toString(desc.data_type));
  const std::uint64_t expectedElements = expectedBytes / popef::elementSize(desc.data_type);
  if (tensor.numElements() != expectedElements)
    throw Error(ErrorCode::InvalidArgument, "--input {}={}: the file holds {} elements {}, the request needs {}",
                name, path, tensor.numElements(), onnx::toString(tensor.dims), expectedElements);
  const std::vector<std::uint8_t> bytes = onnx::toDeviceBytes(tensor, *type, name);
  const auto *first = reinterpret_cast<const std::byte *>(bytes.data());
  return {first, first + bytes.size()};
}

}  // namespace mrt::run
