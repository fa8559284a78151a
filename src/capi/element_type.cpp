#include "capi/element_type.hpp"

#include "common/error.hpp"
#include "mrt_c.h"

namespace mrt::capi {

hwsim::Type hwsimTypeOf(std::int32_t dataType, const char *argument) {
  switch (dataType) {
    case MRT_BOOL: return hwsim::Type::BOOL;
    case MRT_U8: return hwsim::Type::U8;
    case MRT_S8: return hwsim::Type::S8;
    case MRT_U16: return hwsim::Type::U16;
    case MRT_S16: return hwsim::Type::S16;
    case MRT_S32: return hwsim::Type::S32;
    case MRT_U32: return hwsim::Type::U32;
    case MRT_F16: return hwsim::Type::F16;
    case MRT_F32: return hwsim::Type::F32;
    case MRT_S64:
    case MRT_U64:
    case MRT_F64:
      throw Error(ErrorCode::InvalidArgument,
                  "{} {} is a 64-bit type; the simulated IPU has BOOL, U8, S8, U16, S16, S32, U32, "
                  "F16 and F32 tensors",
                  argument, dataType);
    default:
      throw Error(ErrorCode::InvalidArgument, "{} {} is not an mrt_data_type", argument, dataType);
  }
}

std::int32_t dataTypeOf(hwsim::Type type) noexcept {
  switch (type) {
    case hwsim::Type::BOOL: return MRT_BOOL;
    case hwsim::Type::U8: return MRT_U8;
    case hwsim::Type::S8: return MRT_S8;
    case hwsim::Type::U16: return MRT_U16;
    case hwsim::Type::S16: return MRT_S16;
    case hwsim::Type::S32: return MRT_S32;
    case hwsim::Type::U32: return MRT_U32;
    case hwsim::Type::F16: return MRT_F16;
    case hwsim::Type::F32: return MRT_F32;
  }
  return MRT_F32;  // unreachable: every hwsim type is listed
}

}  // namespace mrt::capi
