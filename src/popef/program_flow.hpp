// popef::ProgramFlow: which programs of the executable run in the Load, Main
// and Save phases, and a name for every program index (the programs map).
// Load runs once after the executable is on the device, Main runs once per
// inference round, Save runs when the model leaves the device.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mrt::popef {

class ProgramFlow {
 public:
  using ProgramIndexType = std::uint64_t;

  ProgramFlow() = default;
  ProgramFlow(std::vector<ProgramIndexType> load, std::vector<ProgramIndexType> main,
              std::vector<ProgramIndexType> save,
              std::map<ProgramIndexType, std::string> programsMap)
      : load_(std::move(load)), main_(std::move(main)), save_(std::move(save)),
        programsMap_(std::move(programsMap)) {}

  const std::vector<ProgramIndexType> &load() const noexcept { return load_; }
  const std::vector<ProgramIndexType> &main() const noexcept { return main_; }
  const std::vector<ProgramIndexType> &save() const noexcept { return save_; }
  // Every program index used by the flow or by an anchor has a name here.
  const std::map<ProgramIndexType, std::string> &programsMap() const noexcept {
    return programsMap_;
  }

  void setLoad(std::vector<ProgramIndexType> programs) { load_ = std::move(programs); }
  void setMain(std::vector<ProgramIndexType> programs) { main_ = std::move(programs); }
  void setSave(std::vector<ProgramIndexType> programs) { save_ = std::move(programs); }
  void setProgramsMap(std::map<ProgramIndexType, std::string> map) { programsMap_ = std::move(map); }

  friend bool operator==(const ProgramFlow &, const ProgramFlow &) = default;

 private:
  std::vector<ProgramIndexType> load_;
  std::vector<ProgramIndexType> main_;
  std::vector<ProgramIndexType> save_;
  std::map<ProgramIndexType, std::string> programsMap_;
};

}  // namespace mrt::popef
