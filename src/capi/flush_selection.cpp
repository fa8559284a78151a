// The C API's mrt_flush_selection (include/mrt_c.h, "Model runner").
#include "capi/flush_selection.hpp"

#include <utility>

#include "capi/callback_scope.hpp"
#include "capi/guard.hpp"

// What a flush_select_callback added. The runner reads it right after the
// callback, on the same device thread.
struct mrt_flush_selection {
  mrt::InputMemoryView inputs;
  mrt::OutputMemoryView outputs;
};

namespace mrt::capi {

FlushCallback flushSelectionAdapter(mrt_flush_select_fn select, std::shared_ptr<UserData> userData) {
  return [select, owner = std::move(userData)](const std::string &tensor_id, const InputMemoryView *&inputs,
                                               const OutputMemoryView *&outputs) {
    // Replicas' calls may overlap, each on its own device thread.
    thread_local mrt_flush_selection selection;
    selection.inputs.clear();
    selection.outputs.clear();
    {
      const LibraryCallbackScope scope;
      select(tensor_id.c_str(), &selection, owner->get());
    }
    if (selection.inputs.empty() && selection.outputs.empty()) return;  // every queue
    inputs = &selection.inputs;
    outputs = &selection.outputs;
  };
}

}  // namespace mrt::capi

extern "C" {

MRT_API mrt_status mrt_flush_selection_add(mrt_flush_selection *selection, int32_t direction,
                                           const char *name) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::requireNotNull(selection, "selection");
    mrt::capi::requireNotNull(name, "name");
    if (direction == MRT_TENSOR_INPUT) {
      selection->inputs.emplace(name, mrt::ConstTensorMemoryView{});
    } else if (direction == MRT_TENSOR_OUTPUT) {
      selection->outputs.emplace(name, mrt::TensorMemoryView{});
    } else {
      throw mrt::Error(mrt::ErrorCode::InvalidArgument,
                       "direction {} is neither MRT_TENSOR_INPUT (0) nor MRT_TENSOR_OUTPUT (1)", direction);
    }
  });
}

}  // extern "C"
