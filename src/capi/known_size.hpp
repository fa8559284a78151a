// How much of each struct the library fills (fillSized) this library
// knows: up to the end of its last field, not sizeof, whose tail padding a
// newer header may have given to an appended field. When a field is
// appended to one of these structs in mrt_c.h, name it here.
#pragma once

#include <cstddef>

#include "mrt_c.h"

namespace mrt::capi {

template <typename Struct>
struct KnownSize;  // not defined: a struct the library fills must be listed below

#define MRT_CAPI_KNOWN_SIZE(type, last_field)                                      \
  template <>                                                                      \
  struct KnownSize<type> {                                                         \
    static constexpr std::size_t value = MRT_STRUCT_SIZE(type, last_field);       \
  }

MRT_CAPI_KNOWN_SIZE(mrt_model_info, shared_executable);
MRT_CAPI_KNOWN_SIZE(mrt_anchor_info, replica);
MRT_CAPI_KNOWN_SIZE(mrt_device_info, target_name);
MRT_CAPI_KNOWN_SIZE(mrt_queue_info, connected);
MRT_CAPI_KNOWN_SIZE(mrt_model_runner_config, model_name);
MRT_CAPI_KNOWN_SIZE(mrt_request_times, computation_us);
MRT_CAPI_KNOWN_SIZE(mrt_target, host_sync_cycles);
MRT_CAPI_KNOWN_SIZE(mrt_tensor_info, is_constant);
MRT_CAPI_KNOWN_SIZE(mrt_codelet_info, num_attributes);
MRT_CAPI_KNOWN_SIZE(mrt_executable_info, bytes_per_tile);
MRT_CAPI_KNOWN_SIZE(mrt_step_info, modelled_cycles);
MRT_CAPI_KNOWN_SIZE(mrt_handle_info, repeats);
MRT_CAPI_KNOWN_SIZE(mrt_pipeline_info, interval_cycles);
MRT_CAPI_KNOWN_SIZE(mrt_blob_info, data_size);

#undef MRT_CAPI_KNOWN_SIZE

}  // namespace mrt::capi
