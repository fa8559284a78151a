// The masked-load Conv path for unit column stride and few output channels
// (conv_masked_rows.cpp): defined only in the v3 (AVX2, FMA) and v4
// (AVX-512) kernels, where HWSIM_HAS_MASKED_ROWS is defined.
#pragma once

#include <cstdint>

#include "codelets/conv_geometry.hpp"
#include "kernel_entry.hpp"

namespace hwsim::detail::HWSIM_ISA {

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#define HWSIM_HAS_MASKED_ROWS 1

// Output channels up to which, and kernel widths up to which, convMaskedRows
// runs.
inline constexpr std::int64_t kMaskedRowsMaxChannels = 4;
inline constexpr std::int64_t kMaskedRowsMaxKernelWidth = 16;

// y[m * yStride + oh * OW + ow] = (or +=) the convolution of x [Cg, H, W]
// (channel c's plane at x + c * xPitch) with weights w [Mg, Cg * KH * KW]
// for all output rows and columns; needs g.sw == 1,
// Mg <= kMaskedRowsMaxChannels, g.KW <= kMaskedRowsMaxKernelWidth.
void convMaskedRows(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                    std::int64_t Mg, float *y, std::int64_t yStride, bool assign);
#endif

}  // namespace hwsim::detail::HWSIM_ISA
