// Ring size multipliers (seed 001, "ring_size_multiplier_factory"): how many
// model transfers' worth of entries a QueueManager ring holds for an anchor.
// A queue's numBuffers() is multiplier x the samples of one transfer along
// the manager's batching dimension (modelBatchSize(tensor) along dimension
// 0), so that with one sample per entry `multiplier` whole transfers can be
// queued ahead.
// Anchors fed once (Load weights, Save state) need only 1.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "popef/anchor.hpp"
#include "popef/model.hpp"
#include "popef/program_flow.hpp"

namespace mrt {

using RingSizeMultiplierProdType = std::function<std::int64_t(const popef::Anchor &)>;

// ModelRunnerConfig::ring_buffer_size_multiplier's default (the seeds'), and
// the internal QueueManager constructors'.
inline constexpr std::int64_t kDefaultRingSizeMultiplier = 2;

// The default of the queue managers a program makes itself (for a session
// or on its own: mrt_queue_manager_config's ring_size_multiplier), which the
// seeds leave open. Deeper than ModelRunner's 2 because when the producer
// and the device thread share a CPU, one context switch (about 2 us on a VM)
// (about 3 us here) carries at most a ring's worth of runs. Pinned to one
// CPU, add_one's 64 B queues ran at 0.03-0.05x its callbacks' speed with
// rings of 2, 0.14-0.19x with 16 and 0.42-0.46x with 64; mlp's at 0.51-0.59x
// with 16 and 0.92x with 64 (docs/performance.md, "Waits between threads").
// The price is ring entries (80 bytes each, multiplier x batch per queue:
// 5 KiB at batch 1), not data.
inline constexpr std::int64_t kDefaultQueueManagerRingSizeMultiplier = 64;

namespace ring_size_multiplier_factory {

// The same multiplier for every anchor.
RingSizeMultiplierProdType constantRingSizeMult(std::int64_t multiplier);

// selected_ring_size_multiplier for anchors transferred by any of
// `programs`, others_ring_size_multiplier for the rest.
RingSizeMultiplierProdType ringSizeMultForProgs(
    const std::vector<popef::ProgramFlow::ProgramIndexType> &programs,
    std::int64_t selected_ring_size_multiplier, std::int64_t others_ring_size_multiplier = 1);

// ringSizeMultForProgs over the model's Main programs.
RingSizeMultiplierProdType ringSizeMultForMainProgs(const popef::Model &model,
                                                    std::int64_t main_ring_size_multiplier,
                                                    std::int64_t load_save_ring_size_multiplier = 1);

}  // namespace ring_size_multiplier_factory
}  // namespace mrt
