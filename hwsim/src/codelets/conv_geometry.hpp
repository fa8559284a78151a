// The geometry of a Conv / MaxPool / AveragePool vertex, parsed from its
// operands' shapes and its attributes: shared by validation (codelets/conv.cpp)
// and the host kernels (hwsim/kernels/conv_kernels.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "codelets/registry.hpp"

namespace hwsim::detail {

// Everything execute needs, as 2-D (1-D: H = KH = OH = 1).
struct Geometry {
  std::int64_t N = 0, C = 0, M = 0, H = 1, W = 0, KH = 1, KW = 0, OH = 1, OW = 0;
  std::int64_t sh = 1, sw = 1, ph0 = 0, pw0 = 0, ph1 = 0, pw1 = 0, dh = 1, dw = 1;
  std::int64_t group = 1;
};

// Conv operands (in, weights, out) and attributes (strides, pads, dilations,
// group, accumulate) into g. Returns an error message or "".
std::string convGeometry(const Operand *ops, const Attrs &attrs, Geometry &g);

// Pool operands (in, out) and attributes (kernel_shape, strides, pads,
// dilations[, count_include_pad]) into g. Returns an error message or "".
std::string poolGeometry(const Operand *ops, const Attrs &attrs, Geometry &g);

}  // namespace hwsim::detail
