// C arrays of named tensor views (mrt_tensor_view) as the C++ API's
// name -> view maps (InputMemoryView / OutputMemoryView).
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mrt_c.h"
#include "runner/model_runner_config.hpp"

namespace mrt::capi {

// Fresh maps; names must be present and unique. `what` names the array in
// error messages ("inputs", "config->frozen_inputs", ...).
InputMemoryView inputsOf(const mrt_tensor_view *views, std::size_t count, const char *what = "inputs");
OutputMemoryView outputsOf(const mrt_tensor_view *views, std::size_t count, const char *what = "outputs");

// name == key. Short names, the usual ones, are compared inline: calling
// strcmp costs more than the comparison itself.
inline bool sameName(const char *name, const std::string &key) noexcept {
  const char *k = key.c_str();
  if (key.size() > 16) return std::strcmp(name, k) == 0;
  for (;; ++name, ++k) {
    if (*name != *k) return false;
    if (*k == '\0') return true;
  }
}

// One name -> view map kept across requests. A serving loop names the same
// tensors in the same order every time, so the map remembers which of its
// entries each array position filled: when every name still equals that
// entry's key (one strcmp per tensor, no hashing, no allocation), only the
// data pointers and sizes are rewritten. Any other array rebuilds the map,
// with the checks of inputsOf / outputsOf. The fast path is inline: it is
// most of what the C API adds to a small synchronous request.
template <typename Map>
class ReusedViewMap {
 public:
  // Valid until the next call.
  const Map &fill(const mrt_tensor_view *views, std::size_t count, const char *what) {
    if (!refill(views, count)) rebuild(views, count, what);
    return map_;
  }

 private:
  // Names equal, position by position, to the last call's (which were the
  // map's keys, once each) are again the map's keys once each: no duplicate
  // check is needed. Comparing contents, not pointers, also catches a name
  // rewritten in the same buffer. A mismatch may leave the map half
  // rewritten; rebuild() starts from scratch.
  bool refill(const mrt_tensor_view *views, std::size_t count) {
    if (count != byPosition_.size() || (count > 0 && views == nullptr)) return false;
    for (std::size_t i = 0; i < count; ++i) {
      auto &entry = *byPosition_[i];
      if (views[i].name == nullptr || !sameName(views[i].name, entry.first)) return false;
      entry.second = typename Map::mapped_type(views[i].data, views[i].size_bytes);
    }
    return true;
  }
  void rebuild(const mrt_tensor_view *views, std::size_t count, const char *what);

  Map map_;
  std::vector<typename Map::value_type *> byPosition_;  // map_'s entry of views[i] in the last call
};

extern template class ReusedViewMap<InputMemoryView>;
extern template class ReusedViewMap<OutputMemoryView>;

// A thread's (or a re-entrant lease's own) maps. At namespace scope, not
// nested in RequestViewMaps: clang 14 does not see a nested class's default
// member initializers until the enclosing class is complete, so
// std::optional<Maps> there would not be default-constructible.
struct RequestMaps {
  ReusedViewMap<InputMemoryView> inputs;
  ReusedViewMap<OutputMemoryView> outputs;
  bool leased = false;
};

// The maps of one request, leased from the calling thread (building them
// costs an allocation per tensor, a large share of a small synchronous
// request). A lease made while the thread's maps are already leased (a
// callback re-entering the C API from inside a request) gets maps of its
// own.
class RequestViewMaps {
 public:
  RequestViewMaps() : maps_(lease(own_)) { maps_.leased = true; }
  ~RequestViewMaps() { maps_.leased = false; }
  RequestViewMaps(const RequestViewMaps &) = delete;
  RequestViewMaps &operator=(const RequestViewMaps &) = delete;

  // Valid until the next call of the same kind on this lease.
  const InputMemoryView &inputs(const mrt_tensor_view *views, std::size_t count) {
    return maps_.inputs.fill(views, count, "inputs");
  }
  const OutputMemoryView &outputs(const mrt_tensor_view *views, std::size_t count) {
    return maps_.outputs.fill(views, count, "outputs");
  }

  using Maps = RequestMaps;

 private:
  // The thread's maps, or (if they are leased already) `own` made fresh.
  static Maps &lease(std::optional<Maps> &own);

  std::optional<Maps> own_;  // only for a re-entrant lease
  Maps &maps_;
};

}  // namespace mrt::capi
