// An example model (tools/mrt-gen's builders) as a PopEF file in the
// benchmark's work directory (private_devices.hpp), written on first use.
#pragma once

#include <filesystem>
#include <string>

#include "internal_example_models.hpp"
#include "popef/writer.hpp"
#include "private_devices.hpp"

namespace mrt_bench {

inline std::string exampleModelFile(const std::string &name) {
  const auto path = workDir() / (name + ".popef");
  if (!std::filesystem::exists(path)) {
    mrt::popef::Writer writer(path.string());
    writer.writeModel(*mrt::example_models::buildExampleModel(name));
    writer.close();
  }
  return path.string();
}

}  // namespace mrt_bench
