// The process's one T (the kept arenas, the kept executables): made at
// first use and never destroyed, since it may be used while static objects
// are destroyed (a runner held by one). Its lock, T::mutex(), is held
// across a fork, so a child never starts with it locked by a thread the
// child does not have.
#pragma once

#include <pthread.h>

namespace hwsim::detail {

template <class T> T &processSingleton() {
  static T *const made = [] {
    auto *object = new T;
    ::pthread_atfork([] { processSingleton<T>().mutex().lock(); }, [] { processSingleton<T>().mutex().unlock(); },
                     [] { processSingleton<T>().mutex().unlock(); });
    return object;
  }();
  return *made;
}

}  // namespace hwsim::detail
