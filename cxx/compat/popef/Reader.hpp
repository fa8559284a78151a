// popef::Reader: collects the PopEF files a model is read from. libmrt parses
// them when popef::ModelBuilder::createModel() loads the model, so a bad file
// is reported there (mrt::Error naming the file). Not thread-safe while files
// are being added.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace popef {

class Reader {
 public:
  Reader() = default;
  // Adds a PopEF file to read.
  void parseFile(const std::string &path) { paths_.push_back(path); }
  // libmrt extension: the files added so far, in order.
  const std::vector<std::string> &paths() const { return paths_; }

 private:
  std::vector<std::string> paths_;
};

}  // namespace popef
