// RequestStats: the time traces of a replica's recent requests and the
// statistics over them (ModelRunner::getTimeTrace and
// getMonitoringStatistics*). Written by the device thread when a request
// completes, read by any thread; one mutex guards it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mrt {

using RequestClock = std::chrono::steady_clock;

// When one request passed each phase boundary.
struct RequestTimes {
  RequestClock::time_point received;    // execute called
  RequestClock::time_point enqueued;    // validated and pushed to the queues
  RequestClock::time_point read_start;  // the device started reading its first input
  RequestClock::time_point completed;   // its last output was written
};

class RequestStats {
 public:
  // capacity: traces kept (the oldest is dropped first); 0 = unbounded.
  // Room for up to 4096 traces is made at once, so that recording one does
  // not allocate (a bigger buffer grows as requests come until it is full).
  explicit RequestStats(std::size_t capacity);

  void record(const RequestTimes &times);

  // The four *_duration_us of trace `index` (-1: the last); empty if none.
  void timeTrace(std::map<std::string, float> &out, int index) const;
  void percentile(std::map<std::string, double> &out, double quantile) const;
  void mean(std::map<std::string, double> &out) const;
  void totalCount(std::map<std::string, double> &out) const;

 private:
  // Microseconds of each phase, in the order of kPhases.
  struct Trace {
    double us[4];
  };

  // Trace `index` (0 = oldest kept).
  const Trace &at(std::size_t index) const { return traces_[(oldest_ + index) % traces_.size()]; }

  mutable std::mutex mutex_;
  std::size_t capacity_;
  // A ring once full: the newest trace overwrites the oldest, so a replica
  // serving for ever allocates nothing here once it has kept `capacity_`.
  std::vector<Trace> traces_;
  std::size_t oldest_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace mrt
