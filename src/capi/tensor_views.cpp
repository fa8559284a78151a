#include "capi/tensor_views.hpp"

#include <string>

#include "capi/guard.hpp"
#include "common/error.hpp"

namespace mrt::capi {
namespace {

// Fills the empty map `result` with views, and byPosition (if not null)
// with the entry each view filled.
template <typename Map>
void addViews(Map &result, const mrt_tensor_view *views, std::size_t count, const char *what,
              std::vector<typename Map::value_type *> *byPosition = nullptr) {
  if (count > 0) requireNotNull(views, what);
  result.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (views[i].name == nullptr) throw Error(ErrorCode::InvalidArgument, "{}[{}].name must not be NULL", what, i);
    auto [entry, added] = result.try_emplace(views[i].name, views[i].data, views[i].size_bytes);
    if (!added) throw Error(ErrorCode::InvalidArgument, "{}: '{}' is given twice", what, views[i].name);
    // Entries are nodes: their addresses survive later insertions' rehashes.
    if (byPosition != nullptr) byPosition->push_back(&*entry);
  }
}

}  // namespace

template <typename Map>
void ReusedViewMap<Map>::rebuild(const mrt_tensor_view *views, std::size_t count, const char *what) {
  // A failed rebuild must leave no stale views behind, nor positions
  // pointing at entries of the old map.
  map_.clear();
  byPosition_.clear();
  try {
    addViews(map_, views, count, what, &byPosition_);
  } catch (...) {
    map_.clear();
    byPosition_.clear();
    throw;
  }
}

template class ReusedViewMap<InputMemoryView>;
template class ReusedViewMap<OutputMemoryView>;

InputMemoryView inputsOf(const mrt_tensor_view *views, std::size_t count, const char *what) {
  InputMemoryView result;
  addViews(result, views, count, what);
  return result;
}

OutputMemoryView outputsOf(const mrt_tensor_view *views, std::size_t count, const char *what) {
  OutputMemoryView result;
  addViews(result, views, count, what);
  return result;
}

namespace {

// The thread's maps, when it has leased some: a plain pointer needs no
// initialization guard, so the usual lease costs one TLS look-up (a
// __tls_get_addr call in a shared library) instead of two.
thread_local RequestViewMaps::Maps *t_maps = nullptr;
// Set once the thread's maps are destroyed (the thread is exiting): a lease
// after that, from another thread_local's destructor, gets maps of its own.
thread_local bool t_mapsGone = false;

struct ThreadMaps {
  RequestViewMaps::Maps maps;
  ~ThreadMaps() {
    t_maps = nullptr;
    t_mapsGone = true;
  }
};

// The first lease of a thread, a re-entrant one, or one after the thread's
// maps are gone: out of line, so that the usual lease stays a few
// instructions.
[[gnu::noinline]] RequestViewMaps::Maps &leaseSlowly(std::optional<RequestViewMaps::Maps> &own) {
  if (t_maps == nullptr && !t_mapsGone) {
    thread_local ThreadMaps owner;
    t_maps = &owner.maps;
  }
  if (t_maps == nullptr || t_maps->leased) return own.emplace();
  return *t_maps;
}

}  // namespace

RequestViewMaps::Maps &RequestViewMaps::lease(std::optional<Maps> &own) {
  Maps *thread = t_maps;
  if (thread != nullptr && !thread->leased) [[likely]]
    return *thread;
  return leaseSlowly(own);
}

}  // namespace mrt::capi
