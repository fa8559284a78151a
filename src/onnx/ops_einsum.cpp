// Einsum as broadcasting arithmetic: each operand's repeated labels reduced
// to their diagonal (a view), its axes permuted into one label order (the
// output's labels, then the summed ones) with 1s for the labels it lacks,
// all operands multiplied with broadcasting, and the summed labels reduced.
// Exact, but the product spans every label: fine for small contractions, a
// MatMul is cheaper for big ones.
#include <algorithm>
#include <cctype>
#include <map>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using Labels = std::vector<std::string>;  // one per axis: a letter, or "...k" for ellipsis axis k (from the right)

// The labels of one term ("ij", "...ii", "b...") for an operand of `rank`
// (rank -1: the output, whose ellipsis spans `ellipsis` axes).
Labels parseTerm(const std::string &term, long rank, std::size_t ellipsis, const std::string &what) {
  Labels letters;
  std::size_t ellipsisAt = std::string::npos;
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0 && ellipsisAt == std::string::npos) {
      ellipsisAt = letters.size();
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      letters.push_back(std::string(1, term[i]));
    } else {
      throw Error(ErrorCode::CorruptModel, "{}: bad Einsum term '{}'", what, term);
    }
  }
  std::size_t extra = 0;
  if (rank >= 0) {
    if (static_cast<long>(letters.size()) > rank || (ellipsisAt == std::string::npos && static_cast<long>(letters.size()) != rank)) {
      throw Error(ErrorCode::CorruptModel, "{}: Einsum term '{}' for an operand of rank {}", what, term, rank);
    }
    extra = static_cast<std::size_t>(rank) - letters.size();
  } else if (ellipsisAt != std::string::npos) {
    extra = ellipsis;
  }
  if (ellipsisAt == std::string::npos) return letters;
  Labels out(letters.begin(), letters.begin() + static_cast<std::ptrdiff_t>(ellipsisAt));
  for (std::size_t k = extra; k-- > 0;) out.push_back("..." + std::to_string(k));
  out.insert(out.end(), letters.begin() + static_cast<std::ptrdiff_t>(ellipsisAt), letters.end());
  return out;
}

// x with each label once: a repeated label keeps the diagonal of its axes.
hwsim::Tensor diagonal(hwsim::Tensor x, Labels &labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    for (std::size_t j = labels.size(); j-- > i + 1;) {
      if (labels[j] != labels[i]) continue;
      // Axes i and j moved last, merged, and the n diagonal elements taken.
      std::vector<std::size_t> perm;
      for (std::size_t d = 0; d < labels.size(); ++d) if (d != i && d != j) perm.push_back(d);
      perm.push_back(i);
      perm.push_back(j);
      const std::size_t n = x.dim(static_cast<unsigned>(i));
      hwsim::Tensor moved = permuteView(x, perm);
      hwsim::Shape merged(moved.shape().begin(), moved.shape().end() - 2);
      merged.push_back(n * n);
      std::vector<std::int64_t> diag;
      for (std::size_t k = 0; k < n; ++k) diag.push_back(static_cast<std::int64_t>(k * n + k));
      x = takeView(moved.reshape(merged), merged.size() - 1, diag);
      Labels next;
      for (const auto d : perm) next.push_back(labels[d]);
      next.pop_back();
      labels = next;
      i = static_cast<std::size_t>(-1);  // start over: positions changed
      break;
    }
  }
  return x;
}

void lowerEinsum(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  std::string equation;
  for (const char c : attrString(node, "equation", "")) if (c != ' ') equation += c;
  const std::size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = lhs.find(',', begin);
    terms.push_back(lhs.substr(begin, comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (static_cast<int>(terms.size()) != node.input_size()) {
    throw Error(ErrorCode::CorruptModel, "{}: equation '{}' has {} terms for {} inputs", nodeLabel(node), equation,
                terms.size(), node.input_size());
  }
  std::vector<hwsim::Tensor> operands;
  std::vector<Labels> labels;
  std::size_t ellipsis = 0;
  std::map<std::string, int> count;
  for (int i = 0; i < node.input_size(); ++i) {
    const hwsim::Tensor x = ctx.device(node.input(i));
    Labels l = parseTerm(terms[static_cast<std::size_t>(i)], static_cast<long>(x.rank()), 0, nodeLabel(node));
    for (const auto &label : l) {
      ++count[label];
      if (label[0] == '.') ellipsis = std::max(ellipsis, static_cast<std::size_t>(std::stoul(label.substr(3))) + 1);
    }
    operands.push_back(diagonal(x, l));
    labels.push_back(l);
  }
  Labels outLabels;
  if (arrow != std::string::npos) {
    outLabels = parseTerm(equation.substr(arrow + 2), -1, ellipsis, nodeLabel(node));
  } else {  // implicit: the ellipsis, then the letters used once, alphabetically
    for (std::size_t k = ellipsis; k-- > 0;) outLabels.push_back("..." + std::to_string(k));
    for (const auto &[label, n] : count) if (n == 1 && label[0] != '.') outLabels.push_back(label);
  }
  Labels order = outLabels;
  for (const auto &[label, n] : count) {
    if (std::find(order.begin(), order.end(), label) == order.end()) order.push_back(label);
  }
  // Each operand permuted into `order` with 1s for the labels it lacks.
  hwsim::Tensor product;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    std::vector<std::size_t> perm;
    hwsim::Shape shape;
    for (const auto &label : order) {
      const auto it = std::find(labels[i].begin(), labels[i].end(), label);
      if (it == labels[i].end()) {
        shape.push_back(1);
      } else {
        perm.push_back(static_cast<std::size_t>(it - labels[i].begin()));
        shape.push_back(operands[i].dim(static_cast<unsigned>(perm.back())));
      }
    }
    const hwsim::Tensor aligned = permuteView(operands[i], perm).reshape(shape);
    product = i == 0 ? aligned : broadcastBinary(ctx, "Mul", product, aligned, out + "/product" + std::to_string(i));
  }
  std::vector<std::size_t> summed;
  for (std::size_t d = outLabels.size(); d < order.size(); ++d) summed.push_back(d);
  hwsim::Shape outShape(product.shape().begin(), product.shape().begin() + static_cast<std::ptrdiff_t>(outLabels.size()));
  const hwsim::Tensor y = summed.empty() ? product
                                         : hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceSum", product, summed, out);
  ctx.setDevice(out, y.reshape(outShape), ctx.value(node.input(0)).type);
}

}  // namespace

void registerEinsumOps(OpRegistry &registry) { registry.add("Einsum", lowerEinsum); }

}  // namespace mrt::onnx
