// MatMul (batched, broadcasting the batch dimensions) and Gemm, on
// hwsim::ops::matMul. Constant right-hand operands (weights) are preloaded:
// laid out the way the multiply tiles them (createMatMulInputRhs) and their
// copies to the other tiles that multiply them made by the Load program
// (matMul's rhsLoad), so each run of Main exchanges only the activations.
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

hwsim::Type matMulOutType(hwsim::Type in, const NodeProto &node) {
  if (in == hwsim::Type::F32) return hwsim::Type::F32;
  if (in == hwsim::Type::F16) return hwsim::Type::F16;
  throw UnsupportedNode(node.op_type() + " of " + std::string(hwsim::toString(in)) + " (only FLOAT and FLOAT16)");
}

// The rhs of a 2-D multiply [M,K] x [K,N]; a constant one is laid out for
// it, preloaded.
hwsim::Tensor rhsOperand(LoweringContext &ctx, const std::string &name, const hwsim::Shape &aShape) {
  return ctx.device(name, [&](hwsim::Type type, const hwsim::Shape &shape, const std::string &handle) {
    return hwsim::ops::createMatMulInputRhs(ctx.graph(), type, aShape, shape, handle, {}, true);
  });
}

// bConstant: b is written only by the Load program (ctx.isHost), so its
// copies go there too.
hwsim::Tensor matMul2d(LoweringContext &ctx, const hwsim::Tensor &a, const hwsim::Tensor &b, bool bConstant,
                       const NodeProto &node, const std::string &name) {
  if (a.elementType() != b.elementType()) throw UnsupportedNode(node.op_type() + " of two element types");
  return hwsim::ops::matMul(ctx.graph(), ctx.main(), a, b, name, {}, matMulOutType(a.elementType(), node),
                            bConstant ? &ctx.load() : nullptr);
}

void lowerMatMul(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const Dims aDims = ctx.value(node.input(0)).dims();
  const Dims bDims = ctx.value(node.input(1)).dims();
  if (aDims.empty() || bDims.empty()) throw UnsupportedNode("MatMul of a scalar");
  const std::int32_t type = ctx.value(node.input(0)).type;
  // Vectors take part as [1,K] and [K,1]; those dimensions leave the result.
  const Dims a2 = aDims.size() == 1 ? Dims{1, aDims[0]} : aDims;
  const Dims b2 = bDims.size() == 1 ? Dims{bDims[0], 1} : bDims;
  const std::int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
  if (b2[b2.size() - 2] != k) {
    throw Error(ErrorCode::CorruptModel, "{}: MatMul of {} and {}: inner dimensions differ", nodeLabel(node),
                toString(aDims), toString(bDims));
  }
  const Dims aBatch(a2.begin(), a2.end() - 2), bBatch(b2.begin(), b2.end() - 2);
  const auto batch = broadcastDims(aBatch, bBatch);
  if (!batch) throw Error(ErrorCode::CorruptModel, "{}: batch dimensions of {} and {} do not broadcast", nodeLabel(node), toString(aDims), toString(bDims));
  Dims outDims = *batch;
  if (aDims.size() > 1) outDims.push_back(m);
  if (bDims.size() > 1) outDims.push_back(n);
  const hwsim::Shape aShape{static_cast<std::size_t>(m), static_cast<std::size_t>(k)};
  const hwsim::Shape bShape{static_cast<std::size_t>(k), static_cast<std::size_t>(n)};
  const hwsim::Tensor a = ctx.device(node.input(0));
  const hwsim::Tensor b = bBatch.empty() ? rhsOperand(ctx, node.input(1), aShape) : ctx.device(node.input(1));
  const bool bConstant = ctx.isHost(node.input(1));
  if (batch->empty()) {
    ctx.setDevice(out, matMul2d(ctx, a.reshape(aShape), b.reshape(bShape), bConstant, node, out).reshape(toShape(outDims)),
                  type);
    return;
  }
  // One multiply per batch element on views of the broadcast operands.
  const hwsim::Shape batchShape = toShape(*batch);
  hwsim::Shape aFull = batchShape, bFull = batchShape;
  aFull.insert(aFull.end(), aShape.begin(), aShape.end());
  bFull.insert(bFull.end(), bShape.begin(), bShape.end());
  const std::size_t count = hwsim::numElementsOf(batchShape);
  const hwsim::Tensor av = broadcastView(a.reshape(toShape(a2)), aFull).reshape({count, aShape[0], aShape[1]});
  const hwsim::Tensor bv = broadcastView(b.reshape(toShape(b2)), bFull).reshape({count, bShape[0], bShape[1]});
  std::vector<hwsim::Tensor> parts;
  for (std::size_t i = 0; i < count; ++i) {
    parts.push_back(matMul2d(ctx, av[i], bv[i], bConstant, node, out + "/" + std::to_string(i))
                        .reshape({1, aShape[0], bShape[1]}));
  }
  ctx.setDevice(out, hwsim::concat(parts, 0).reshape(toShape(outDims)), type);
}

