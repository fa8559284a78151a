// C arrays of named tensor views (mrt_tensor_view) as the C++ API's
// name -> view maps (InputMemoryView / OutputMemoryView).
#pragma once

#include <cstddef>

#include "mrt_c.h"
#include "runner/model_runner_config.hpp"

namespace mrt::capi {

// Fresh maps; names must be present and unique. `what` names the array in
// error messages ("inputs", "config->frozen_inputs", ...).
InputMemoryView inputsOf(const mrt_tensor_view *views, std::size_t count, const char *what = "inputs");
OutputMemoryView outputsOf(const mrt_tensor_view *views, std::size_t count, const char *what = "outputs");

// The maps of one request. Building a map costs an allocation per tensor, a
// large share of a small synchronous request; a serving loop names the same
// tensors every time, so each thread keeps its previous maps and, when the
// names match, only rewrites their data pointers and sizes. A lease made
// while the thread's maps are already leased (a callback re-entering the C
// API from inside a request) gets maps of its own.
class RequestViewMaps {
 public:
  RequestViewMaps();
  ~RequestViewMaps();
  RequestViewMaps(const RequestViewMaps &) = delete;
  RequestViewMaps &operator=(const RequestViewMaps &) = delete;

  // Valid until the next call of the same kind on this lease.
  const InputMemoryView &inputs(const mrt_tensor_view *views, std::size_t count);
  const OutputMemoryView &outputs(const mrt_tensor_view *views, std::size_t count);

  struct Maps {
    InputMemoryView inputs;
    OutputMemoryView outputs;
    bool leased = false;
  };

 private:
  Maps own_;
  Maps &maps_;
};

}  // namespace mrt::capi
