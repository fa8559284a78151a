// The rules that tie a model's metadata to its executable. A PopEF file
// whose blobs all pass their checksums can still describe an anchor the
// executable does not have, or has with another shape: the runtime sizes
// its buffers from the metadata and the device moves what the executable
// says, so any disagreement is an out-of-bounds access waiting to happen.
// These checks run before anything is allocated or run from the model
// (mrt_model_load, Session creation); docs/popef.md "Validation" lists them.
#pragma once

#include <hwsim/executable.hpp>

#include "popef/model.hpp"

namespace mrt::popef {

// The model's Executable blob as an hwsim executable. Throws
// mrt::Error(CorruptModel) naming the blob if hwsim refuses the bytes.
hwsim::Executable readExecutable(const Model &model);

// Throws mrt::Error(CorruptModel) naming the anchor or program, the value the
// metadata gives and the one the executable has, and the blobs they are in:
//  - replication factor, IPU count and IPU version equal the executable's;
//  - every program index of the flow and the programs map is a program of
//    the executable;
//  - every anchor names a data stream of its direction (INPUT: host to
//    device, OUTPUT: device to host) or, with remote-buffer info, a remote
//    buffer, with the same element type and element count (so byte size);
//  - every program an anchor lists moves its stream (or remote buffer), and
//    every stream a Load/Main/Save program moves has an anchor listing it.
void checkAgainstExecutable(const Model &model, const hwsim::Executable &executable);
// The same, reading the executable first (readExecutable).
void checkAgainstExecutable(const Model &model);

}  // namespace mrt::popef
