#include "internal_example_models.hpp"

#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "example_models_abi.hpp"
#include "popef/reader.hpp"

namespace mrt::example_models {

std::shared_ptr<popef::Model> buildExampleModel(std::string_view name, const ExampleOptions &options) {
  std::vector<std::byte> bytes;
  int status = 0;
  std::string message;
  if (!mrt_examples::examplePopefBytes(name, options, bytes, status, message)) {
    // The C API's status codes are ErrorCode's values (src/capi/status.cpp).
    throw Error(static_cast<ErrorCode>(status), "{}", message);
  }
  return popef::loadModelFromMemory(std::span<const std::byte>(bytes.data(), bytes.size()));
}

}  // namespace mrt::example_models
