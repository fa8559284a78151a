#include "queue/iqueue.hpp"

namespace mrt {

std::int64_t modelBatchSize(const popef::TensorInfo &info) noexcept {
  const auto &shape = info.shape();
  if (shape.empty() || shape.front() <= 0) return 1;
  return shape.front();
}

}  // namespace mrt
