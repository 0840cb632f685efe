//===- IndexingBuilders.cpp - take and scatter_add (version 2) ------------===//
//
// take is a linalg.generic over the result that reads x at the index it
// takes from `indices` (tensor.extract in the body: a gather, as torch-mlir
// lowers an embedding); scatter_add is a loop nest over `updates` that adds
// each into a copy of `base` (tensor.insert through scf.for's iter_args;
// one-shot bufferization makes it in place). Both check every index where
// they read it: one outside [0, n) calls the runtime's
// rankc_rt_index_error(check, index, n), which ends the run naming the rank,
// the node and the index (dag-format.md). `check` numbers the checked nodes
// of a program; the program function lists their ids in order
// (`rankc.index_checks`, read into the manifest by comm-lower-to-runtime).
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace rankc::dag {

namespace {

/// An index of `indices` (any integer type) as an `index`, checked against
/// [0, bound): out of range, the runtime ends the run.
Value checkedIndex(OpBuilder &b, Location loc, Value raw, int64_t bound,
                   int32_t check) {
  Type i64 = b.getI64Type();
  Value wide = raw.getType() == i64
                   ? raw
                   : arith::ExtSIOp::create(b, loc, i64, raw).getResult();
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value n = arith::ConstantIntOp::create(b, loc, bound, 64);
  Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, wide,
                                      zero);
  Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, wide,
                                      n);
  Value bad = arith::OrIOp::create(b, loc, below, above);
  auto ifBad = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifBad.thenBlock());
    Value id = arith::ConstantIntOp::create(b, loc, check, 32);
    func::CallOp::create(b, loc, kIndexErrorFunction, TypeRange{},
                         ValueRange{id, wide, n});
  }
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), wide);
}

} // namespace

void declareIndexError(OpBuilder &b, ModuleOp module) {
  if (module.lookupSymbol(kIndexErrorFunction))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), kIndexErrorFunction,
      b.getFunctionType({b.getI32Type(), b.getI64Type(), b.getI64Type()}, {}));
  fn.setPrivate();
}

Value buildTake(OpBuilder &b, Location loc, const Node &n, Value x,
                Value indices, ArrayRef<int64_t> xShape, int32_t check) {
  int64_t axis = n.axis;
  auto idxType = cast<RankedTensorType>(indices.getType());
  int64_t ri = idxType.getRank();
  int64_t rank = int64_t(n.outShape.size());
  MLIRContext *ctx = b.getContext();
  // indices are read at the result's dims [axis, axis + ri).
  SmallVector<AffineExpr> idxDims;
  for (int64_t d = 0; d < ri; ++d)
    idxDims.push_back(getAffineDimExpr(axis + d, ctx));
  AffineMap idxMap = AffineMap::get(rank, 0, idxDims, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value init = tensor::EmptyOp::create(b, loc, n.outShape,
                                       elementType(ctx, n.outDType));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{indices}, ValueRange{init},
      ArrayRef<AffineMap>{idxMap, outMap}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value at = check >= 0
                       ? checkedIndex(nb, l, args[0], xShape[axis], check)
                       : arith::IndexCastOp::create(nb, l, nb.getIndexType(),
                                                    args[0])
                             .getResult();
        SmallVector<Value> coords;
        for (int64_t d = 0; d < axis; ++d)
          coords.push_back(linalg::IndexOp::create(nb, l, d));
        coords.push_back(at);
        for (int64_t d = axis + 1; d < int64_t(xShape.size()); ++d)
          coords.push_back(linalg::IndexOp::create(nb, l, d - 1 + ri));
        Value v = tensor::ExtractOp::create(nb, l, x, coords);
        linalg::YieldOp::create(nb, l, v);
      });
  return generic.getResult(0);
}

Value buildScatterAdd(OpBuilder &b, Location loc, const Node &n, Value base,
                      Value indices, Value updates, int32_t check) {
  int64_t axis = n.axis;
  auto idxType = cast<RankedTensorType>(indices.getType());
  auto updType = cast<RankedTensorType>(updates.getType());
  int64_t ri = idxType.getRank();
  ArrayRef<int64_t> baseShape = n.outShape;
  SmallVector<Value> lbs, ubs, steps;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d : updType.getShape()) {
    lbs.push_back(zero);
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, d));
    steps.push_back(one);
  }
  // Sequential, in row-major order of `updates`: repeated indices add up
  // in that order, as np.add.at does.
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{base},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange acc) -> scf::ValueVector {
        SmallVector<Value> at(ivs.begin() + axis, ivs.begin() + axis + ri);
        Value raw = tensor::ExtractOp::create(nb, l, indices, at);
        Value i = checkedIndex(nb, l, raw, baseShape[axis], check);
        SmallVector<Value> target(ivs.begin(), ivs.begin() + axis);
        target.push_back(i);
        target.append(ivs.begin() + axis + ri, ivs.end());
        Value u = tensor::ExtractOp::create(nb, l, updates, ivs);
        Value old = tensor::ExtractOp::create(nb, l, acc[0], target);
        Value sum = binaryScalar(nb, l, Op::Add, n.outDType, old, u);
        return {tensor::InsertOp::create(nb, l, sum, acc[0], target)};
      });
  return nest.results.front();
}

} // namespace rankc::dag
