// buildModel: turns an hwsim graph, its programs and their Load/Main/Save
// flow into a popef::Model: compiles the graph, serializes the executable,
// and derives each anchor's type, data type and direction from the data
// stream (or remote buffer) it names, so metadata and executable agree.
// The second half works from an executable compiled already (the C API's
// mrt_model_builder): buildModel(executable, bytes, description).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hwsim/executable.hpp>
#include <hwsim/graph.hpp>
#include <hwsim/program.hpp>

#include "popef/model.hpp"

namespace mrt::popef {

// One anchor of the model, named after a data stream or a remote buffer of
// the graph.
struct GraphAnchor {
  std::string name;    // the tensor's name; TensorData/FeedData match it
  std::string handle;  // a data stream handle, or a remote buffer handle
  // The shape the user sees; its element count must be the stream's (for a
  // remote buffer: slot elements x repeats, the buffer's whole content).
  std::vector<TensorInfo::ShapeDimType> shape;
  std::vector<ProgramFlow::ProgramIndexType> programs;  // the programs that move it
  bool isPerReplica = false;
  DataSource dataSource = DataSource::None;
};

struct GraphModelDescription {
  std::string name;  // the executable name
  // programs[i] is program index i; programNames[i] its name in the programs
  // map. Building from a compiled executable needs only the names.
  std::vector<hwsim::program::Program> programs;
  std::vector<std::string> programNames;
  std::vector<ProgramFlow::ProgramIndexType> load;
  std::vector<ProgramFlow::ProgramIndexType> main;
  std::vector<ProgramFlow::ProgramIndexType> save;
  bool isInference = true;
  OptionsMap engineOptions;  // also the options the graph is compiled with
  OptionsMap deviceOptions;
  std::string seedHandle;
  std::optional<std::uint32_t> batchingDim;  // Metadata::batchingDim()
  std::vector<GraphAnchor> anchors;
  std::vector<TensorData> tensorData;
  std::vector<FeedData> feedData;
  std::vector<OpaqueBlob> opaqueBlobs;
};

// Throws mrt::Error: InvalidArgument if the graph does not compile (the
// hwsim message says why) or an anchor does not match its stream,
// CorruptModel if the result is not a valid model (Model's checks).
std::shared_ptr<Model> buildModel(const hwsim::Graph &graph, GraphModelDescription description);

// Compiles description.programs with description.engineOptions. Throws
// mrt::Error(InvalidArgument) naming the model if the graph does not compile.
hwsim::Executable compileModelGraph(const hwsim::Graph &graph,
                                    const GraphModelDescription &description);

// The model of an executable compiled already: `serialized` is its
// serialization (shared, not copied) and description.programs is ignored;
// description.programNames must name each of its programs. Throws as above
// (InvalidArgument for an anchor that does not match its stream,
// CorruptModel for an invalid model).
std::shared_ptr<Model> buildModel(const hwsim::Executable &executable, SharedBytes serialized,
                                  GraphModelDescription description);

// The anchor `spec` describes, its direction, element type and remote buffer
// taken from the stream or remote buffer of `executable` its handle names.
// Throws mrt::Error(InvalidArgument) naming model and anchor for a handle
// that is neither or a shape of another element count.
Anchor makeAnchor(const GraphAnchor &spec, const hwsim::Executable &executable,
                  const std::string &model);

// The popef type of an hwsim element type (every hwsim type has one).
DataType toDataType(hwsim::Type type);

}  // namespace mrt::popef
