// hwsim::Graph: variables, constants, tile mapping, compute sets of vertices,
// data streams (FIFOs), host read/write handles, remote buffers and functions.
// A graph is compiled with compileGraph() (compiler.hpp) into an Executable.
//
// Replication: a Graph built with replicationFactor R describes ONE replica.
// Its Target is the per-replica target (numIpus per replica); the device it is
// loaded on needs target.numIpus * R IPUs, and every replica gets its own copy
// of every variable, stream connection and remote buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsim/target.hpp"
#include "hwsim/tensor.hpp"
#include "hwsim/types.hpp"

namespace hwsim {

namespace detail {
struct GraphData;
}
namespace program {
class Program;
}

// Handles are small values; they are only meaningful with their own graph.
struct ComputeSet {
  std::uint32_t graphId = 0;
  unsigned id = 0;
};
struct VertexRef {
  std::uint32_t graphId = 0;
  unsigned computeSet = 0;
  unsigned index = 0;
};
struct DataStream {
  std::uint32_t graphId = 0;
  unsigned id = 0;
};
struct RemoteBuffer {
  std::uint32_t graphId = 0;
  unsigned id = 0;
};
struct Function {
  std::uint32_t graphId = 0;
  unsigned id = 0;
};

// A vertex field connection: {"in", tensor}.
using Connection = std::pair<std::string, Tensor>;

// A run of flat tensor elements [begin, end) on one tile, as reported by getTileMapping.
struct TileInterval {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  unsigned tile = 0;
  bool operator==(const TileInterval &) const = default;
};

class Graph {
 public:
  explicit Graph(const Target &target, unsigned replicationFactor = 1);
  ~Graph();
  Graph(Graph &&) noexcept;
  Graph &operator=(Graph &&) noexcept;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const Target &getTarget() const;
  unsigned replicationFactor() const;
  // The tiles `ops` functions use when given no TileRange (default: all):
  // a frontend placing consecutive layers on consecutive IPUs sets each
  // IPU's tiles in turn (docs/hwsim.md "Pipelining"). count 0 = all again.
  void setDefaultTiles(unsigned first, unsigned count);
  std::pair<unsigned, unsigned> defaultTiles() const;  // (first, count); count 0 = all
  std::uint32_t id() const;

  // ---- data ----
  // A variable: device memory written by programs; zero after Engine::load.
  Tensor addVariable(Type type, const Shape &shape, std::string_view debugName = {});
  // A constant from raw host bytes in the type's representation
  // (sizeOf(type) * numElements bytes; F16 as IEEE half bits, BOOL as 0/1 bytes).
  Tensor addConstant(Type type, const Shape &shape, const void *data, std::size_t numBytes,
                     std::string_view debugName = {});
  // A constant with every element equal to value (converted to type).
  Tensor addConstant(Type type, const Shape &shape, double value, std::string_view debugName = {});
  // A constant from doubles, converted element by element to type.
  Tensor addConstant(Type type, const Shape &shape, const std::vector<double> &values,
                     std::string_view debugName = {});

  // ---- tile mapping ----
  // Puts every element of t on `tile` (0 <= tile < target.numTiles()).
  void setTileMapping(const Tensor &t, unsigned tile);
  // Runs of t's flat elements and the tile of each; elements never mapped are absent.
  std::vector<TileInterval> getTileMapping(const Tensor &t) const;
  // Poplar-style helper: spreads t over tiles [firstTile, firstTile+numTiles) in
  // contiguous chunks of at least grainSize elements (numTiles 0 = all tiles).
  void mapLinearly(const Tensor &t, std::size_t grainSize = 1, unsigned firstTile = 0,
                   unsigned numTiles = 0);

  // ---- compute ----
  ComputeSet addComputeSet(std::string_view debugName);
  // Adds a vertex of a built-in codelet (see codelets.hpp for names and fields).
  VertexRef addVertex(ComputeSet cs, std::string_view codelet,
                      const std::vector<Connection> &connections = {});
  VertexRef addVertex(ComputeSet cs, std::string_view codelet,
                      const std::vector<Connection> &connections, unsigned tile);
  void connect(VertexRef v, std::string_view field, const Tensor &t);
  void setTileMapping(VertexRef v, unsigned tile);
  // Scalar or list attributes of a vertex ("value" of Fill, "axes" of Reduce...).
  void setInitialValue(VertexRef v, std::string_view field, double value);
  void setInitialValue(VertexRef v, std::string_view field, const std::vector<double> &values);

  // ---- host communication ----
  // A FIFO the host writes (H2D) or reads (D2H); each Copy moves numElements.
  DataStream addHostToDeviceFIFO(std::string_view handle, Type type, std::size_t numElements);
  DataStream addDeviceToHostFIFO(std::string_view handle, Type type, std::size_t numElements);
  // Handles for Engine::writeTensor / Engine::readTensor.
  void createHostWrite(std::string_view handle, const Tensor &t);
  void createHostRead(std::string_view handle, const Tensor &t);
  // Memory outside the IPU (streaming memory) holding `repeats` slots of numElements.
  RemoteBuffer addRemoteBuffer(std::string_view handle, Type type, std::size_t numElements,
                               std::size_t repeats = 1);

  // ---- code reuse ----
  // A program body compiled once and run by program::Call from any number of places.
  Function addFunction(const program::Program &body);

  std::size_t numVariables() const;
  std::size_t numComputeSets() const;

  const detail::GraphData &data() const { return *data_; }

 private:
  std::unique_ptr<detail::GraphData> data_;
};

}  // namespace hwsim
