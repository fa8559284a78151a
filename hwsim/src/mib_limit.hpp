// Limits in MiB set through the environment (MRT_HWSIM_KEPT_ARENAS_MIB,
// MRT_HWSIM_KEPT_EXECUTABLES_MIB): a whole number from 0 to a maximum. A
// bad value is reported, naming the variable, the value and the default
// used instead, the way MRT_HWSIM_ISA is.
#pragma once

#include <cstddef>
#include <string>

namespace hwsim::detail {

// The bytes `request` (the variable's value; null or empty: unset) allows,
// or defaultBytes, setting `warning`, when it is not a whole number of MiB
// up to maxMiB.
std::size_t mibLimitFor(const char *variable, const char *request, std::size_t maxMiB, std::size_t defaultBytes,
                        std::string &warning);

// mibLimitFor of the variable's value in the environment; a warning goes to stderr.
std::size_t mibLimitFromEnvironment(const char *variable, std::size_t maxMiB, std::size_t defaultBytes);

}  // namespace hwsim::detail
