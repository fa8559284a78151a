// The executable part of the C API (include/mrt_c.h, "Compiling:
// executables"): handles over an immutable hwsim::Executable. Everything the
// accessors lend out (bytes, step kinds and names, program names) is cached
// in the handle when it is made, so borrowed pointers live as long as it.
#include "capi/executable.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <utility>

#include <hwsim/error.hpp>
#include <hwsim/pipeline.hpp>

#include "capi/element_type.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/sized_struct.hpp"
#include "capi/target.hpp"
#include "device/hwsim_error.hpp"
#include "popef/executable_check.hpp"

namespace mrt::capi {

std::unique_ptr<mrt_executable> makeExecutable(hwsim::Executable exe, std::vector<std::uint8_t> serialized) {
  if (!exe.valid()) throw Error(ErrorCode::Internal, "makeExecutable: empty executable");
  auto handle = std::make_unique<mrt_executable>();
  handle->serialized = serialized.empty() ? exe.serialize() : std::move(serialized);
  handle->steps = exe.programSteps();
  handle->stepCycles.reserve(handle->steps.size());
  for (const auto &step : handle->steps) handle->stepCycles.push_back(step.cycles);
  handle->programNames.reserve(exe.numPrograms());
  for (unsigned p = 0; p < exe.numPrograms(); ++p) handle->programNames.push_back(exe.programName(p));
  handle->executable = std::move(exe);
  return handle;
}

const hwsim::Executable &executableOf(const mrt_executable *handle, const char *argument) {
  requireNotNull(handle, argument);
  return handle->executable;
}

namespace {

// The first published sizes of the out structs (they end at these fields).

mrt_executable_info executableInfo(const mrt_executable &handle) {
  const hwsim::Executable &exe = handle.executable;
  const auto &memory = exe.memoryPerTile();
  mrt_executable_info out{};
  out.struct_size = sizeof(mrt_executable_info);
  out.hash = exe.hash();
  out.replication_factor = exe.replicationFactor();
  out.num_ipus = exe.numIpus();
  out.num_programs = exe.numPrograms();
  out.num_tiles = exe.target().numTiles();
  out.num_streams = exe.streams().size();
  out.num_remote_buffers = exe.remoteBuffers().size();
  out.num_host_reads = exe.hostReads().size();
  out.num_host_writes = exe.hostWrites().size();
  out.num_steps = handle.steps.size();
  out.total_memory_bytes = std::accumulate(memory.begin(), memory.end(), std::uint64_t{0});
  if (!memory.empty()) {
    const auto fullest = std::max_element(memory.begin(), memory.end());
    out.max_tile_memory_bytes = *fullest;
    out.max_memory_tile = static_cast<std::uint32_t>(fullest - memory.begin());
  }
  out.bytes_per_tile = exe.target().bytesPerTile;
  return out;
}

// Entry `index` of a list of `what`, or InvalidArgument naming both.
template <typename T>
const T &entryOf(const std::vector<T> &list, std::size_t index, const char *what) {
  if (index >= list.size()) {
    throw Error(ErrorCode::InvalidArgument, "{} index {} out of range: the executable has {}", what, index,
                list.size());
  }
  return list[index];
}

mrt_handle_info hostCopyHandle(const hwsim::HostCopyInfo &h, int32_t kind) {
  const std::uint64_t elements = h.numBytes / hwsim::sizeOf(h.type);
  return {sizeof(mrt_handle_info), h.handle.c_str(), kind, dataTypeOf(h.type), elements, 1};
}

// Handle `index` of `kind`. Streams are counted together (num_streams), so
// either stream kind indexes all of them and the result's kind tells the
// direction: a caller enumerates them without knowing the split.
mrt_handle_info handleInfo(const hwsim::Executable &exe, int32_t kind, std::size_t index) {
  switch (kind) {
    case MRT_HANDLE_HOST_TO_DEVICE:
    case MRT_HANDLE_DEVICE_TO_HOST: {
      const auto &s = entryOf(exe.streams(), index, "stream");
      const int32_t direction = s.direction == hwsim::StreamDirection::HostToDevice ? MRT_HANDLE_HOST_TO_DEVICE
                                                                                    : MRT_HANDLE_DEVICE_TO_HOST;
      return {sizeof(mrt_handle_info), s.handle.c_str(), direction, dataTypeOf(s.type), s.numElements, 1};
    }
    case MRT_HANDLE_REMOTE_BUFFER: {
      const auto &b = entryOf(exe.remoteBuffers(), index, "remote buffer");
      return {sizeof(mrt_handle_info), b.handle.c_str(), kind, dataTypeOf(b.type), b.numElements, b.repeats};
    }
    case MRT_HANDLE_HOST_WRITE: return hostCopyHandle(entryOf(exe.hostWrites(), index, "host write"), kind);
    case MRT_HANDLE_HOST_READ: return hostCopyHandle(entryOf(exe.hostReads(), index, "host read"), kind);
    default:
      throw Error(ErrorCode::InvalidArgument, "kind {} is not an mrt_handle_kind (0 to 4)", kind);
  }
}

std::unique_ptr<mrt_executable> deserialized(const void *data, std::uint64_t size) {
  if (size == 0) throw Error(ErrorCode::CorruptModel, "serialized executable: size is 0");
  const auto *bytes = static_cast<const std::uint8_t *>(data);
  std::vector<std::uint8_t> copy(bytes, bytes + size);
  hwsim::Executable exe = callHwsim([&] { return hwsim::Executable::deserialize(copy); });
  return makeExecutable(std::move(exe), std::move(copy));
}

}  // namespace
}  // namespace mrt::capi

