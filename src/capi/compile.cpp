// mrt_graph_compile (include/mrt_c.h, "Compiling: executables"): the graph's
// programs through hwsim::compileGraph into an executable handle. A graph
// compiles once and is frozen afterwards, so ids handed out stay meaningful
// for queries while nothing can change what was compiled.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <hwsim/compiler.hpp>

#include "capi/executable.hpp"
#include "capi/graph.hpp"
#include "capi/option_pairs.hpp"
#include "capi/user_data.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

namespace {

// Clears mrt_graph::compilingThread however compilation ends.
class CompilingScope {
 public:
  explicit CompilingScope(mrt_graph &g) : g_(g) { g_.compilingThread.store(std::this_thread::get_id()); }
  ~CompilingScope() { g_.compilingThread.store(std::thread::id()); }
  CompilingScope(const CompilingScope &) = delete;
  CompilingScope &operator=(const CompilingScope &) = delete;

 private:
  mrt_graph &g_;
};

hwsim::Executable compile(const mrt_graph &g, const std::vector<hwsim::program::Program> &programs,
                          const hwsim::OptionFlags &options, const hwsim::ProgressFunc &progress) {
  try {
    return hwsim::compileGraph(g.graph, programs, options, progress);
  } catch (const hwsim::LinkError &e) {
    throw Error(ErrorCode::ResourceExhausted, "graph {} does not fit: {}", g.serial, e.what());
  } catch (const hwsim::InvalidOption &e) {
    throw Error(ErrorCode::InvalidArgument, "option '{}': {}", e.option(), e.what());
  } catch (const hwsim::Error &e) {
    throw Error(e.kind() == hwsim::ErrorKind::LinkError ? ErrorCode::ResourceExhausted : ErrorCode::InvalidArgument,
                "graph {} does not compile: {}", g.serial, e.what());
  }
}

}  // namespace

MRT_API mrt_status mrt_graph_compile(mrt_graph *graph, const mrt_program *programs, size_t num_programs,
                                     const char *const *options, mrt_progress_fn progress, void *user_data,
                                     void (*user_data_free)(void *user_data), mrt_executable **out) noexcept {
  return guard("mrt_graph_compile", [&] {
    // First, so user_data_free runs exactly once whatever fails below.
    const auto owned = ownUserData(user_data, user_data_free);
    requireNotNull(graph, "graph");
    requireNotNull(out, "out");
    refuseReentry(*graph);
    std::lock_guard lock(graph->mutex);
    requireNotCompiled(*graph);
    if (num_programs > 0) requireNotNull(programs, "programs");
    std::vector<hwsim::program::Program> list;
    list.reserve(num_programs);
    for (std::size_t i = 0; i < num_programs; ++i) {
      const std::string argument = fmt::format("programs[{}]", i);
      list.push_back(programOf(*graph, programs[i], argument.c_str()).program);
    }
    const hwsim::OptionFlags flags = optionPairsOf(options, "options", "option");
    hwsim::ProgressFunc report;
    if (progress != nullptr) {
      report = [progress, owned](int step, int total) {
        try {
          progress(step, total, owned->get());
        } catch (...) {
          // A C++ caller's exception must not unwind through the compiler.
        }
      };
    }
    hwsim::Executable exe = [&] {
      CompilingScope scope(*graph);
      return compile(*graph, list, flags, report);
    }();
    auto handle = makeExecutable(std::move(exe));
    graph->compiled = true;
    *out = handle.release();
  });
}
