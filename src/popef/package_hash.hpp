// The runtime package a model's executable is built for. A Session created
// with check_package_hash compares Metadata::packageHash() with this.
#pragma once

#include <string>

namespace mrt::popef {

// "libmrt-hwsim-exe<N>": changes whenever an executable built by this
// library could no longer be run by it (the hwsim executable format).
const std::string &runtimePackageHash();

}  // namespace mrt::popef
