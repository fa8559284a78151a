// popef::ModelBuilder and popef::createModel: a popef::Model from the files
// of a Reader or from paths. Throws mrt::Error (a std::runtime_error) naming
// the file when one is missing or not a PopEF model, and std::invalid_argument
// when no file was given.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "popef/Model.hpp"
#include "popef/Reader.hpp"

namespace popef {

class ModelBuilder {
 public:
  explicit ModelBuilder(std::shared_ptr<Reader> reader) : reader_(std::move(reader)) {}
  explicit ModelBuilder(const Reader &reader) : reader_(std::make_shared<Reader>(reader)) {}

  std::unique_ptr<Model> createModel() const {
    if (!reader_ || reader_->paths().empty()) {
      throw std::invalid_argument("popef::ModelBuilder: the reader has no PopEF file (call Reader::parseFile first)");
    }
    return std::make_unique<Model>(reader_->paths());
  }

 private:
  std::shared_ptr<Reader> reader_;
};

// The model stored in `paths`.
inline std::unique_ptr<Model> createModel(const std::vector<std::string> &paths) {
  auto reader = std::make_shared<Reader>();
  for (const auto &path : paths) reader->parseFile(path);
  return ModelBuilder(reader).createModel();
}

}  // namespace popef
