// The modelled effect of pipelining on a model's Main program
// (docs/hwsim.md "Pipelining"): one run alone against runs streamed through
// the stages, for mrt-run's report.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "mrt.hpp"

namespace mrt::run {

struct PipelineFigures {
  unsigned stages = 1;          // 1: the Main program is not a pipeline
  double latencyUs = 0;         // modelled device time of one run alone
  double intervalUs = 0;        // between run ends when runs stream (= latencyUs unpipelined)
  double samplesPerSecond = 0;  // modelled, streamed: model batch / interval
};

// Of the model's first Main program on its target.
PipelineFigures pipelineFigures(const mrt::Model &model, std::int64_t batch);
// "" when not pipelined, else one table row.
std::string pipelineRow(const PipelineFigures &figures);
nlohmann::json pipelineJson(const PipelineFigures &figures);

}  // namespace mrt::run
