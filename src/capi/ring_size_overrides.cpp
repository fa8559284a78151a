#include "capi/ring_size_overrides.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace mrt::capi {

RingSizeMultiplierProdType withRingSizeOverrides(RingSizeMultiplierProdType groups, const popef::Model &model,
                                                 const mrt_ring_size_override *overrides, std::size_t count) {
  if (count == 0) return groups;
  if (overrides == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "config->ring_size_overrides is NULL with num_ring_size_overrides {}",
                count);
  }
  const auto &anchors = model.metadata.anchors();
  std::map<std::string, std::int64_t, std::less<>> multipliers;
  for (std::size_t i = 0; i < count; ++i) {
    const mrt_ring_size_override &entry = overrides[i];
    if (entry.anchor_name == nullptr) {
      throw Error(ErrorCode::InvalidArgument, "config->ring_size_overrides[{}].anchor_name is NULL", i);
    }
    const std::string name = entry.anchor_name;
    if (entry.multiplier < 1) {
      throw Error(ErrorCode::InvalidArgument,
                  "config->ring_size_overrides[{}] ('{}'): the multiplier must be at least 1, got {}", i, name,
                  entry.multiplier);
    }
    if (std::none_of(anchors.begin(), anchors.end(), [&](const popef::Anchor &a) { return a.name() == name; })) {
      throw Error(ErrorCode::NotFound, "config->ring_size_overrides[{}]: the model has no anchor named '{}'", i,
                  name);
    }
    if (!multipliers.emplace(name, entry.multiplier).second) {
      throw Error(ErrorCode::InvalidArgument, "config->ring_size_overrides[{}]: anchor '{}' is named twice", i,
                  name);
    }
  }
  return [groups = std::move(groups), multipliers = std::move(multipliers)](const popef::Anchor &anchor) {
    const auto found = multipliers.find(anchor.name());
    return found != multipliers.end() ? found->second : groups(anchor);
  };
}

}  // namespace mrt::capi
