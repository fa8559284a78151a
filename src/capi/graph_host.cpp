// Host FIFOs, host read/write handles, remote buffers and functions
// (include/mrt_c.h, "Host communication, remote buffers, functions").
#include <fmt/format.h>

#include "capi/element_type.hpp"
#include "capi/graph.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

namespace {

// A handle names an anchor in a model: it must be a real, non-empty string.
std::string handleOf(const char *handle) {
  requireNotNull(handle, "handle");
  if (*handle == '\0') throw Error(ErrorCode::InvalidArgument, "handle must not be empty");
  return handle;
}

std::uint64_t addStream(mrt_graph &g, const char *handle, int32_t data_type, uint64_t num_elements,
                        bool hostToDevice) {
  const std::string h = handleOf(handle);
  const hwsim::Type type = hwsimTypeOf(data_type, "data_type");
  if (num_elements == 0) {
    throw Error(ErrorCode::InvalidArgument, "stream '{}': num_elements is 0; it must be at least 1", h);
  }
  const std::uint64_t id = makeId(g, IdKind::Stream, g.streams.size());
  hwsim::DataStream s = hostToDevice ? g.graph.addHostToDeviceFIFO(h, type, num_elements)
                                     : g.graph.addDeviceToHostFIFO(h, type, num_elements);
  g.streams.push_back({s, h, hostToDevice, type, num_elements});
  return id;
}

}  // namespace

MRT_API mrt_status mrt_graph_add_host_to_device_fifo(mrt_graph *graph, const char *handle, int32_t data_type,
                                                     uint64_t num_elements, mrt_stream *out) noexcept {
  return changeGraph("mrt_graph_add_host_to_device_fifo", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    *out = addStream(g, handle, data_type, num_elements, true);
  });
}

MRT_API mrt_status mrt_graph_add_device_to_host_fifo(mrt_graph *graph, const char *handle, int32_t data_type,
                                                     uint64_t num_elements, mrt_stream *out) noexcept {
  return changeGraph("mrt_graph_add_device_to_host_fifo", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    *out = addStream(g, handle, data_type, num_elements, false);
  });
}

MRT_API mrt_status mrt_graph_create_host_write(mrt_graph *graph, const char *handle, mrt_tensor tensor) noexcept {
  return changeGraph("mrt_graph_create_host_write", graph, [&](mrt_graph &g) {
    const std::string h = handleOf(handle);
    const TensorEntry &t = tensorOf(g, tensor, "tensor");
    const std::string what = fmt::format("host write '{}' of", h);
    refuseConstantDestination(g, tensor, what.c_str());
    g.graph.createHostWrite(h, t.tensor);
  });
}

MRT_API mrt_status mrt_graph_create_host_read(mrt_graph *graph, const char *handle, mrt_tensor tensor) noexcept {
  return changeGraph("mrt_graph_create_host_read", graph, [&](mrt_graph &g) {
    const std::string h = handleOf(handle);
    g.graph.createHostRead(h, tensorOf(g, tensor, "tensor").tensor);
  });
}

MRT_API mrt_status mrt_graph_add_remote_buffer(mrt_graph *graph, const char *handle, int32_t data_type,
                                               uint64_t num_elements, uint64_t repeats,
                                               mrt_remote_buffer *out) noexcept {
  return changeGraph("mrt_graph_add_remote_buffer", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const std::string h = handleOf(handle);
    const hwsim::Type type = hwsimTypeOf(data_type, "data_type");
    if (num_elements == 0 || repeats == 0) {
      throw Error(ErrorCode::InvalidArgument,
                  "remote buffer '{}': num_elements is {} and repeats {}; both must be at least 1", h, num_elements,
                  repeats);
    }
    const std::uint64_t id = makeId(g, IdKind::RemoteBuffer, g.remoteBuffers.size());
    g.remoteBuffers.push_back({g.graph.addRemoteBuffer(h, type, num_elements, repeats), h, type, num_elements, repeats});
    *out = id;
  });
}

MRT_API mrt_status mrt_graph_add_function(mrt_graph *graph, mrt_program body, mrt_function *out) noexcept {
  return changeGraph("mrt_graph_add_function", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const std::size_t b = indexOf(g, body, IdKind::Program, "body");
    const std::uint64_t id = makeId(g, IdKind::Function, g.functions.size());
    g.functions.push_back({g.graph.addFunction(g.programs[b].program), b});
    *out = id;
  });
}
