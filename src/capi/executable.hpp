// The C handle of a compiled executable (include/mrt_c.h, "Compiling"):
// shared by the compiler glue (graph), the engine glue and the model builder.
// Immutable after creation, so its cached serialization and the strings the
// C accessors lend out live as long as the handle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hwsim/executable.hpp>

#include "mrt_c.h"

struct mrt_executable {
  hwsim::Executable executable;
  std::vector<std::uint8_t> serialized;          // executable.serialize(), made once
  std::vector<hwsim::ProgramStepInfo> steps;     // executable.programSteps()
  std::vector<std::uint64_t> stepCycles;         // modelled cycles of each step
  std::vector<std::string> programNames;         // executable.programName(i)
};

namespace mrt::capi {

// A new handle owning exe, with its caches filled. `serialized` may be given
// when the caller already has the bytes (deserialize, models).
std::unique_ptr<mrt_executable> makeExecutable(hwsim::Executable exe,
                                               std::vector<std::uint8_t> serialized = {});

// The executable behind a handle; throws InvalidArgument naming `argument`
// if NULL.
const hwsim::Executable &executableOf(const mrt_executable *handle, const char *argument);

}  // namespace mrt::capi
