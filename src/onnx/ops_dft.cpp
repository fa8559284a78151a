// DFT (opset 17) as two multiplies per component along the axis: with
// C[n][k] = cos(2 pi n k / N) and S[n][k] = sin(2 pi n k / N) built on the
// host, the forward transform is
//   Yr = Xr C + Xi S,  Yi = Xi C - Xr S,
// the inverse uses -S and divides by N. Real input (last dimension 1) has no
// Xi; onesided keeps the first N / 2 + 1 frequencies.
#include <cmath>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

void lowerDFT(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (!hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("DFT of " + typeName(type));
  const std::size_t rank = x.rank();
  const std::size_t components = rank == 0 ? 0 : x.dim(static_cast<unsigned>(rank - 1));
  if (rank < 3 || (components != 1 && components != 2)) {
    throw Error(ErrorCode::CorruptModel, "{}: input {} is not [batch, ..., 1 or 2]", nodeLabel(node), toString(toDims(x.shape())));
  }
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 1), rank - 1, nodeLabel(node));
  if (axis == 0) throw Error(ErrorCode::CorruptModel, "{}: axis 0 is the batch", nodeLabel(node));
  const std::size_t n = x.dim(static_cast<unsigned>(axis));
  if (!inputName(node, 1).empty()) {
    const std::vector<std::int64_t> length = constantInts(ctx, node, 1, "DFT's dft_length");
    if (length.size() != 1 || length[0] != static_cast<std::int64_t>(n)) {
      throw UnsupportedNode("DFT with a dft_length other than the axis' size");
    }
  }
  const bool inverse = attrInt(node, "inverse", 0) != 0;
  const std::size_t k = attrInt(node, "onesided", 0) != 0 ? n / 2 + 1 : n;
  const double norm = inverse ? 1.0 / static_cast<double>(n) : 1.0, sign = inverse ? -1.0 : 1.0;
  HostTensor c{type, {static_cast<std::int64_t>(n), static_cast<std::int64_t>(k)}, {}}, s = c;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      const double angle = 2 * M_PI * static_cast<double>((i * j) % n) / static_cast<double>(n);
      c.values.push_back(norm * std::cos(angle));
      s.values.push_back(sign * norm * std::sin(angle));
    }
  }
  const std::string cName = ctx.uniqueName(out + "/cos"), sName = ctx.uniqueName(out + "/sin");
  ctx.setHost(cName, std::move(c));
  ctx.setHost(sName, std::move(s));
  hwsim::Shape part = x.shape();
  part.pop_back();
  auto component = [&](std::size_t i) { return x.slice(i, i + 1, static_cast<unsigned>(rank - 1)).reshape(part); };
  const hwsim::Tensor xr = component(0);
  hwsim::Tensor yr = mixAlong(ctx, xr, axis, cName, out + "/real_cos");
  hwsim::Tensor yi = scalarBinary(ctx, "Mul", mixAlong(ctx, xr, axis, sName, out + "/real_sin"), -1.0, out + "/imag_real");
  if (components == 2) {
    const hwsim::Tensor xi = component(1);
    yr = broadcastBinary(ctx, "Add", yr, mixAlong(ctx, xi, axis, sName, out + "/imag_sin"), out + "/real");
    yi = broadcastBinary(ctx, "Add", yi, mixAlong(ctx, xi, axis, cName, out + "/imag_cos"), out + "/imag");
  }
  hwsim::Shape stacked = yr.shape();
  stacked.push_back(1);
  ctx.setDevice(out, materialize(ctx, hwsim::concat({yr.reshape(stacked), yi.reshape(stacked)}, static_cast<unsigned>(rank - 1)), out),
                type);
}

}  // namespace

void registerDftOps(OpRegistry &registry) { registry.add("DFT", lowerDFT); }

}  // namespace mrt::onnx
