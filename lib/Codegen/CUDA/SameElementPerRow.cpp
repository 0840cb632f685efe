//===- SameElementPerRow.cpp - which element two chain ops touch per row -===//
//
// A row chain takes a value per row from the register of the op that
// computed it instead of reading it back: only right if, at every row, the
// reader's element is the one the writer stored. Maps of loop indices and
// constants (every map seen in the models) are evaluated as strides times
// the row's digits; any other map through index vectors and composition.
//
//===----------------------------------------------------------------------===//

#include "RowChains.h"

#include "BufferExtents.h"

#include <optional>

using namespace mlir;
using rankc::elementOffset;
using rankc::extentOf;
using rankc::RowChainOp;

namespace {

/// An op's loop indices at row `row` (its row index 0): the loops other
/// than `rowDim`, row-major.
SmallVector<int64_t> indicesAtRow(ArrayRef<int64_t> ranges, unsigned rowDim,
                                  int64_t row) {
  SmallVector<int64_t> idx(ranges.size(), 0);
  for (int d = int(ranges.size()) - 1; d >= 0; --d) {
    if (unsigned(d) == rowDim)
      continue;
    idx[d] = row % ranges[d];
    row /= ranges[d];
  }
  return idx;
}

/// An access whose element offset is `offset` + sum_d coef[d] * idx[d] at
/// loop indices idx (every result of its map a loop index or a constant):
/// evaluated row by row without building index vectors (GPT-2's attention
/// has 49152 rows, checked for each value a chain takes from a register).
struct LinearAccess {
  int64_t offset = 0;
  SmallVector<int64_t> coef;

  /// The offset at row `row` of an op with loop `ranges` along `rowDim`
  /// (indicesAtRow's indices).
  int64_t at(ArrayRef<int64_t> ranges, unsigned rowDim, int64_t row) const {
    int64_t element = offset;
    for (int d = int(ranges.size()) - 1; d >= 0; --d) {
      if (unsigned(d) == rowDim)
        continue;
      element += coef[d] * (row % ranges[d]);
      row /= ranges[d];
    }
    return element;
  }
};

std::optional<LinearAccess> linearAccess(MemRefType type, AffineMap map) {
  SmallVector<int64_t> strides;
  LinearAccess access;
  if (failed(type.getStridesAndOffset(strides, access.offset)) ||
      ShapedType::isDynamic(access.offset))
    return std::nullopt;
  access.coef.assign(map.getNumDims(), 0);
  for (auto [e, stride] : llvm::zip(map.getResults(), strides)) {
    if (ShapedType::isDynamic(stride))
      return std::nullopt;
    if (auto d = dyn_cast<AffineDimExpr>(e))
      access.coef[d.getPosition()] += stride;
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      access.offset += stride * c.getValue();
    else
      return std::nullopt;
  }
  return access;
}

} // namespace

bool rankc::sameElementPerRow(const RowChainOp &a, OpOperand *x,
                              const RowChainOp &b, OpOperand *y, int64_t rows) {
  linalg::GenericOp opA = a.op, opB = b.op;
  auto typeA = dyn_cast<MemRefType>(x->get().getType());
  auto typeB = dyn_cast<MemRefType>(y->get().getType());
  if (!typeA || !typeB || typeA.getElementType() != typeB.getElementType() ||
      !extentOf(x->get()).sameBase(extentOf(y->get())))
    return false;
  AffineMap mapA = opA.getMatchingIndexingMap(x);
  AffineMap mapB = opB.getMatchingIndexingMap(y);
  if (mapA.getNumSymbols() || mapB.getNumSymbols() ||
      mapA.isFunctionOfDim(a.rowDim) || mapB.isFunctionOfDim(b.rowDim))
    return false;
  SmallVector<int64_t> rangesA = opA.getStaticLoopRanges();
  SmallVector<int64_t> rangesB = opB.getStaticLoopRanges();
  std::optional<LinearAccess> linearA = linearAccess(typeA, mapA);
  std::optional<LinearAccess> linearB = linearAccess(typeB, mapB);
  if (linearA && linearB) {
    for (int64_t row = 0; row < rows; ++row)
      if (linearA->at(rangesA, a.rowDim, row) !=
          linearB->at(rangesB, b.rowDim, row))
        return false;
    return true;
  }
  for (int64_t row = 0; row < rows; ++row) {
    std::optional<int64_t> at = elementOffset(
        typeA, mapA.compose(indicesAtRow(rangesA, a.rowDim, row)));
    std::optional<int64_t> other = elementOffset(
        typeB, mapB.compose(indicesAtRow(rangesB, b.rowDim, row)));
    if (!at || !other || *at != *other)
      return false;
  }
  return true;
}