using namespace mrt::capi;
using mrt::Error;
using mrt::ErrorCode;
using mrt::callHwsim;

extern "C" {

MRT_API void mrt_executable_destroy(mrt_executable *executable) MRT_NOEXCEPT { delete executable; }

MRT_API mrt_status mrt_executable_serialize(const mrt_executable *executable, const void **out_data,
                                            uint64_t *out_size) MRT_NOEXCEPT {
  return guard("mrt_executable_serialize", [&] {
    requireNotNull(executable, "executable");
    requireNotNull(out_data, "out_data");
    requireNotNull(out_size, "out_size");
    *out_data = executable->serialized.data();
    *out_size = executable->serialized.size();
  });
}

MRT_API mrt_status mrt_executable_deserialize(const void *data, uint64_t size,
                                              mrt_executable **out) MRT_NOEXCEPT {
  return guard("mrt_executable_deserialize", [&] {
    requireNotNull(data, "data");
    requireNotNull(out, "out");
    *out = deserialized(data, size).release();
  });
}

MRT_API mrt_status mrt_model_get_executable(const mrt_model *model, mrt_executable **out) MRT_NOEXCEPT {
  return guard("mrt_model_get_executable", [&] {
    const auto &m = modelOf(model, "model");
    requireNotNull(out, "out");
    // readExecutable names the model and blob in a CorruptModel error.
    hwsim::Executable exe = mrt::popef::readExecutable(*m);
    const auto bytes = m->executable().bytes();
    const auto *begin = reinterpret_cast<const std::uint8_t *>(bytes.data());
    *out = makeExecutable(std::move(exe), std::vector<std::uint8_t>(begin, begin + bytes.size())).release();
  });
}

MRT_API mrt_status mrt_executable_get_info(const mrt_executable *executable,
                                           mrt_executable_info *out_info) MRT_NOEXCEPT {
  return guard("mrt_executable_get_info", [&] {
    requireNotNull(executable, "executable");
    fillSized(out_info, executableInfo(*executable), MRT_EXECUTABLE_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_executable_get_target(const mrt_executable *executable,
                                             mrt_target *out_target) MRT_NOEXCEPT {
  return guard("mrt_executable_get_target", [&] {
    // The name is borrowed from the executable's own target: it lives as long as the handle.
    fillTarget(executableOf(executable, "executable").target(), out_target, "out_target");
  });
}

MRT_API mrt_status mrt_executable_memory_per_tile(const mrt_executable *executable,
                                                  const uint64_t **out_bytes,
                                                  size_t *out_count) MRT_NOEXCEPT {
  return guard("mrt_executable_memory_per_tile", [&] {
    const hwsim::Executable &exe = executableOf(executable, "executable");
    requireNotNull(out_bytes, "out_bytes");
    requireNotNull(out_count, "out_count");
    *out_bytes = exe.memoryPerTile().data();
    *out_count = exe.memoryPerTile().size();
  });
}

MRT_API mrt_status mrt_executable_step(const mrt_executable *executable, size_t index,
                                       mrt_step_info *out_info) MRT_NOEXCEPT {
  return guard("mrt_executable_step", [&] {
    requireNotNull(executable, "executable");
    const auto &step = entryOf(executable->steps, index, "step");
    const mrt_step_info info{sizeof(mrt_step_info), step.kind.c_str(), step.name.c_str(),
                             executable->stepCycles[index]};
    fillSized(out_info, info, MRT_STEP_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_executable_program_name(const mrt_executable *executable, uint32_t program,
                                               const char **out_name) MRT_NOEXCEPT {
  return guard("mrt_executable_program_name", [&] {
    requireNotNull(executable, "executable");
    requireNotNull(out_name, "out_name");
    *out_name = entryOf(executable->programNames, program, "program").c_str();
  });
}

MRT_API mrt_status mrt_executable_pipeline(const mrt_executable *executable, uint32_t program,
                                           mrt_pipeline_info *out_info) MRT_NOEXCEPT {
  return guard("mrt_executable_pipeline", [&] {
    requireNotNull(executable, "executable");
    entryOf(executable->programNames, program, "program");
    const hwsim::PipelinePlan plan = hwsim::pipelinePlan(executable->executable, program);
    const mrt_pipeline_info info{sizeof(mrt_pipeline_info), static_cast<std::uint32_t>(plan.stages.size()),
                                 plan.latencyCycles(), plan.intervalCycles()};
    fillSized(out_info, info, MRT_PIPELINE_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_executable_handle(const mrt_executable *executable, int32_t kind, size_t index,
                                         mrt_handle_info *out_info) MRT_NOEXCEPT {
  return guard("mrt_executable_handle", [&] {
    const hwsim::Executable &exe = executableOf(executable, "executable");
    fillSized(out_info, handleInfo(exe, kind, index), MRT_HANDLE_INFO_V1_SIZE, "out_info");
  });
}

}  // extern "C"
