#include "pipeline_report.hpp"

#include <fmt/format.h>

#include <hwsim/pipeline.hpp>

#include "popef/executable_check.hpp"

namespace mrt::run {

PipelineFigures pipelineFigures(const popef::Model &model, std::int64_t batch) {
  PipelineFigures f;
  const auto &main = model.metadata.programFlow().main();
  if (main.empty()) return f;
  const hwsim::Executable exe = popef::readExecutable(model);
  const hwsim::PipelinePlan plan = hwsim::pipelinePlan(exe, static_cast<unsigned>(main.front()));
  const double usPerCycle = 1e6 / exe.target().clockHz;
  f.stages = static_cast<unsigned>(plan.stages.size());
  f.latencyUs = static_cast<double>(plan.latencyCycles()) * usPerCycle;
  f.intervalUs = static_cast<double>(plan.intervalCycles()) * usPerCycle;
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
