// The example models across a shared-library boundary, for the internals'
// tests and benchmarks. They link libmrt's internals (mrt_core), whose
// mrt::Error, mrt::Device, ... share their names with the C++ wrapper's
// classes that example_models.cpp uses; two definitions of one class in one
// program break the one-definition rule. So the models are built inside a
// shared library of their own (libmrt_example_models.so, built from
// example_models.cpp and example_models_abi.cpp with every symbol hidden but
// these), and cross over as PopEF bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "example_options.hpp"

namespace mrt_examples {

// The PopEF bytes of example `name`. On failure returns false and sets
// status (an mrt_status) and message; nothing is thrown.
MRT_EXAMPLES_API bool examplePopefBytes(std::string_view name, const ExampleOptions &options,
                                        std::vector<std::byte> &bytes, int &status, std::string &message);

}  // namespace mrt_examples
