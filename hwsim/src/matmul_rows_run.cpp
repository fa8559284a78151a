// MatMul rows at run time (matmul_rows.hpp): a row's b blocks joined in its
// replica's buffer, and the row run as one GEMM.
#include <cstring>
#include <new>

#include "engine_impl.hpp"

namespace hwsim {

namespace {

using detail::OperandMirrors;
using detail::PreparedOperand;

const PreparedOperand *operandsOf(const detail::PreparedVertices &prepared, std::uint32_t vertex) {
  return prepared.operands.data() + prepared.vertices[vertex].firstOperand;
}

// Where an input is read this run (operand_mirrors.hpp).
std::uint64_t readAt(const PreparedOperand &o, const std::atomic<bool> *fresh) {
  return OperandMirrors::readOffset(o.offset, o.read, fresh);
}

// Whether the joined b holds the bytes the row's vertices read as their b.
bool joinedAsRead(const detail::MatMulRow &row, const detail::PreparedVertices &prepared, const std::atomic<bool> *fresh,
                  const Engine::Impl::Replica::JoinedB &joined) {
  if (!joined.fresh.load(std::memory_order_relaxed) || joined.from.size() != row.vertices) return false;
  for (std::uint32_t j = 0; j < row.vertices; ++j) {
    if (joined.from[j] != readAt(operandsOf(prepared, row.firstVertex + j)[1], fresh)) return false;
  }
  return true;
}

}  // namespace

void Engine::Impl::joinB(const detail::MatMulRow &row, const detail::PreparedVertices &prepared, std::uint8_t *base,
                         const std::atomic<bool> *fresh, Replica &rep) const {
  Replica::JoinedB &joined = rep.joinedBs[row.joinedB];
  if (joinedAsRead(row, prepared, fresh, joined)) return;
  const detail::JoinedB &plan = matMulRows.joinedBs[row.joinedB];
  const std::uint64_t K = plan.shape[0], columns = plan.shape[1];
  if (!joined.data) joined.data.reset(static_cast<float *>(::operator new[](K * columns * sizeof(float), std::align_val_t{64})));
  joined.from.resize(row.vertices);
  for (std::uint32_t j = 0; j < row.vertices; ++j) {
    joined.from[j] = readAt(operandsOf(prepared, row.firstVertex + j)[1], fresh);
    const auto *block = reinterpret_cast<const float *>(base + joined.from[j]);
    const std::uint64_t width = plan.width[j];
    float *to = joined.data.get() + plan.column[j];
    for (std::uint64_t k = 0; k < K; ++k) std::memcpy(to + k * columns, block + k * width, width * sizeof(float));
  }
  joined.fresh.store(true, std::memory_order_relaxed);
}

bool Engine::Impl::runMatMulRow(const detail::MatMulRow &row, const detail::MatMulRowPart *part,
                                const detail::PreparedVertices &prepared, std::uint8_t *base, const std::atomic<bool> *fresh,
                                Replica &rep) const {
  const PreparedOperand *first = operandsOf(prepared, row.firstVertex);
  const std::uint64_t aAt = readAt(first[0], fresh);
  for (std::uint32_t j = 1; j < row.vertices; ++j) {
    if (readAt(operandsOf(prepared, row.firstVertex + j)[0], fresh) != aAt) return false;
  }
  Replica::JoinedB &joined = rep.joinedBs[row.joinedB];
  if (!joinedAsRead(row, prepared, fresh, joined)) return false;
  // A part: its rows of a and out, which are whole rows of both matrices.
  const Shape &aShape = part != nullptr ? part->aShape : *first[0].shape;
  const Shape &outShape = part != nullptr ? part->outShape : row.outShape;
  const std::uint64_t firstRow = part != nullptr ? part->firstRow : 0;
  detail::Operand ops[3];
  ops[0] = {base + aAt + firstRow * aShape[1] * sizeof(float), Type::F32, &aShape, aShape[0] * aShape[1], 0};
  const Shape &bShape = matMulRows.joinedBs[row.joinedB].shape;
  ops[1] = {reinterpret_cast<std::uint8_t *>(joined.data.get()), Type::F32, &bShape, bShape[0] * bShape[1], 0};
  ops[2] = {base + row.outOffset + firstRow * outShape[1] * sizeof(float), Type::F32, &outShape,
            outShape[0] * outShape[1], 0};
  const detail::PreparedVertex &vx = prepared.vertices[row.firstVertex];
  vx.spec->execute(*vx.spec, ops, *vx.attrs);
  return true;
}

}  // namespace hwsim
