// Model fusion (Model Runtime User Guide 2.10, PopRT's model fusion): several
// executables linked into one that places each on its own tiles of one IPU,
// so that their programs can run side by side on one device.
#pragma once

#include <string>
#include <vector>

#include "hwsim/executable.hpp"

namespace hwsim {

// One executable to fuse and the name its handles are kept under.
struct FusionInput {
  std::string name;  // not empty, unique among the inputs, no '/'
  Executable executable;
};

// Where one input ended up in the fused executable.
struct FusedPart {
  std::string name;
  // Its programs are firstProgram .. firstProgram + numPrograms - 1, in
  // their original order.
  unsigned firstProgram = 0;
  unsigned numPrograms = 0;
  // Its tiles are firstTile .. firstTile + numTiles - 1: the range from its
  // lowest to its highest used tile, moved there whole.
  unsigned firstTile = 0;
  unsigned numTiles = 0;
  // Its streams, host read/write handles and remote buffers are renamed
  // "<name>/<handle>" (fusedHandle()).
};

struct Fusion {
  Executable executable;
  std::vector<FusedPart> parts;  // in input order
};

// The handle a part's stream, host copy or remote buffer has once fused.
std::string fusedHandle(const std::string &part, const std::string &handle);

// Fuses `inputs` (>= 1) into one executable. Each input must run on one IPU
// with replication factor 1, and all on the same target; their compile
// options must not disagree. Throws InvalidArgument naming the input and
// the value for any of these, and LinkError when the inputs together need
// more tiles than the IPU has (naming each input's tiles and the total).
Fusion fuseExecutables(const std::vector<FusionInput> &inputs);

}  // namespace hwsim
