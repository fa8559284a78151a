#include "example_models_abi.hpp"

#include <exception>

#include "example_models.hpp"

namespace mrt_examples {

bool examplePopefBytes(std::string_view name, const ExampleOptions &options, std::vector<std::byte> &bytes,
                       int &status, std::string &message) {
  try {
    bytes = mrt::writeModelToMemory(buildExampleModel(name, options));
    return true;
  } catch (const mrt::Error &error) {
    status = error.code();
    message = error.what();
  } catch (const std::exception &error) {
    status = MRT_INTERNAL;
    message = error.what();
  }
  return false;
}

}  // namespace mrt_examples
