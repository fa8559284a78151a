#include "io_slots.hpp"

#include <cstring>

#include <fmt/format.h>

namespace mrt::benchtool {

namespace {

// Seeded values every example model accepts: floats in [0, 1) for F32 (the
// example models' type), and bytes of 0 or 1 for any other type, which are
// valid booleans and small integers.
std::vector<std::byte> randomTensor(const AnchorInfo &anchor, std::mt19937 &rng) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(anchor.size_in_bytes));
  if (anchor.data_type == DataType::F32) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (std::size_t at = 0; at + sizeof(float) <= bytes.size(); at += sizeof(float)) {
      const float value = unit(rng);
      std::memcpy(bytes.data() + at, &value, sizeof value);
    }
  } else {
    for (auto &b : bytes) b = static_cast<std::byte>(rng() & 1u);
  }
  return bytes;
}

}  // namespace

IoSlots::IoSlots(const std::vector<AnchorInfo> &inputs, const std::vector<AnchorInfo> &outputs, std::size_t slots,
                 bool real_data, bool compare_outputs, std::uint32_t seed)
    : real_data_(real_data), compare_outputs_(real_data && compare_outputs), slots_(slots) {
  for (const AnchorInfo &anchor : inputs) {
    input_sizes_.push_back(static_cast<std::size_t>(anchor.size_in_bytes));
    bytes_in_ += input_sizes_.back();
  }
  for (const AnchorInfo &anchor : outputs) {
    output_sizes_.push_back(static_cast<std::size_t>(anchor.size_in_bytes));
    output_names_.push_back(anchor.name);
    bytes_out_ += output_sizes_.back();
  }
  for (Slot &slot : slots_) {
    for (std::size_t size : input_sizes_) slot.inputs.emplace_back(size);
    for (std::size_t size : output_sizes_) slot.outputs.emplace_back(size);
  }
  if (!real_data_) return;
  std::mt19937 rng(seed);
  input_sets_.resize(kInputSets);
  expected_sets_.resize(kInputSets);
  for (auto &set : input_sets_) {
    for (const AnchorInfo &anchor : inputs) set.push_back(randomTensor(anchor, rng));
  }
}

void IoSlots::prepareInputs(std::size_t slot, std::uint64_t run) {
  if (!real_data_) return;
  const auto &set = input_sets_[run % kInputSets];
  for (std::size_t i = 0; i < set.size(); ++i) std::memcpy(slots_[slot].inputs[i].data(), set[i].data(), set[i].size());
}

void IoSlots::checkOutputs(std::size_t slot, std::uint64_t run) {
  if (!compare_outputs_) return;
  auto &expected = expected_sets_[run % kInputSets];
  const auto &outputs = slots_[slot].outputs;
  if (expected.empty()) {
    expected = outputs;  // the first run of this set is the reference
    return;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    ++checked_;
    if (std::memcmp(outputs[i].data(), expected[i].data(), outputs[i].size()) == 0) continue;
    if (mismatches_++ == 0)
      first_mismatch_ = fmt::format("run {}: output '{}' differs from the first run of input set {}", run,
                                    output_names_[i], run % kInputSets);
  }
}

}  // namespace mrt::benchtool
