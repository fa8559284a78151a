#include "onnx/compile.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <hwsim/compiler.hpp>
#include <hwsim/error.hpp>

#include "common/error.hpp"
#include "onnx/batching_dim.hpp"
#include "onnx/context.hpp"
#include "onnx/fold.hpp"
#include "onnx/layer_split.hpp"
#include "onnx/half_precision.hpp"
#include "onnx/frontend.hpp"
#include "onnx/reader.hpp"
#include "onnx/registry.hpp"
#include "onnx/shapes.hpp"
#include "popef/graph_model_builder.hpp"

namespace mrt::onnx {
namespace {

std::int64_t defaultOpset(const ::onnx::ModelProto &model) {
  for (const auto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 1;
}

struct Unsupported {
  std::string node, opType, why;
};

[[noreturn]] void throwUnsupported(const std::vector<Unsupported> &list) {
  std::string message = fmt::format("{} unsupported node{}:", list.size(), list.size() == 1 ? "" : "s");
  for (const auto &u : list) message += fmt::format(" '{}' ({}): {};", u.node, u.opType, u.why);
  message.pop_back();
  throw Error(ErrorCode::Unimplemented, "{}", message);
}

hwsim::Executable compileGraph(const hwsim::Graph &graph, const popef::GraphModelDescription &d,
                               const OnnxOptions &options) {
  try {
    return hwsim::compileGraph(graph, d.programs, d.engineOptions);
  } catch (const hwsim::Error &e) {
    // A graph error is a node the lowering accepted but a device op's
    // codelet refuses (e.g. a Conv of an empty input with pads): unsupported,
    // as when a device op refuses a node while it is lowered.
    const ErrorCode code = e.kind() == hwsim::ErrorKind::LinkError    ? ErrorCode::ResourceExhausted
                           : e.kind() == hwsim::ErrorKind::GraphError ? ErrorCode::Unimplemented
                                                                      : ErrorCode::Internal;
    throw Error(code, "model '{}' does not compile for {}: {}", d.name, hwsim::describe(options.target), e.what());
  }
}

}  // namespace

std::shared_ptr<popef::Model> compileOnnx(::onnx::ModelProto model, const OnnxOptions &options) {
  if (options.batchSize <= 0) throw Error(ErrorCode::InvalidArgument, "batch_size is {}; it must be at least 1", options.batchSize);
  if (options.numIOTiles >= options.target.tilesPerIpu) {
    throw Error(ErrorCode::InvalidArgument, "num_io_tiles is {}; it must leave compute tiles: the IPUs of {} have {} tiles",
                options.numIOTiles, options.target.name, options.target.tilesPerIpu);
  }
  if (options.halfPrecision) convertToHalfPrecision(model);
  const std::string target = hwsim::describe(options.target);
  resolveShapes(model, options.batchSize, options.inputShapes, options.target.totalMemoryBytes(), target);
  const ::onnx::GraphProto &g = model.graph();
  checkTensorSizes(g, options.target.totalMemoryBytes(), target);
  hwsim::Graph graph(options.target, options.replicationFactor);
  LoweringContext ctx(graph, defaultOpset(model));
  // With several IPUs per replica, layers go to one IPU after another
  // (layer_split.hpp); the inputs arrive on the first.
  // The operators use the compute tiles of an IPU: all but its IO tiles.
  const unsigned tilesPerIpu = options.target.tilesPerIpu;
  const unsigned computeTiles = tilesPerIpu - options.numIOTiles;
  const std::vector<unsigned> nodeIpus =
      options.target.numIpus > 1 ? layerIpus(g, options.target.numIpus) : std::vector<unsigned>{};
  unsigned ipu = 0;
  if (!nodeIpus.empty() || options.numIOTiles > 0) graph.setDefaultTiles(0, computeTiles);

  for (const auto *infos : {&g.value_info(), &g.output()}) {
    for (const auto &info : *infos) {
      if (auto dims = knownDims(info)) ctx.declareDims(info.name(), std::move(*dims));
    }
  }
  std::set<std::string> initializerNames;
  for (const auto &init : g.initializer()) {
    ctx.setHost(init.name(), fromProto(init));
    ctx.markInitializer(init.name());
    initializerNames.insert(init.name());
  }
  for (const auto &input : g.input()) {
    // Before IR 4 initializers were listed as inputs too; they stay constants.
    if (initializerNames.count(input.name())) continue;
    ctx.addInput(input.name(), input.type().tensor_type().elem_type(), staticDims(input));
  }

  const OpRegistry &registry = opRegistry();
  std::vector<Unsupported> unsupported;
  // Op types nothing here knows are reported up front, all of them, even
  // those behind another unsupported node.
  for (const auto &node : g.node()) {
    const bool known = (node.domain().empty() || node.domain() == "ai.onnx") &&
                       (registry.find(node.op_type()) || isFoldable(node.op_type()));
    if (!known) {
      unsupported.push_back({nodeLabel(node), node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type(),
                             "no such operator in this frontend (docs/onnx.md lists them)"});
    }
  }
  std::set<std::string> poisoned;  // outputs of nodes that could not be lowered
  const int total = g.node_size();
  for (int i = 0; i < total; ++i) {
    const auto &node = g.node(i);
    if (options.progress) options.progress(i, total + 1);
    if (!nodeIpus.empty() && nodeIpus[i] != ipu) {
      ipu = nodeIpus[i];
      ctx.moveToTiles(ipu * tilesPerIpu, computeTiles, usedFrom(g, i));
    }
    bool skip = false;
    for (const auto &in : node.input()) skip = skip || poisoned.count(in) != 0;
    if (!skip) {
      try {
        if (!tryFold(ctx, node)) {
          const LowerFn *lower = registry.find(node.op_type());
          if (!lower) throw UnsupportedNode("no device lowering (folded only when its inputs are constants)");
          (*lower)(ctx, node);
        }
        for (const auto &out : node.output()) {
          if (!out.empty() && !ctx.has(out)) throw UnsupportedNode("output '" + out + "' is not produced");
        }
        continue;
      } catch (const UnsupportedNode &e) {
        const bool listed = std::any_of(unsupported.begin(), unsupported.end(),
                                        [&](const Unsupported &u) { return u.node == nodeLabel(node); });
        if (!listed) unsupported.push_back({nodeLabel(node), node.op_type(), e.what()});
      } catch (const hwsim::Error &e) {
        unsupported.push_back({nodeLabel(node), node.op_type(), std::string("the device ops refuse it: ") + e.what()});
      } catch (const Error &e) {
        throw Error(e.code(), "node '{}' ({}): {}", nodeLabel(node), node.op_type(), e.what());
      } catch (const std::out_of_range &) {
        // values.at() of a constant operand with fewer values than the operator reads.
        throw Error(ErrorCode::CorruptModel, "node '{}' ({}): an input has fewer values than the operator reads",
                    nodeLabel(node), node.op_type());
      }
    }
    // A node after an unsupported one is still reported if it could not be
    // lowered either: ops only folded on the host have no device lowering.
    if (skip && !registry.find(node.op_type()) && isFoldable(node.op_type())) {
      unsupported.push_back({nodeLabel(node), node.op_type(),
                             "no device lowering (folded only when its inputs are constants)"});
    }
    for (const auto &out : node.output()) poisoned.insert(out);
  }
  if (!unsupported.empty()) throwUnsupported(unsupported);
  for (const auto &output : g.output()) {
    try {
      ctx.addOutput(output.name());
    } catch (const UnsupportedNode &e) {
      unsupported.push_back({output.name(), "output", e.what()});
    } catch (const hwsim::Error &e) {
      // e.g. an output that is also an input or a streamed initializer: one
      // name cannot be two anchors.
      unsupported.push_back({output.name(), "output", std::string("the device ops refuse it: ") + e.what()});
    }
  }
  if (!unsupported.empty()) throwUnsupported(unsupported);

  popef::GraphModelDescription d;
  d.name = !options.modelName.empty() ? options.modelName : !g.name().empty() ? g.name() : "onnx_model";
  d.programs = {ctx.load(), ctx.main()};
  d.programNames = {"load", "main"};
  d.load = {0};
  d.main = {1};
  d.anchors = std::move(ctx.anchors());
  d.batchingDim = options.batchingDim;
  if (d.batchingDim) checkBatchingDim(d.anchors, *d.batchingDim);
  d.tensorData = std::move(ctx.tensorData());
  if (options.numIOTiles > 0) d.engineOptions["exchange.numIOTiles"] = std::to_string(options.numIOTiles);
  const hwsim::Executable exe = compileGraph(graph, d, options);
  if (options.progress) options.progress(total + 1, total + 1);
  return popef::buildModel(exe, popef::SharedBytes::fromVector(exe.serialize()), std::move(d));
}

}  // namespace mrt::onnx

namespace mrt::onnx {

std::shared_ptr<popef::Model> compileOnnxFile(const std::filesystem::path &path, const OnnxOptions &options) {
  return compileOnnx(readModelFile(path), options);
}

std::shared_ptr<popef::Model> compileOnnxMemory(const void *data, std::size_t size, const OnnxOptions &options) {
  return compileOnnx(readModelMemory(data, size), options);
}

}  // namespace mrt::onnx
