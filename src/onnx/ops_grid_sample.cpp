// GridSample (opset 16): Y[n, c, i, j] samples X[n, c] at the point that
// grid[n, i, j] = (x, y) names in [-1, 1] coordinates. Everything is
// computed on the device from the run-time grid: the coordinates (align_corners),
// the padding (zeros, border, reflection), then per tap (1 nearest, 4
// bilinear, 16 bicubic) the flat input position and the weight; each tap
// is a GatherElements of X viewed [N, C, H * W] (a tap outside the input
// reads position H * W, out of range, which gives 0: zeros padding).
// The arithmetic follows PyTorch's grid_sampler_2d, which the node tests'
// outputs were made with (nearest rounds halves to even, bicubic's A is
// -0.75 and pads each tap's coordinate).
#include <array>

#include "onnx/device_math.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

enum class Padding { Zeros, Border, Reflection };

struct GridSampling {
  bool alignCorners = false;
  Padding padding = Padding::Zeros;
};

// Grid coordinate g in [-1, 1] as a position along an axis of `size` elements.
hwsim::Tensor unnormalize(DeviceMath &m, const hwsim::Tensor &g, double size, const GridSampling &s) {
  const hwsim::Tensor shifted = m.op("Add", g, 1.0);
  return s.alignCorners ? m.op("Mul", shifted, (size - 1) / 2) : m.op("Sub", m.op("Mul", shifted, size / 2), 0.5);
}

// Position p mirrored into [twiceLow / 2, twiceHigh / 2] (PyTorch's reflect_coordinates).
hwsim::Tensor reflect(DeviceMath &m, const hwsim::Tensor &p, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh) return m.op("Mul", p, 0.0);
  const double low = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  const hwsim::Tensor distance = m.unary("Abs", m.op("Sub", p, low));
  const hwsim::Tensor extra = m.op("Fmod", distance, span);
  const hwsim::Tensor odd = m.op("Mod", m.unary("Floor", m.op("Div", distance, span)), 2.0);
  // extra + low, or span - extra + low after an odd number of flips.
  return m.op("Add", m.op("Add", extra, m.op("Mul", m.op("Sub", m.op("Mul", extra, -2.0), -span), odd)), low);
}

// The padding mode applied to a position along an axis of `size` elements.
hwsim::Tensor pad(DeviceMath &m, const hwsim::Tensor &p, double size, const GridSampling &s) {
  switch (s.padding) {
    case Padding::Zeros: return p;
    case Padding::Border: return m.clamp(p, 0.0, size - 1);
    case Padding::Reflection: {
      const hwsim::Tensor r = s.alignCorners ? reflect(m, p, 0.0, 2 * (size - 1)) : reflect(m, p, -1.0, 2 * size - 1);
      return m.clamp(r, 0.0, size - 1);
    }
  }
  return p;
}

struct Tap {
  hwsim::Tensor x, y;  // integral positions (F32), possibly outside the input
  hwsim::Tensor weight;
};

// X's elements at the taps' positions: [N, C, P] for grid positions [N, P].
hwsim::Tensor sampleTap(DeviceMath &m, const hwsim::Tensor &flatX, const Tap &tap, std::size_t h, std::size_t w) {
  const auto hd = static_cast<double>(h), wd = static_cast<double>(w);
  // 1 inside the input, else 0; outside reads position H * W, which gathers 0.
  const hwsim::Tensor inside = m.op(
      "Mul", m.op("Mul", m.test("GreaterEqual", tap.x, 0.0, hwsim::Type::F32), m.test("LessEqual", tap.x, wd - 1, hwsim::Type::F32)),
      m.op("Mul", m.test("GreaterEqual", tap.y, 0.0, hwsim::Type::F32), m.test("LessEqual", tap.y, hd - 1, hwsim::Type::F32)));
  const hwsim::Tensor flat = m.op("Add", m.op("Mul", m.op("Sub", m.op("Add", m.op("Mul", tap.y, wd), tap.x), hd * wd), inside), hd * wd);
  const std::size_t n = flatX.dim(0), c = flatX.dim(1), p = flat.dim(1);
  const hwsim::Tensor index = m.materialized(broadcastView(m.s32(flat).reshape({n, 1, p}), {n, c, p}));
  return m.takeElements(flatX, index, 2);
}

GridSampling gridSamplingOf(const NodeProto &node) {
  GridSampling s;
  s.alignCorners = attrInt(node, "align_corners", 0) != 0;
  const std::string padding = attrString(node, "padding_mode", "zeros");
  if (padding == "zeros") s.padding = Padding::Zeros;
  else if (padding == "border") s.padding = Padding::Border;
  else if (padding == "reflection") s.padding = Padding::Reflection;
  else throw Error(ErrorCode::CorruptModel, "{}: unknown padding_mode '{}'", nodeLabel(node), padding);
  return s;
}

