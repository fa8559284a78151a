#include "popef/graph_model_builder.hpp"

#include <algorithm>

#include <hwsim/compiler.hpp>
#include <hwsim/error.hpp>
#include <hwsim/executable.hpp>

#include "common/error.hpp"
#include "popef/package_hash.hpp"

namespace mrt::popef {

const std::string &runtimePackageHash() {
  // Bump with the hwsim executable format (hwsim/src/serialize.cpp).
  static const std::string hash = "libmrt-hwsim-exe1";
  return hash;
}

DataType toDataType(hwsim::Type type) {
  switch (type) {
    case hwsim::Type::BOOL: return DataType::BOOL;
    case hwsim::Type::U8: return DataType::U8;
    case hwsim::Type::S8: return DataType::S8;
    case hwsim::Type::U16: return DataType::U16;
    case hwsim::Type::S16: return DataType::S16;
    case hwsim::Type::S32: return DataType::S32;
    case hwsim::Type::U32: return DataType::U32;
    case hwsim::Type::F16: return DataType::F16;
    case hwsim::Type::F32: return DataType::F32;
  }
  throw Error(ErrorCode::Internal, "hwsim type {} has no PopEF data type",
              static_cast<unsigned>(type));
}

hwsim::Executable compileModelGraph(const hwsim::Graph &graph,
                                    const GraphModelDescription &description) {
  try {
    return hwsim::compileGraph(graph, description.programs, description.engineOptions);
  } catch (const hwsim::Error &error) {
    throw Error(ErrorCode::InvalidArgument, "model '{}': the graph does not compile ({}): {}",
                description.name, hwsim::toString(error.kind()), error.what());
  }
}

Anchor makeAnchor(const GraphAnchor &spec, const hwsim::Executable &exe, const std::string &model) {
  TensorType type = TensorType::UNKNOWN;
  hwsim::Type elementType = hwsim::Type::F32;
  std::uint64_t elements = 0;
  std::optional<RemoteBufferInfo> remote;
  const auto &streams = exe.streams();
  const auto &buffers = exe.remoteBuffers();
  const auto stream = std::find_if(streams.begin(), streams.end(),
                                   [&](const hwsim::StreamInfo &s) { return s.handle == spec.handle; });
  const auto buffer = std::find_if(buffers.begin(), buffers.end(),
                                   [&](const hwsim::RemoteBufferInfo &b) { return b.handle == spec.handle; });
  if (stream != streams.end()) {
    type = stream->direction == hwsim::StreamDirection::HostToDevice ? TensorType::INPUT
                                                                      : TensorType::OUTPUT;
    elementType = stream->type;
    elements = stream->numElements;
  } else if (buffer != buffers.end()) {
    // The host fills a remote buffer before the programs run: an input.
    type = TensorType::INPUT;
    elementType = buffer->type;
    elements = buffer->numElements * buffer->repeats;
    remote = RemoteBufferInfo{buffer->handle, static_cast<std::int64_t>(buffer->repeats)};
  } else {
    throw Error(ErrorCode::InvalidArgument,
                "model '{}': anchor '{}' names '{}', which is neither a data stream nor a remote "
                "buffer of the graph",
                model, spec.name, spec.handle);
  }
  const TensorInfo info(toDataType(elementType), spec.shape);
  if (static_cast<std::uint64_t>(info.numElements()) != elements) {
    throw Error(ErrorCode::InvalidArgument,
                "model '{}': anchor '{}' is {} ({} elements) but '{}' moves {} elements", model,
                spec.name, info.toString(), info.numElements(), spec.handle, elements);
  }
  return Anchor(spec.name, spec.handle, info, spec.programs, type, spec.isPerReplica,
                spec.dataSource, std::move(remote));
}

std::shared_ptr<Model> buildModel(const hwsim::Graph &graph, GraphModelDescription description) {
  if (description.programNames.size() != description.programs.size()) {
    throw Error(ErrorCode::InvalidArgument, "model '{}': {} programs but {} program names",
                description.name, description.programs.size(), description.programNames.size());
  }
  const hwsim::Executable exe = compileModelGraph(graph, description);
  return buildModel(exe, SharedBytes::fromVector(exe.serialize()), std::move(description));
}

std::shared_ptr<Model> buildModel(const hwsim::Executable &exe, SharedBytes serialized,
                                  GraphModelDescription description) {
  if (description.programNames.size() != exe.numPrograms()) {
    throw Error(ErrorCode::InvalidArgument, "model '{}': the executable has {} programs but {} are named",
                description.name, exe.numPrograms(), description.programNames.size());
  }
  ModelParts parts;
  Metadata &metadata = parts.metadata;
  metadata.setExecutable(description.name);
  metadata.setReplicationFactor(exe.replicationFactor());
  metadata.setNumIpus(exe.numIpus());
  metadata.setIpuVersion(static_cast<std::uint32_t>(exe.target().ipuVersion));
  metadata.setIsInference(description.isInference);
  metadata.setEngineOptions(std::move(description.engineOptions));
  metadata.setDeviceOptions(std::move(description.deviceOptions));
  metadata.setSeedHandle(std::move(description.seedHandle));
  metadata.setBatchingDim(description.batchingDim);
  metadata.setPackageHash(runtimePackageHash());
  std::map<ProgramFlow::ProgramIndexType, std::string> names;
  for (std::size_t i = 0; i < description.programNames.size(); ++i) {
    names.emplace(i, description.programNames[i]);
  }
  metadata.setProgramFlow(ProgramFlow(std::move(description.load), std::move(description.main),
                                      std::move(description.save), std::move(names)));
  for (const GraphAnchor &spec : description.anchors) {
    metadata.addAnchor(makeAnchor(spec, exe, description.name));
  }
  parts.executable = ExecutableBlob(description.name, std::move(serialized));
  parts.tensorData = std::move(description.tensorData);
  parts.feedData = std::move(description.feedData);
  parts.opaqueBlobs = std::move(description.opaqueBlobs);
  return std::make_shared<Model>(std::move(parts));
}

}  // namespace mrt::popef
