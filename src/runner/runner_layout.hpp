// RunnerLayout: which of a model's anchors a ModelRunner feeds from where,
// decided once when the runner is created and shared by its replicas, and
// the per-request checks of execute's arguments against it.
//
//   execute inputs   INPUT anchors of a Main program without PopEF data
//                    (the Session feeds those) and not frozen: one
//                    InputQueue each
//   execute outputs  OUTPUT anchors of a Main program: one OutputQueue each
//   frozen inputs    config.frozen_inputs, copied here, fed by callbacks
//                    (or, for a remote-buffer anchor, copied into the
//                    buffer at every load instead of its TensorData)
//   other outputs    Save (or Load) outputs: copied to
//                    replica_to_save_programs_outputs, or dropped
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "popef/anchor.hpp"
#include "popef/model.hpp"
#include "runner/data_desc.hpp"
#include "runner/model_runner_config.hpp"
#include "runner/tensor_memory.hpp"

namespace mrt {

struct QueuedTensor {
  const popef::Anchor *anchor;
  std::int64_t transfer_bytes;  // one model batch
  std::int64_t sample_bytes;    // one sample (along the queues' batching dimension)
  std::int64_t batch_size;      // samples in one model batch
};

struct FrozenTensor {
  const popef::Anchor *anchor;
  TensorMemory bytes;  // the runner's copy of the caller's frozen data
};

// One request's arguments in execute-input / execute-output order.
struct RequestViews {
  std::vector<ConstTensorMemoryView> inputs;
  std::vector<TensorMemoryView> outputs;
};

class RunnerLayout {
 public:
  RunnerLayout(std::shared_ptr<const popef::Model> model, const ModelRunnerConfig &config);

  const std::vector<QueuedTensor> &executeInputs() const noexcept { return inputs_; }
  const std::vector<QueuedTensor> &executeOutputs() const noexcept { return outputs_; }
  const std::vector<FrozenTensor> &frozenInputs() const noexcept { return frozen_; }
  // OUTPUT anchors outside the Main programs (Save outputs, ...).
  const std::vector<const popef::Anchor *> &otherOutputs() const noexcept { return other_outputs_; }
  bool isFrozen(const std::string &name) const;
  // The dimension the queues pack and split requests along: batching_dim,
  // or 0 without dynamic batch sizing (requests of whole model batches).
  unsigned queueBatchingDim() const noexcept { return queue_batching_dim_; }

  std::vector<DataDesc> executeInputDescs() const;
  std::vector<DataDesc> executeOutputDescs() const;
  std::vector<DataDesc> modelInputDescs() const;
  std::vector<DataDesc> modelOutputDescs() const;

  // Orders the caller's maps into `views` and (with validate_io_params)
  // checks names, counts, null data and sizes: NotFound for an unknown name,
  // InvalidArgument otherwise. Present inputs are always required.
  // setInputViews replaces what `views` held, reusing its vectors' memory (a
  // caller that keeps one RequestViews across requests allocates nothing).
  void setInputViews(RequestViews &views, const InputMemoryView &inputs) const;
  void addOutputViews(RequestViews &views, const OutputMemoryView &outputs) const;
  // The bytes of output `index` (execute-output order) for a request with
  // these inputs.
  std::int64_t outputBytes(const RequestViews &views, std::size_t index) const;

 private:
  // The request's size in model batches (or samples, with batching) as its
  // first input says; 1 for a model without execute inputs.
  std::int64_t requestUnits(const RequestViews &views) const;
  std::int64_t unitBytes(const QueuedTensor &tensor) const;
  void checkInputs(const InputMemoryView &inputs, const RequestViews &views) const;
  // InvalidArgument unless every execute tensor has the same size in
  // dimension batching_dim.
  void requireOneBatchSize(unsigned batching_dim) const;

  std::shared_ptr<const popef::Model> model_;
  bool validate_;
  bool batching_;
  unsigned queue_batching_dim_;
  std::vector<QueuedTensor> inputs_;
  std::vector<QueuedTensor> outputs_;
  std::vector<FrozenTensor> frozen_;
  std::vector<const popef::Anchor *> other_outputs_;
};

}  // namespace mrt