// The taps of `mode` for the grid positions gx, gy ([N, P]).
std::vector<Tap> tapsOf(DeviceMath &m, const NodeProto &node, const hwsim::Tensor &gx, const hwsim::Tensor &gy,
                        std::size_t h, std::size_t w, const GridSampling &s) {
  const auto hd = static_cast<double>(h), wd = static_cast<double>(w);
  const std::string mode = attrString(node, "mode", "bilinear");
  const hwsim::Tensor x = unnormalize(m, gx, wd, s), y = unnormalize(m, gy, hd, s);
  if (mode == "nearest") {
    return {{m.unary("Round", pad(m, x, wd, s)), m.unary("Round", pad(m, y, hd, s)), hwsim::Tensor()}};
  }
  if (mode == "bilinear") {
    const hwsim::Tensor px = pad(m, x, wd, s), py = pad(m, y, hd, s);
    const hwsim::Tensor x0 = m.unary("Floor", px), y0 = m.unary("Floor", py);
    const hwsim::Tensor fx = m.op("Sub", px, x0), fy = m.op("Sub", py, y0);
    const std::array<hwsim::Tensor, 2> wx = {m.op("Add", m.op("Mul", fx, -1.0), 1.0), fx};
    const std::array<hwsim::Tensor, 2> wy = {m.op("Add", m.op("Mul", fy, -1.0), 1.0), fy};
    std::vector<Tap> taps;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        taps.push_back({m.op("Add", x0, i), m.op("Add", y0, j), m.op("Mul", wx[static_cast<std::size_t>(i)], wy[static_cast<std::size_t>(j)])});
      }
    }
    return taps;
  }
  if (mode == "bicubic") {
    // The point is not padded; each tap's position is.
    const hwsim::Tensor x0 = m.unary("Floor", x), y0 = m.unary("Floor", y);
    const auto wx = cubicWeights(m, m.op("Sub", x, x0), -0.75), wy = cubicWeights(m, m.op("Sub", y, y0), -0.75);
    std::vector<Tap> taps;
    for (int j = 0; j < 4; ++j) {
      const hwsim::Tensor ty = m.unary("Floor", pad(m, m.op("Add", y0, j - 1), hd, s));
      for (int i = 0; i < 4; ++i) {
        taps.push_back({m.unary("Floor", pad(m, m.op("Add", x0, i - 1), wd, s)), ty,
                        m.op("Mul", wx[static_cast<std::size_t>(i)], wy[static_cast<std::size_t>(j)])});
      }
    }
    return taps;
  }
  throw Error(ErrorCode::CorruptModel, "{}: unknown mode '{}'", nodeLabel(node), mode);
}

void lowerGridSample(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0)), grid = ctx.device(node.input(1));
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(0) != x.dim(0) || grid.dim(3) != 2) {
    throw Error(ErrorCode::CorruptModel, "{}: X {} with grid {} (want [N, C, H, W] and [N, H_out, W_out, 2])",
                nodeLabel(node), toString(toDims(x.shape())), toString(toDims(grid.shape())));
  }
  if (!hwsim::isFloatingPoint(x.elementType()) || !hwsim::isFloatingPoint(grid.elementType())) {
    throw UnsupportedNode("GridSample of " + typeName(type) + " (F16/F32 only)");
  }
  const std::size_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), p = grid.dim(1) * grid.dim(2);
  DeviceMath m(ctx, node.output(0));
  // Coordinates in F32 whatever the grid's type.
  const hwsim::Tensor g = grid.reshape({n, p, 2});
  const hwsim::Tensor gx = m.cast(g.slice(0, 1, 2).reshape({n, p}), hwsim::Type::F32);
  const hwsim::Tensor gy = m.cast(g.slice(1, 2, 2).reshape({n, p}), hwsim::Type::F32);
  const hwsim::Tensor flatX = x.reshape({n, c, h * w});
  hwsim::Tensor y;
  for (const Tap &tap : tapsOf(m, node, gx, gy, h, w, gridSamplingOf(node))) {
    hwsim::Tensor sample = sampleTap(m, flatX, tap, h, w);
    if (tap.weight.valid()) {
      sample = m.op("Mul", sample, m.cast(tap.weight, x.elementType()).reshape({n, 1, p}));
    }
    y = y.valid() ? m.op("Add", y, sample) : sample;
  }
  ctx.setDevice(node.output(0), y.reshape({n, c, grid.dim(1), grid.dim(2)}), type);
}

}  // namespace

void registerGridSampleOps(OpRegistry &registry) { registry.add("GridSample", lowerGridSample); }

}  // namespace mrt::onnx
