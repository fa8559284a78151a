// Det: the determinant of each trailing [n, n] matrix, by Laplace expansion
// along the rows with every minor computed once (a minor is fixed by the set
// of columns left, so 2^n of them): exact arithmetic order, no pivoting, and
// elementwise ops over the batch of matrices. Small n only (n <= kMaxOrder).
#include <map>

#include "onnx/device_math.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

constexpr std::size_t kMaxOrder = 8;

class Minors {
 public:
  Minors(DeviceMath &m, const hwsim::Tensor &x) : m_(m), x_(x), n_(x.dim(1)) {}

  // The determinant of rows n - |columns| .. n - 1 restricted to `columns` (a bit set).
  hwsim::Tensor of(unsigned columns) {
    if (const auto it = memo_.find(columns); it != memo_.end()) return it->second;
    const std::size_t row = n_ - static_cast<std::size_t>(__builtin_popcount(columns));
    hwsim::Tensor sum;
    int sign = 1;
    for (std::size_t j = 0; j < n_; ++j) {
      if ((columns & (1u << j)) == 0) continue;
      const unsigned rest = columns & ~(1u << j);
      hwsim::Tensor term = rest == 0 ? element(row, j) : m_.op("Mul", element(row, j), of(rest));
      if (sum.valid()) sum = m_.op(sign > 0 ? "Add" : "Sub", sum, term);
      else sum = sign > 0 ? term : m_.op("Mul", term, -1.0);
      sign = -sign;
    }
    memo_[columns] = sum;
    return sum;
  }

 private:
  hwsim::Tensor element(std::size_t i, std::size_t j) {
    return x_.slice(i, i + 1, 1).slice(j, j + 1, 2).reshape({x_.dim(0)});
  }

  DeviceMath &m_;
  hwsim::Tensor x_;
  std::size_t n_;
  std::map<unsigned, hwsim::Tensor> memo_;
};

void lowerDet(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const std::size_t rank = x.rank();
  if (rank < 2 || x.dim(static_cast<unsigned>(rank - 1)) != x.dim(static_cast<unsigned>(rank - 2))) {
    throw Error(ErrorCode::CorruptModel, "{}: Det of {} (want [*, n, n])", nodeLabel(node), toString(toDims(x.shape())));
  }
  const std::size_t n = x.dim(static_cast<unsigned>(rank - 1));
  if (n == 0 || n > kMaxOrder) throw UnsupportedNode("Det of " + std::to_string(n) + " x " + std::to_string(n) + " matrices (1 to 8)");
  if (!hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("Det of " + typeName(type));
  const hwsim::Shape batch(x.shape().begin(), x.shape().end() - 2);
  std::size_t matrices = 1;
  for (const auto d : batch) matrices *= d;
  DeviceMath m(ctx, node.output(0));
  Minors minors(m, x.reshape({matrices, n, n}));
  ctx.setDevice(node.output(0), minors.of((1u << n) - 1).reshape(batch), type);
}

}  // namespace

void registerDetOps(OpRegistry &registry) { registry.add("Det", lowerDet); }

}  // namespace mrt::onnx
