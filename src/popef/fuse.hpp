// Model fusion (Model Runtime User Guide 2.10, PopRT's model fusion): several
// models made into one PopEF whose one executable holds them all, each on
// its own tiles of one IPU (hwsim::fuseExecutables), so that one device
// serves them side by side, each by its own Session or ModelRunner.
//
// Each fused model keeps its name (Metadata `executable`, which its data
// blobs carry), its anchor names, program names and data; what moved is
// recorded in its metadata: `shared_executable` names the fused Executable
// blob, anchor handles and remote buffers are "<model>/<handle>", program
// indices are those of the model's programs in the fused executable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "popef/model.hpp"
#include "popef/writer.hpp"

namespace mrt::popef {

// The models fused, in input order, sharing one Executable blob named
// "<name1>+<name2>+...". Throws mrt::Error(InvalidArgument) for no models,
// two models of one name, a model already fused, models that cannot share
// an executable (see hwsim::fuseExecutables) and models that need more
// tiles together than the IPU has (the message names each model's tiles
// and the total); CorruptModel for an executable that cannot be read.
std::vector<std::shared_ptr<const Model>> fuseModels(const std::vector<std::shared_ptr<const Model>> &models);

// Writes fused models (as fuseModels returns them) as one PopEF: every
// Metadata, the shared Executable once, then every model's data blobs.
void writeFusedModels(Writer &writer, const std::vector<std::shared_ptr<const Model>> &fused);

}  // namespace mrt::popef
