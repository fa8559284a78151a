// The process's one T (kept arenas and executables, the watchdog, the
// thread cache, the description of the simulated system): made at first
// use and never destroyed, since it may be used while static objects are
// destroyed (a runner held by one).
//
// Its lock, T::mutex(), is held across a fork, so a child never starts
// with it locked by a thread the child does not have. In the child it is
// unlocked, or, with InChild::Reset, T::resetInChild() runs instead: for
// state the child must not inherit (threads it does not have), and it
// must unlock the mutex.
#pragma once

#include <pthread.h>

namespace support {

enum class InChild { Unlock, Reset };

template <class T, InChild inChild = InChild::Unlock> T &processSingleton() {
  static T *const made = [] {
    auto *object = new T;
    ::pthread_atfork([] { processSingleton<T, inChild>().mutex().lock(); },
                     [] { processSingleton<T, inChild>().mutex().unlock(); },
                     [] {
                       T &kept = processSingleton<T, inChild>();
                       if constexpr (inChild == InChild::Reset) {
                         kept.resetInChild();
                       } else {
                         kept.mutex().unlock();
                       }
                     });
    return object;
  }();
  return *made;
}

}  // namespace support
