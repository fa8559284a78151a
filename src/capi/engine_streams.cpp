// Moving data between the host and an engine: stream connections (callbacks
// and circular buffers), host reads and writes of tensors by handle, and
// remote buffer slots.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "capi/engine.hpp"
#include "capi/guard.hpp"
#include "capi/user_data.hpp"
#include "device/hwsim_error.hpp"

namespace mrt::capi {
namespace {

// The entry of `list` whose handle is `handle`, or NotFound naming it and
// listing the ones there are.
template <typename Info>
const Info &byHandle(const std::vector<Info> &list, std::string_view handle, const char *what) {
  for (const Info &info : list) {
    if (info.handle == handle) return info;
  }
  std::string known;
  for (const Info &info : list) known += fmt::format("{}'{}'", known.empty() ? "" : ", ", info.handle);
  throw Error(ErrorCode::NotFound, "no {} '{}': the executable has {}", what, handle,
              known.empty() ? std::string("none") : known);
}

// Every replica `replica` stands for (MRT_ALL_REPLICAS: all of them).
template <typename Fn>
void forReplicas(const EngineCall &call, std::uint32_t replica, Fn &&fn) {
  call.checkReplica(replica, true);
  if (replica != MRT_ALL_REPLICAS) return fn(replica);
  const unsigned replicas = call.hw().getExecutable().replicationFactor();
  for (unsigned r = 0; r < replicas; ++r) fn(r);
}

void requireSize(std::uint64_t size, std::uint64_t expected, const char *what, std::string_view handle) {
  if (size != expected) {
    throw Error(ErrorCode::InvalidArgument, "{} '{}': size is {} bytes, expected {}", what, handle, size, expected);
  }
}

// Checks a remote buffer slot transfer (hwsim checks the slot index).
void checkRemoteCopy(const EngineCall &call, const char *handle, std::uint64_t size, std::uint32_t replica) {
  requireNotNull(handle, "handle");
  const auto &buffer = byHandle(call.hw().getExecutable().remoteBuffers(), handle, "remote buffer");
  requireSize(size, buffer.slotBytes(), "remote buffer", handle);
  call.checkReplica(replica, false);
  call.requireLoaded();
}

}  // namespace
}  // namespace mrt::capi

using namespace mrt::capi;
using mrt::Error;
using mrt::ErrorCode;
using mrt::callHwsim;

extern "C" {

MRT_API mrt_status mrt_engine_connect_stream(mrt_engine *engine, const char *handle, uint32_t replica,
                                             mrt_stream_fn fn, void *user_data,
                                             void (*user_data_free)(void *user_data)) MRT_NOEXCEPT {
  return guard("mrt_engine_connect_stream", [&] {
    // First, so user_data_free runs exactly once whatever fails below: the
    // callbacks share it, and the last one replaced or destroyed frees it.
    const auto owned = ownUserData(user_data, user_data_free);
    EngineCall call(engine, "mrt_engine_connect_stream");
    requireNotNull(handle, "handle");
    if (fn == nullptr) throwNull("fn");
    const auto &stream = byHandle(call.hw().getExecutable().streams(), handle, "stream");
    const std::uint64_t size = stream.numBytes();
    forReplicas(call, replica, [&](unsigned r) {
      callHwsim([&] {
        call.hw().connectStreamToCallback(handle, r, [fn, owned, size, r](void *p) { fn(p, size, r, owned->get()); });
      });
    });
  });
}

MRT_API mrt_status mrt_engine_connect_stream_to_buffer(mrt_engine *engine, const char *handle, uint32_t replica,
                                                       void *buffer, uint64_t size) MRT_NOEXCEPT {
  return guard("mrt_engine_connect_stream_to_buffer", [&] {
    EngineCall call(engine, "mrt_engine_connect_stream_to_buffer");
    requireNotNull(handle, "handle");
    requireNotNull(buffer, "buffer");
    const auto &stream = byHandle(call.hw().getExecutable().streams(), handle, "stream");
    const std::uint64_t transfer = stream.numBytes();
    if (size == 0 || (transfer != 0 && size % transfer != 0)) {
      throw Error(ErrorCode::InvalidArgument, "stream '{}': a buffer of {} bytes is not a whole number of {}-byte transfers",
                  handle, size, transfer);
    }
    call.checkReplica(replica, true);
    auto *begin = static_cast<std::uint8_t *>(buffer);
    callHwsim([&] { call.hw().connectStream(handle, begin, begin + size, replica); });
  });
}

MRT_API mrt_status mrt_engine_write_tensor(mrt_engine *engine, const char *handle, const void *data, uint64_t size,
                                           uint32_t replica) MRT_NOEXCEPT {
  return guard("mrt_engine_write_tensor", [&] {
    EngineCall call(engine, "mrt_engine_write_tensor");
    requireNotNull(handle, "handle");
    requireNotNull(data, "data");
    const auto &tensor = byHandle(call.hw().getExecutable().hostWrites(), handle, "host write handle");
    requireSize(size, tensor.numBytes, "host write handle", handle);
    call.checkReplica(replica, true);
    call.requireLoaded();
    const auto *begin = static_cast<const std::uint8_t *>(data);
    callHwsim([&] { call.hw().writeTensor(handle, begin, begin + size, replica); });
  });
}

MRT_API mrt_status mrt_engine_read_tensor(mrt_engine *engine, const char *handle, void *data, uint64_t size,
                                          uint32_t replica) MRT_NOEXCEPT {
  return guard("mrt_engine_read_tensor", [&] {
    EngineCall call(engine, "mrt_engine_read_tensor");
    requireNotNull(handle, "handle");
    requireNotNull(data, "data");
    const auto &tensor = byHandle(call.hw().getExecutable().hostReads(), handle, "host read handle");
    requireSize(size, tensor.numBytes, "host read handle", handle);
    call.checkReplica(replica, false);
    call.requireLoaded();
    auto *begin = static_cast<std::uint8_t *>(data);
    callHwsim([&] { call.hw().readTensor(handle, begin, begin + size, replica); });
  });
}

MRT_API mrt_status mrt_engine_copy_to_remote_buffer(mrt_engine *engine, const char *handle, const void *data,
                                                    uint64_t size, uint64_t slot, uint32_t replica) MRT_NOEXCEPT {
  return guard("mrt_engine_copy_to_remote_buffer", [&] {
    EngineCall call(engine, "mrt_engine_copy_to_remote_buffer");
    requireNotNull(data, "data");
    checkRemoteCopy(call, handle, size, replica);
    callHwsim([&] { call.hw().copyToRemoteBuffer(data, handle, slot, replica); });
  });
}

MRT_API mrt_status mrt_engine_copy_from_remote_buffer(mrt_engine *engine, const char *handle, void *data,
                                                      uint64_t size, uint64_t slot, uint32_t replica) MRT_NOEXCEPT {
  return guard("mrt_engine_copy_from_remote_buffer", [&] {
    EngineCall call(engine, "mrt_engine_copy_from_remote_buffer");
    requireNotNull(data, "data");
    checkRemoteCopy(call, handle, size, replica);
    callHwsim([&] { call.hw().copyFromRemoteBuffer(handle, data, slot, replica); });
  });
}

}  // extern "C"
