// Element types across the C API: mrt_data_type values (PopEF's numbering)
// and the simulated IPU's hwsim::Type, which has no 64-bit types.
#pragma once

#include <cstdint>

#include <hwsim/types.hpp>

namespace mrt::capi {

// The hwsim type of a C data_type argument; throws InvalidArgument naming
// `argument` and the value for an unknown type or one the simulated IPU
// lacks (S64, U64, F64).
hwsim::Type hwsimTypeOf(std::int32_t dataType, const char *argument);

// The mrt_data_type of an hwsim type.
std::int32_t dataTypeOf(hwsim::Type type) noexcept;

}  // namespace mrt::capi
