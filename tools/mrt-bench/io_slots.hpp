// IoSlots: the host memory the mrt-bench drivers feed a model from and drain
// it into, and what "--real-data" means for both benchmarks.
//
// A slot holds one buffer per user input anchor and one per output anchor,
// each one model transfer (the anchor's size_in_bytes). The callbacks
// benchmark uses one slot; the queues benchmark several, one per run in
// flight.
//
// Without real data (overhead mode) every buffer is allocated and zeroed
// once and never touched by the host again: inputs are the same zeros on
// every run and outputs are overwritten without being read. What is measured
// is the runtime's own work (callbacks or queues, the device copies, the
// simulated compute).
//
// With real data, a pool of kInputSets input sets of seeded random values is
// made up front. Before each run the host copies the next set into the
// slot's input buffers (fresh bytes, like a producer writing new data), and
// after the run it reads every output byte and compares it with what the same
// set produced the first time (the models are deterministic): a byte lost,
// stale or delivered to the wrong run is counted as a mismatch. A model that
// keeps state across runs gives other outputs for the same inputs: for it
// (compare_outputs false) the inputs are still fresh but nothing is compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mrt.hpp"

namespace mrt::benchtool {

class IoSlots {
 public:
  static constexpr std::size_t kInputSets = 8;

  IoSlots(const std::vector<AnchorInfo> &inputs, const std::vector<AnchorInfo> &outputs, std::size_t slots,
          bool real_data, bool compare_outputs, std::uint32_t seed);

  std::size_t numSlots() const noexcept { return slots_.size(); }
  std::size_t numInputs() const noexcept { return input_sizes_.size(); }
  std::size_t numOutputs() const noexcept { return output_sizes_.size(); }
  std::byte *input(std::size_t slot, std::size_t i) { return slots_[slot].inputs[i].data(); }
  std::byte *output(std::size_t slot, std::size_t i) { return slots_[slot].outputs[i].data(); }
  std::size_t inputSize(std::size_t i) const { return input_sizes_[i]; }
  std::size_t outputSize(std::size_t i) const { return output_sizes_[i]; }
  std::uint64_t bytesInPerRun() const noexcept { return bytes_in_; }
  std::uint64_t bytesOutPerRun() const noexcept { return bytes_out_; }

  // Real data only (no-ops otherwise): before run `run` uses `slot`, copy
  // its input set in; after it completed, check its outputs.
  void prepareInputs(std::size_t slot, std::uint64_t run);
  void checkOutputs(std::size_t slot, std::uint64_t run);

  std::uint64_t outputsChecked() const noexcept { return checked_; }
  std::uint64_t mismatches() const noexcept { return mismatches_; }
  // The first mismatch, naming the run and output; empty if none.
  const std::string &firstMismatch() const noexcept { return first_mismatch_; }

 private:
  using Bytes = std::vector<std::byte>;
  struct Slot {
    std::vector<Bytes> inputs, outputs;
  };

  bool real_data_;
  bool compare_outputs_;
  std::vector<std::size_t> input_sizes_, output_sizes_;
  std::vector<std::string> output_names_;
  std::uint64_t bytes_in_ = 0, bytes_out_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::vector<Bytes>> input_sets_;      // [set][input]
  std::vector<std::vector<Bytes>> expected_sets_;   // [set][output], empty until first seen
  std::uint64_t checked_ = 0, mismatches_ = 0;
  std::string first_mismatch_;
};

}  // namespace mrt::benchtool
