#include "runner/request_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"

namespace mrt {
namespace {

// request = read_preparation + read_queue + computation.
constexpr const char *kPhases[4] = {"request", "read_preparation", "read_queue", "computation"};

double microseconds(RequestClock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

constexpr std::size_t kReservedTraces = 4096;

}  // namespace

RequestStats::RequestStats(std::size_t capacity) : capacity_(capacity) {
  traces_.reserve(capacity == 0 ? kReservedTraces : std::min(capacity, kReservedTraces));
}

void RequestStats::record(const RequestTimes &t) {
  // A request whose device side never signalled a read start (no inputs)
  // counts its whole device time as computation.
  const RequestClock::time_point read_start = t.read_start == RequestClock::time_point{} ? t.enqueued : t.read_start;
  const Trace trace{{microseconds(t.completed - t.received), microseconds(t.enqueued - t.received),
                     microseconds(std::max(read_start, t.enqueued) - t.enqueued),
                     microseconds(t.completed - std::max(read_start, t.enqueued))}};
  std::lock_guard lock(mutex_);
  if (capacity_ == 0 || traces_.size() < capacity_) {
    traces_.push_back(trace);
  } else {
    traces_[oldest_] = trace;
    oldest_ = (oldest_ + 1) % capacity_;
  }
  ++total_;
}

void RequestStats::timeTrace(std::map<std::string, float> &out, int index) const {
  // -1 is the last trace (the seeds' default); other negative values are
  // refused whether or not there are traces yet.
  if (index < -1) {
    throw Error(ErrorCode::InvalidArgument, "getTimeTrace: trace {} out of range: -1 (the last) or an index from 0",
                index);
  }
  std::lock_guard lock(mutex_);
  if (traces_.empty()) return;
  if (index >= static_cast<int>(traces_.size())) {
    throw Error(ErrorCode::InvalidArgument, "getTimeTrace: trace {} out of range: {} traces are kept", index,
                traces_.size());
  }
  const Trace &trace = at(index < 0 ? traces_.size() - 1 : static_cast<std::size_t>(index));
  for (int p = 0; p < 4; ++p) out[std::string(kPhases[p]) + "_duration_us"] = static_cast<float>(trace.us[p]);
}

void RequestStats::percentile(std::map<std::string, double> &out, double quantile) const {
  if (!(quantile >= 0.0 && quantile <= 1.0)) {
    throw Error(ErrorCode::InvalidArgument, "getMonitoringStatisticsPercentile: quantile must be in [0, 1], got {}",
                quantile);
  }
  std::lock_guard lock(mutex_);
  if (traces_.empty()) return;
  std::vector<double> values(traces_.size());
  for (int p = 0; p < 4; ++p) {
    std::transform(traces_.begin(), traces_.end(), values.begin(), [p](const Trace &t) { return t.us[p]; });
    // Nearest rank: the smallest value with at least quantile of the values at or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(quantile * static_cast<double>(values.size())));
    const std::size_t k = rank == 0 ? 0 : rank - 1;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    out[std::string(kPhases[p]) + "_monitoring_statistics_percentile_us"] = values[k];
  }
}

void RequestStats::mean(std::map<std::string, double> &out) const {
  std::lock_guard lock(mutex_);
  if (traces_.empty()) return;
  for (int p = 0; p < 4; ++p) {
    double sum = 0;
    for (const Trace &t : traces_) sum += t.us[p];
    out[std::string(kPhases[p]) + "_monitoring_statistics_mean_us"] = sum / static_cast<double>(traces_.size());
  }
}

void RequestStats::totalCount(std::map<std::string, double> &out) const {
  std::lock_guard lock(mutex_);
  for (const char *phase : kPhases) {
    out[std::string(phase) + "_monitoring_statistics_count"] = static_cast<double>(total_);
  }
}

}  // namespace mrt
