#include "popef/fuse.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hwsim/error.hpp>
#include <hwsim/fuse.hpp>

#include "common/error.hpp"
#include "popef/executable_check.hpp"

namespace mrt::popef {

namespace {

using ProgramIndex = ProgramFlow::ProgramIndexType;

std::vector<ProgramIndex> moved(const std::vector<ProgramIndex> &programs, ProgramIndex by) {
  std::vector<ProgramIndex> result;
  for (const ProgramIndex index : programs) result.push_back(index + by);
  return result;
}

// `metadata` as it reads once its executable is the fused one.
Metadata fusedMetadata(const Metadata &metadata, const std::string &sharedExecutable, const hwsim::FusedPart &part) {
  Metadata result = metadata;
  result.setSharedExecutable(sharedExecutable);
  const ProgramIndex first = part.firstProgram;
  const ProgramFlow &flow = metadata.programFlow();
  std::map<ProgramIndex, std::string> names;
  for (const auto &[index, name] : flow.programsMap()) names.emplace(index + first, name);
  result.setProgramFlow(ProgramFlow(moved(flow.load(), first), moved(flow.main(), first), moved(flow.save(), first),
                                    std::move(names)));
  std::vector<Anchor> anchors = metadata.anchors();
  for (Anchor &anchor : anchors) {
    anchor.setHandle(hwsim::fusedHandle(part.name, anchor.handle()));
    anchor.setPrograms(moved(anchor.programs(), first));
    if (anchor.remoteBuffer()) {
      anchor.setRemoteBuffer(RemoteBufferInfo{hwsim::fusedHandle(part.name, anchor.remoteBuffer()->name),
                                              anchor.remoteBuffer()->repeats});
    }
  }
  result.setAnchors(std::move(anchors));
  if (!metadata.seedHandle().empty()) result.setSeedHandle(hwsim::fusedHandle(part.name, metadata.seedHandle()));
  return result;
}

}  // namespace

std::vector<std::shared_ptr<const Model>> fuseModels(const std::vector<std::shared_ptr<const Model>> &models) {
  if (models.size() < 2) {
    throw Error(ErrorCode::InvalidArgument, "fusion: {} model(s) given, fusion takes two or more", models.size());
  }
  std::vector<hwsim::FusionInput> inputs;
  std::vector<std::string> names;
  for (const auto &model : models) {
    if (!model) throw Error(ErrorCode::InvalidArgument, "fusion: a model to fuse is null");
    const std::string &name = model->metadata.executable();
    if (!model->metadata.sharedExecutable().empty()) {
      throw Error(ErrorCode::InvalidArgument, "fusion: model '{}' is already fused (executable '{}'); fuse the models "
                  "it was fused from", name, model->metadata.sharedExecutable());
    }
    inputs.push_back({name, readExecutable(*model)});
    names.push_back(name);
  }
  const std::string sharedName = fmt::format("{}", fmt::join(names, "+"));
  if (std::find(names.begin(), names.end(), sharedName) != names.end()) {
    throw Error(ErrorCode::InvalidArgument, "fusion: a model is named '{}', the name of the fused executable",
                sharedName);
  }
  hwsim::Fusion fusion;
  try {
    fusion = hwsim::fuseExecutables(inputs);
  } catch (const hwsim::Error &error) {
    throw Error(ErrorCode::InvalidArgument, "{}", error.what());
  }
  const SharedBytes executable = SharedBytes::fromVector(fusion.executable.serialize());
  std::vector<std::shared_ptr<const Model>> fused;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Model &model = *models[i];
    ModelParts parts{fusedMetadata(model.metadata, sharedName, fusion.parts[i]), std::nullopt,
                     ExecutableBlob(sharedName, executable), model.tensorDataList(), model.feedDataList(),
                     model.opaqueBlobs()};
    auto result = std::make_shared<const Model>(std::move(parts));
    checkAgainstExecutable(*result, fusion.executable);
    fused.push_back(std::move(result));
  }
  return fused;
}

void writeFusedModels(Writer &writer, const std::vector<std::shared_ptr<const Model>> &fused) {
  for (const auto &model : fused) writer.writeMetadata(model->metadata);
  if (!fused.empty()) writer.writeExecutable(fused.front()->executable().name(), fused.front()->executable().bytes());
  for (const auto &model : fused) writer.writeModelData(*model);
}

}  // namespace mrt::popef
