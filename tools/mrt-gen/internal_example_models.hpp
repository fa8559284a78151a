// For the tests and benchmarks of libmrt's internals: the example models,
// built through the public API exactly as mrt-gen builds them, then read back
// from their PopEF bytes into the internal popef::Model that internal code
// takes. Internal code is thus tested on the very models users get, and the
// PopEF writer and reader are on the path of every such test.
#pragma once

#include <memory>
#include <string_view>

#include "example_options.hpp"
#include "popef/model.hpp"

namespace mrt::example_models {

using mrt_examples::ExampleOptions;
using mrt_examples::exampleModelNames;
using mrt_examples::exampleWeights;

// Throws mrt::Error with the public API's status and message.
std::shared_ptr<popef::Model> buildExampleModel(std::string_view name, const ExampleOptions &options = {});

}  // namespace mrt::example_models
