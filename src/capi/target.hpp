// mrt_target <-> hwsim::Target, shared by graphs (create, get_target) and
// executables (get_target).
#pragma once

#include <hwsim/target.hpp>

#include "mrt_c.h"

namespace mrt::capi {

// The hwsim target a caller's mrt_target describes. Fields beyond the
// caller's struct_size take the defaults of ipu_version's system. Throws
// InvalidArgument naming `argument` and the field for a malformed target
// (zero tiles, IPUs or rates, an unknown ipu_version).
hwsim::Target targetOf(const mrt_target *target, const char *argument);

// Writes target into *out as far as out->struct_size reaches; out->name is
// borrowed from target.name, so target must outlive the caller's use of it.
void fillTarget(const hwsim::Target &target, mrt_target *out, const char *argument);

}  // namespace mrt::capi
