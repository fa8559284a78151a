// The C handle of a PopEF model: one shared reference to the immutable
// mrt::popef::Model, so that runners and sessions created from it can share
// the model (and its memory-mapped files) beyond mrt_model_destroy().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mrt_c.h"
#include "popef/model.hpp"

struct mrt_model {
  std::shared_ptr<mrt::popef::Model> model;
};

namespace mrt::capi {

// An anchor as the C API describes it; strings and arrays are borrowed from
// the anchor. struct_size is sizeof(mrt_anchor_info).
mrt_anchor_info anchorInfo(const popef::Anchor &anchor);

// Checked C path arguments: paths non-NULL, at least one, none NULL.
std::vector<std::string> pathsOf(const char *const *paths, std::size_t numPaths);

// The model behind a handle; throws InvalidArgument naming `argument` if NULL.
const std::shared_ptr<popef::Model> &modelOf(const mrt_model *handle, const char *argument);

}  // namespace mrt::capi
