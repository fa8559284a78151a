#include "pipeline_report.hpp"

#include <fmt/format.h>

#include "mrt_graph.hpp"

namespace mrt::run {

PipelineFigures pipelineFigures(const mrt::Model &model, std::int64_t batch) {
  PipelineFigures f;
  const std::vector<uint64_t> main = model.programFlow(mrt::ProgramPhase::Main);
  if (main.empty()) return f;
  const mrt::Executable exe = mrt::Executable::fromModel(model);
  const mrt::PipelineInfo plan = exe.pipeline(static_cast<uint32_t>(main.front()));
  const double usPerCycle = 1e6 / exe.target().clock_hz;
  f.stages = plan.num_stages;
  f.latencyUs = static_cast<double>(plan.latency_cycles) * usPerCycle;
  f.intervalUs = static_cast<double>(plan.interval_cycles) * usPerCycle;
  if (f.intervalUs > 0) f.samplesPerSecond = static_cast<double>(batch) * 1e6 / f.intervalUs;
  return f;
}

std::string pipelineRow(const PipelineFigures &f) {
  if (f.stages < 2) return {};
  return fmt::format("  pipeline: {} stages, modelled {:.1f} us per run alone, {:.1f} us per run streamed ({:.2f}x "
                     "throughput, {:.0f} samples/s)\n",
                     f.stages, f.latencyUs, f.intervalUs, f.latencyUs / f.intervalUs, f.samplesPerSecond);
}

nlohmann::json pipelineJson(const PipelineFigures &f) {
  return {{"stages", f.stages},
          {"latency_us", f.latencyUs},
          {"interval_us", f.intervalUs},
          {"samples_per_second", f.samplesPerSecond}};
}

}  // namespace mrt::run
