// popef::Model: one model (metadata, executable, tensor and feed data) read
// from PopEF files. libmrt keeps the bytes memory-mapped inside its own
// mrt::Model; this class adds the popef::Metadata view the Model Runtime API
// reads. Immutable once created: any thread may read it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "popef/Types.hpp"

namespace popef {

class Model {
 public:
  // Loads the model stored in `paths` (one model, possibly split over files).
  explicit Model(const std::vector<std::string> &paths)
      : Model(std::make_shared<const mrt::Model>(paths)) {}
  // Wraps a model libmrt already loaded.
  explicit Model(std::shared_ptr<const mrt::Model> model) : metadata(*model), model_(std::move(model)) {}

  // The bytes of TensorData `name` (borrowed from the model); throws
  // mrt::Error(MRT_NOT_FOUND) if the model has none by that name.
  mrt::Span<const std::byte> tensorData(const std::string &name) const { return model_->tensorData(name); }

  // libmrt extension: the underlying model, for code mixing this API with mrt.hpp.
  const mrt::Model &mrtModel() const { return *model_; }

  Metadata metadata;

 private:
  std::shared_ptr<const mrt::Model> model_;
};

}  // namespace popef
