// mrt_onnx_read_tensor_file (include/mrt_c.h, "Importing ONNX models") over
// onnx::readTensorFile: a file feeds an input exactly as the compiler would
// have read the same tensor as a constant.
#include <cstring>

#include "capi/element_type.hpp"
#include "capi/guard.hpp"
#include "common/error.hpp"
#include "onnx/tensor_file.hpp"

extern "C" {

MRT_API mrt_status mrt_onnx_read_tensor_file(const char *path, int32_t data_type, void *buffer,
                                             uint64_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::requireNotNull(path, "path");
    const hwsim::Type type = mrt::capi::hwsimTypeOf(data_type, "data_type");
    if (size > 0) mrt::capi::requireNotNull(buffer, "buffer");
    const std::size_t element = hwsim::sizeOf(type);
    if (size % element != 0)
      throw mrt::Error(mrt::ErrorCode::InvalidArgument, "size {} is not a whole number of {}-byte elements", size,
                       element);
    const std::vector<std::uint8_t> bytes = mrt::onnx::readTensorFile(path, type, size / element);
    if (!bytes.empty()) std::memcpy(buffer, bytes.data(), bytes.size());
  });
}

}  // extern "C"
