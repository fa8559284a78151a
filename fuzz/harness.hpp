// What the fuzz targets share (docs/fuzzing.md): the process set-up and
// loading a byte buffer as a PopEF file through the public C API. Compiled
// into every target, with libFuzzer (the fuzz preset) or with replay_main.cpp
// (the ctest corpus replay of the ordinary presets).
#pragma once

#include <cstddef>
#include <cstdint>

#include "mrt_c.h"

namespace mrt_fuzz {

// Loads `size` bytes as one PopEF file with mrt_model_load(): the bytes are
// written to a fresh memfd, which the library opens and maps by its
// /proc/self/fd path. nullptr if the library refuses the file.
mrt_model *loadModel(const std::uint8_t *data, std::size_t size);

// Stops the process (a finding) if `status` is MRT_INTERNAL, which the C
// API reserves for bugs in libmrt, or if a failure comes without a message.
// With MRT_FUZZ_VERBOSE set in the environment, prints every status.
void checkStatus(mrt_status status, const char *call);

}  // namespace mrt_fuzz

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);
