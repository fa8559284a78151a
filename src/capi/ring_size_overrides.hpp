// mrt_queue_manager_config's ring_size_overrides: single anchors whose ring
// size multiplier is not their group's (the seeds' RingSizeMultiplierProdType
// may give every anchor its own).
#pragma once

#include <cstddef>

#include "mrt_c.h"
#include "popef/model.hpp"
#include "queue/ring_size_multiplier.hpp"

namespace mrt::capi {

// `groups` with the overrides' anchors given their own multipliers; throws
// mrt::Error (naming the entry) for a NULL name, a repeat, a multiplier
// below 1 (MRT_INVALID_ARGUMENT) or a name that is no anchor of `model`
// (MRT_NOT_FOUND). The overrides are copied.
RingSizeMultiplierProdType withRingSizeOverrides(RingSizeMultiplierProdType groups, const popef::Model &model,
                                                 const mrt_ring_size_override *overrides, std::size_t count);

}  // namespace mrt::capi
