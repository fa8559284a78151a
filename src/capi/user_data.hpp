// UserData: the (user_data, user_data_free) half of a C callback triple,
// owned so that user_data_free runs exactly once, when the last holder lets
// go - including when registration fails part way, because the owner is made
// before anything else can throw.
#pragma once

#include <memory>

namespace mrt::capi {

class UserData {
 public:
  using FreeFn = void (*)(void *);

  UserData(void *data, FreeFn free) noexcept : data_(data), free_(free) {}
  ~UserData() {
    if (free_) free_(data_);
  }
  UserData(const UserData &) = delete;
  UserData &operator=(const UserData &) = delete;

  void *get() const noexcept { return data_; }

 private:
  void *data_;
  FreeFn free_;
};

// Shared, because the std::function wrappers that carry callbacks into the
// internals must be copyable.
inline std::shared_ptr<UserData> ownUserData(void *data, UserData::FreeFn free) {
  try {
    return std::make_shared<UserData>(data, free);
  } catch (...) {
    if (free) free(data);  // the promise holds even when we cannot allocate
    throw;
  }
}

}  // namespace mrt::capi
