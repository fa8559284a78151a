#include "popef/metadata.hpp"

#include <set>

#include "common/error.hpp"
#include "common/lazy_text.hpp"

namespace mrt::popef {

const Anchor *Metadata::findAnchor(std::string_view name) const noexcept {
  for (const Anchor &anchor : anchors_) {
    if (anchor.name() == name) return &anchor;
  }
  return nullptr;
}

const Anchor *Metadata::findAnchorByHandle(std::string_view handle) const noexcept {
  for (const Anchor &anchor : anchors_) {
    if (anchor.handle() == handle) return &anchor;
  }
  return nullptr;
}

namespace {

void checkProgramsNamed(const BlobWhere &where, LazyText user,
                        const std::vector<ProgramFlow::ProgramIndexType> &programs,
                        const ProgramFlow &flow) {
  for (const auto index : programs) {
    if (!flow.programsMap().contains(index)) {
      throw Error(ErrorCode::CorruptModel, "{}: {} uses program {}, which the programs map does not name",
                  where, user(), index);
    }
  }
}

}  // namespace

void Metadata::validate(const BlobWhere &where) const {
  if (executable_.empty()) {
    throw Error(ErrorCode::CorruptModel, "{}: metadata names no executable", where);
  }
  if (replicationFactor_ < 1) {
    throw Error(ErrorCode::CorruptModel, "{}: replicationFactor must be at least 1, got 0", where);
  }
  if (numIpus_ < 1) {
    throw Error(ErrorCode::CorruptModel, "{}: numIpus must be at least 1, got 0", where);
  }
  if (ipuVersion_ != kIpu2 && ipuVersion_ != kIpu21) {
    throw Error(ErrorCode::CorruptModel, "{}: unknown ipuVersion {} (expected {} or {})", where,
                ipuVersion_, kIpu2, kIpu21);
  }
  checkProgramsNamed(where, "the load flow", programFlow_.load(), programFlow_);
  checkProgramsNamed(where, "the main flow", programFlow_.main(), programFlow_);
  checkProgramsNamed(where, "the save flow", programFlow_.save(), programFlow_);

  std::set<std::string_view> names;
  std::set<std::string_view> handles;
  for (const Anchor &anchor : anchors_) {
    if (anchor.name().empty() || anchor.handle().empty()) {
      throw Error(ErrorCode::CorruptModel, "{}: an anchor has an empty name or handle ('{}', '{}')",
                  where, anchor.name(), anchor.handle());
    }
    if (!names.insert(anchor.name()).second) {
      throw Error(ErrorCode::CorruptModel, "{}: two anchors are named '{}'", where, anchor.name());
    }
    if (!handles.insert(anchor.handle()).second) {
      throw Error(ErrorCode::CorruptModel, "{}: two anchors have the handle '{}'", where,
                  anchor.handle());
    }
    checkProgramsNamed(where, [&] { return "anchor '" + anchor.name() + "'"; }, anchor.programs(), programFlow_);
    if (anchor.dataSource() != DataSource::None && anchor.type() != TensorType::INPUT) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: anchor '{}' is {} but takes its data from {}; only inputs have a data source",
                  where, anchor.name(), toString(anchor.type()), toString(anchor.dataSource()));
    }
    if (anchor.remoteBuffer() &&
        (anchor.remoteBuffer()->name.empty() || anchor.remoteBuffer()->repeats < 1)) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: anchor '{}' has remote buffer '{}' with {} repeats (needs a name and >= 1)",
                  where, anchor.name(), anchor.remoteBuffer()->name, anchor.remoteBuffer()->repeats);
    }
  }
  if (!seedHandle_.empty() && !handles.contains(seedHandle_)) {
    throw Error(ErrorCode::CorruptModel, "{}: seed handle '{}' is not the handle of any anchor",
                where, seedHandle_);
  }
}

}  // namespace mrt::popef
