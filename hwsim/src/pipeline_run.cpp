// Engine::runPipelined: one step of a pipeline (docs/hwsim.md
// "Pipelining"). The stages holding a run execute at once, each on its own
// host thread and with its own cycle count, as the IPUs of a pipeline
// compute at once; then the transfers between stages run, last stage
// first, so a stage's results leave before the next run's inputs arrive.
// Stages touch only their own IPU's tiles, so they share no bytes.
#include <algorithm>
#include <exception>
#include <thread>

#include "engine_impl.hpp"
#include "fail.hpp"
#include "worker_pool.hpp"

namespace hwsim {

using detail::fail;

bool Engine::Impl::PipelineRuns::inFlight() const { return std::find(holds.begin(), holds.end(), true) != holds.end(); }

const PipelinePlan &Engine::Impl::planFor(unsigned program) {
  return detail::madeOnce(*d, d->pipelinePlansMade, program, [&] { return pipelinePlan(exe, program); });
}

namespace {
struct StageOutcome {
  std::uint64_t cycles = 0;
  RunStatus status = RunStatus::Completed;
  std::exception_ptr error;
};

// Rethrows the first error, a device error before the others.
void rethrowFirst(const std::vector<StageOutcome> &outcomes) {
  std::exception_ptr first;
  for (const auto &o : outcomes) {
    if (!o.error) continue;
    try {
      std::rethrow_exception(o.error);
    } catch (const RuntimeError &) {
      throw;
    } catch (...) {
      if (!first) first = o.error;
    }
  }
  if (first) std::rethrow_exception(first);
}
}  // namespace

RunStatus Engine::Impl::pipelineStep(unsigned program, unsigned replica, bool startNew) {
  checkRunnable(program);
  const PipelinePlan &plan = planFor(program);
  auto &rep = *replicas[replica];
  if (!rep.pipeline) rep.pipeline = std::make_unique<PipelineRuns>();
  PipelineRuns &runs = *rep.pipeline;
  if (runs.inFlight() && runs.program != program) {
    if (const RunStatus s = flushPipeline(replica); s != RunStatus::Completed) return s;
  }
  if (!plan.pipelined()) return startNew ? runOne(program, replica) : RunStatus::Completed;
  const detail::WorkerPool::RunScope running;
  // The stages run without deferred copies (operand_mirrors.hpp): make those
  // earlier runs left pending.
  makePendingCopies(replica);
  const std::size_t S = plan.stages.size();
  runs.program = program;
  runs.holds.resize(S, false);
  runs.holds[0] = startNew;
  if (!runs.inFlight()) return RunStatus::Completed;
  if (stopRequested.load(std::memory_order_acquire)) {
    std::fill(runs.holds.begin(), runs.holds.end(), false);
    return RunStatus::Stopped;
  }
  rep.profileThisRun = false;

  std::vector<StageOutcome> outcomes(S);
  auto runStage = [&](std::size_t k, const std::vector<unsigned> &steps, std::mutex *callbacks) {
    StageContext context{0, callbacks};
    t_stage = &context;
    try {
      outcomes[k].status = runSteps(steps, replica);
    } catch (...) {
      outcomes[k].error = std::current_exception();
    }
    t_stage = nullptr;
    outcomes[k].cycles = context.cycles;
  };
  // The first stage holding a run executes on the caller (so a new run's
  // input callbacks stay on the thread that drives the engine), the others
  // on helper threads.
  std::vector<std::thread> helpers;
  std::size_t onCaller = S;
  for (std::size_t k = 0; k < S; ++k) {
    if (!runs.holds[k]) continue;
    if (onCaller == S) {
      onCaller = k;
    } else {
      helpers.emplace_back(runStage, k, std::cref(plan.stages[k].steps), &runs.callbacks);
    }
  }
  runStage(onCaller, plan.stages[onCaller].steps, &runs.callbacks);
  for (auto &t : helpers) t.join();

  std::uint64_t stageCycles = 0, transferCycles = 0;
  auto finished = [&]() -> bool {
    rethrowFirst(outcomes);
    return std::none_of(outcomes.begin(), outcomes.end(), [](const auto &o) { return o.status == RunStatus::Stopped; });
  };
  try {
    if (!finished()) {
      std::fill(runs.holds.begin(), runs.holds.end(), false);
      return RunStatus::Stopped;
    }
    for (const auto &o : outcomes) stageCycles = std::max(stageCycles, o.cycles);
    // Transfers, later stages first: stage k+1's results leave before stage
    // k's results overwrite its inputs.
    outcomes.assign(S, {});
    for (std::size_t k = S - 1; k-- > 0;) {
      if (runs.holds[k]) runStage(k, plan.stages[k].transfers, nullptr);
    }
    if (!finished()) {
      std::fill(runs.holds.begin(), runs.holds.end(), false);
      return RunStatus::Stopped;
    }
    for (const auto &o : outcomes) transferCycles = std::max(transferCycles, o.cycles);
  } catch (...) {
    std::fill(runs.holds.begin(), runs.holds.end(), false);
    throw;
  }
  // Each run moves on one stage; the run in the last stage has ended.
  for (std::size_t k = S - 1; k > 0; --k) runs.holds[k] = runs.holds[k - 1];
  runs.holds[0] = false;
  addCycles(rep, stageCycles + transferCycles);
  return RunStatus::Completed;
}

RunStatus Engine::Impl::flushPipeline(unsigned replica) {
  auto &rep = *replicas[replica];
  while (rep.pipeline && rep.pipeline->inFlight()) {
    if (const RunStatus s = pipelineStep(rep.pipeline->program, replica, false); s != RunStatus::Completed) return s;
  }
  return RunStatus::Completed;
}

RunStatus Engine::runPipelined(unsigned program, unsigned replica, bool startNew) {
  return impl_->pipelineStep(program, impl_->checkReplica(replica), startNew);
}

RunStatus Engine::flushPipeline(unsigned replica) { return impl_->flushPipeline(impl_->checkReplica(replica)); }

unsigned Engine::pipelineRunsInFlight(unsigned replica) const {
  const auto &runs = impl_->replicas[impl_->checkReplica(replica)]->pipeline;
  return runs ? static_cast<unsigned>(std::count(runs->holds.begin(), runs->holds.end(), true)) : 0;
}

const PipelinePlan &Engine::pipelinePlanOf(unsigned program) {
  if (program >= impl_->d->programs.size()) {
    fail(ErrorKind::InvalidArgument, "program {} out of range ({} programs)", program, impl_->d->programs.size());
  }
  return impl_->planFor(program);
}

}  // namespace hwsim
