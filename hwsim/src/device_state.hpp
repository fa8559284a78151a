// The shared state behind a Device handle (also held by engines loaded on it).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "hwsim/device.hpp"

namespace hwsim::detail {

struct DeviceState {
  DeviceInfo info;
  bool isModel = false;
  std::string lockDir;
  std::mutex mutex;
  bool attached = false;      // guarded by mutex
  std::vector<int> lockFds;   // guarded by mutex: one locked fd per IPU while attached
  std::atomic<std::uint8_t> pendingRecovery{0};  // a RecoveryAction

  ~DeviceState();
};

}  // namespace hwsim::detail
