// poplar::OptionFlags: string options, here only the device options the
// Model Runtime API's DeviceManager passes on (e.g. "ipuLinkDomainSize").
// libmrt has no Poplar; this is the minimal part of the type that
// application code builds and passes. Not thread-safe while being modified.
#pragma once

#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace poplar {

class OptionFlags {
 public:
  using initializer_list_t = std::initializer_list<std::pair<const std::string, std::string>>;
  using const_iterator = std::map<std::string, std::string>::const_iterator;

  OptionFlags() = default;
  OptionFlags(initializer_list_t options) : options_(options) {}

  void set(const std::string &option, const std::string &value) { options_[option] = value; }
  void set(initializer_list_t options) {
    for (const auto &kv : options) set(kv.first, kv.second);
  }
  // Throws std::out_of_range naming the option if it is not set.
  const std::string &at(const std::string &option) const {
    auto it = options_.find(option);
    if (it == options_.end()) throw std::out_of_range("poplar::OptionFlags: option '" + option + "' is not set");
    return it->second;
  }
  void clear() { options_.clear(); }
  const_iterator begin() const { return options_.begin(); }
  const_iterator end() const { return options_.end(); }

 private:
  std::map<std::string, std::string> options_;
};

}  // namespace poplar
