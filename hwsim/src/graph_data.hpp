// The state behind hwsim::Graph, read by the compiler.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hwsim/executable.hpp"
#include "hwsim/graph.hpp"
#include "hwsim/program.hpp"
#include "tile_map.hpp"

namespace hwsim::detail {

inline constexpr unsigned kUnmappedTile = ~0u;

struct VariableDef {
  std::string name;
  Type type = Type::F32;
  Shape shape;
  std::uint64_t numElements = 0;
  bool isConstant = false;
  std::vector<std::uint8_t> constantData;  // host representation, numElements * sizeOf(type)
  TileMap mapping;
};

struct VertexDef {
  std::string codelet;
  unsigned tile = kUnmappedTile;
  std::vector<Connection> fields;
  std::vector<std::pair<std::string, std::vector<double>>> attrs;
};

struct ComputeSetDef {
  std::string name;
  std::vector<VertexDef> vertices;
};

struct StreamDef {
  std::string handle;
  StreamDirection direction = StreamDirection::HostToDevice;
  Type type = Type::F32;
  std::uint64_t numElements = 0;
};

struct HostCopyDef {
  std::string handle;
  Tensor tensor;
  bool isRead = false;
};

struct RemoteBufferDef {
  std::string handle;
  Type type = Type::F32;
  std::uint64_t numElements = 0;
  std::uint64_t repeats = 1;
};

struct GraphData {
  std::uint32_t id = 0;
  Target target;
  unsigned replicationFactor = 1;
  unsigned defaultFirstTile = 0, defaultTileCount = 0;  // Graph::setDefaultTiles
  std::vector<VariableDef> variables;
  std::vector<ComputeSetDef> computeSets;
  std::vector<StreamDef> streams;
  std::vector<HostCopyDef> hostCopies;
  std::vector<RemoteBufferDef> remoteBuffers;
  std::vector<program::Program> functions;
};

}  // namespace hwsim::detail