// Y = alpha * A' B' + beta * C with A' = transA ? A^T : A (B likewise).
void lowerGemm(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const bool transA = attrInt(node, "transA", 0) != 0;
  const bool transB = attrInt(node, "transB", 0) != 0;
  const double alpha = attrFloat(node, "alpha", 1.0f);
  const double beta = attrFloat(node, "beta", 1.0f);
  const Dims aDims = ctx.value(node.input(0)).dims();
  std::string bName = node.input(1);
  const Dims bDims = ctx.value(bName).dims();
  if (aDims.size() != 2 || bDims.size() != 2) throw Error(ErrorCode::CorruptModel, "{}: Gemm operands must be rank 2", nodeLabel(node));
  const std::int64_t aInner = aDims[transA ? 0 : 1], bInner = bDims[transB ? 1 : 0];
  if (aInner != bInner) {
    throw Error(ErrorCode::CorruptModel, "{}: Gemm of A {} (transA {}) and B {} (transB {}): inner dimensions {} and {} differ",
                nodeLabel(node), toString(aDims), int{transA}, toString(bDims), int{transB}, aInner, bInner);
  }
  // A transposed constant B (PyTorch's Linear) is transposed once on the host.
  if (transB && ctx.isHost(bName)) {
    const HostTensor &b = ctx.host(bName);
    HostTensor t = transposedMatrix(b, 0, b.dims[0], b.dims[1]);
    bName = ctx.uniqueName(bName + "_T");
    ctx.setHost(bName, std::move(t));
    ctx.markInitializer(bName);
  }
  const bool transposeB = transB && bName == node.input(1);
  hwsim::Tensor a = ctx.device(node.input(0));
  if (transA) a = a.transpose();
  const hwsim::Tensor b = transposeB ? ctx.device(bName).transpose() : rhsOperand(ctx, bName, a.shape());
  hwsim::Tensor y = matMul2d(ctx, a, b, ctx.isHost(bName), node, out);
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (alpha != 1.0) y = scalarBinary(ctx, "Mul", y, alpha, out + "/alpha");
  const std::string &c = inputName(node, 2);
  if (!c.empty() && beta != 0.0) {
    const std::string yName = ctx.uniqueName(out + "/ab");
    ctx.setDevice(yName, y, type);
    std::string cName = c;
    if (beta != 1.0) {
      cName = ctx.uniqueName(c + "/beta");
      ctx.setDevice(cName, scalarBinary(ctx, "Mul", ctx.device(c), beta, cName), type);
    }
    y = broadcastBinary(ctx, "Add", yName, cName, out);
  }
  ctx.setDevice(out, y, type);
}

}  // namespace

void registerMatMulOps(OpRegistry &registry) {
  registry.add("MatMul", lowerMatMul);
  registry.add("Gemm", lowerGemm);
}

}  // namespace mrt::onnx
