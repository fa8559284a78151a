#include "capi/tensor_views.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

#include "capi/guard.hpp"
#include "common/error.hpp"

namespace mrt::capi {
namespace {

template <typename View>
std::unordered_map<std::string, View> viewsOf(const mrt_tensor_view *views, std::size_t count, const char *what) {
  if (count > 0) requireNotNull(views, what);
  std::unordered_map<std::string, View> result;
  result.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (views[i].name == nullptr) throw Error(ErrorCode::InvalidArgument, "{}[{}].name must not be NULL", what, i);
    if (!result.try_emplace(views[i].name, views[i].data, views[i].size_bytes).second)
      throw Error(ErrorCode::InvalidArgument, "{}: '{}' is given twice", what, views[i].name);
  }
  return result;
}

// Rewrites map in place when views name exactly its keys, once each; false
// (map possibly half rewritten, to be rebuilt) otherwise, including every
// case that is an error: viewsOf then reports it.
template <typename View>
bool refill(std::unordered_map<std::string, View> &map, const mrt_tensor_view *views, std::size_t count) {
  if (map.empty() || map.size() != count || views == nullptr) return false;
  for (std::size_t i = 0; i < count; ++i) {
    if (views[i].name == nullptr) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (std::strcmp(views[i].name, views[j].name) == 0) return false;
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto it = map.find(views[i].name);
    if (it == map.end()) return false;
    it->second = View(views[i].data, views[i].size_bytes);
  }
  return true;
}

template <typename View>
const std::unordered_map<std::string, View> &reuse(std::unordered_map<std::string, View> &map,
                                                  const mrt_tensor_view *views, std::size_t count, const char *what) {
  if (!refill(map, views, count)) {
    map.clear();  // a failed rebuild must not leave stale views behind
    map = viewsOf<View>(views, count, what);
  }
  return map;
}

RequestViewMaps::Maps &threadMaps() {
  thread_local RequestViewMaps::Maps maps;
  return maps;
}

}  // namespace

InputMemoryView inputsOf(const mrt_tensor_view *views, std::size_t count, const char *what) {
  return viewsOf<ConstTensorMemoryView>(views, count, what);
}

OutputMemoryView outputsOf(const mrt_tensor_view *views, std::size_t count, const char *what) {
  return viewsOf<TensorMemoryView>(views, count, what);
}

RequestViewMaps::RequestViewMaps() : maps_(threadMaps().leased ? own_ : threadMaps()) { maps_.leased = true; }

RequestViewMaps::~RequestViewMaps() { maps_.leased = false; }

const InputMemoryView &RequestViewMaps::inputs(const mrt_tensor_view *views, std::size_t count) {
  return reuse(maps_.inputs, views, count, "inputs");
}

const OutputMemoryView &RequestViewMaps::outputs(const mrt_tensor_view *views, std::size_t count) {
  return reuse(maps_.outputs, views, count, "outputs");
}

}  // namespace mrt::capi
