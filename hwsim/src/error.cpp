#include "hwsim/error.hpp"

namespace hwsim {

const char *toString(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "invalid argument";
    case ErrorKind::InvalidOption: return "invalid option";
    case ErrorKind::GraphError: return "graph error";
    case ErrorKind::LinkError: return "link error";
    case ErrorKind::NotFound: return "not found";
    case ErrorKind::FailedPrecondition: return "failed precondition";
    case ErrorKind::CorruptExecutable: return "corrupt executable";
    case ErrorKind::DeviceError: return "device error";
    case ErrorKind::Unavailable: return "unavailable";
    case ErrorKind::ProfilingDisabled: return "profiling disabled";
  }
  return "unknown";
}

}  // namespace hwsim
