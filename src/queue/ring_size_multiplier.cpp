#include "queue/ring_size_multiplier.hpp"

#include <algorithm>
#include <set>

namespace mrt::ring_size_multiplier_factory {

RingSizeMultiplierProdType constantRingSizeMult(std::int64_t multiplier) {
  return [multiplier](const popef::Anchor &) { return multiplier; };
}

RingSizeMultiplierProdType ringSizeMultForProgs(
    const std::vector<popef::ProgramFlow::ProgramIndexType> &programs,
    std::int64_t selected_ring_size_multiplier, std::int64_t others_ring_size_multiplier) {
  std::set<popef::ProgramFlow::ProgramIndexType> selected(programs.begin(), programs.end());
  return [selected = std::move(selected), selected_ring_size_multiplier,
          others_ring_size_multiplier](const popef::Anchor &anchor) {
    const auto &owners = anchor.programs();
    const bool owned = std::any_of(owners.begin(), owners.end(),
                                   [&](auto program) { return selected.count(program) != 0; });
    return owned ? selected_ring_size_multiplier : others_ring_size_multiplier;
  };
}

RingSizeMultiplierProdType ringSizeMultForMainProgs(const popef::Model &model,
                                                    std::int64_t main_ring_size_multiplier,
                                                    std::int64_t load_save_ring_size_multiplier) {
  return ringSizeMultForProgs(model.metadata.programFlow().main(), main_ring_size_multiplier,
                              load_save_ring_size_multiplier);
}

}  // namespace mrt::ring_size_multiplier_factory
