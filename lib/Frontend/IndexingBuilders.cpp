//===- IndexingBuilders.cpp - take and scatter_add (version 2) ------------===//
//
// take is a linalg.generic over the result that reads x at the index it
// takes from `indices` (tensor.extract in the body: a gather, as torch-mlir
// lowers an embedding). scatter_add is an scf.parallel over `updates` that
// adds each into a copy of `base` with memref.atomic_rmw: the GPU runs it
// as one thread per update (repeated indices meet in the atomics); the CPU
// lowers the loop to sequential loops, so there repeated indices add up in
// row-major order of `updates`, as np.add.at does. The copy is a buffer of
// its own (memref.alloc, filled by materialize_in_destination, read back by
// a `restrict` to_tensor), all inside one scf.execute_region, so that
// partitioning and bufferization see one op with one tensor result.
//
// Both check every index where they read it: one outside [0, n) calls the
// runtime's rankc_rt_index_error(check, index, n), which ends the run
// naming the rank, the node and the index (dag-format.md); on the GPU,
// rankc-gpu-index-checks turns the call into a record the runtime reads
// after the step. The index is clamped to 0 either way, so no access is out
// of bounds while the error is on its way. `check` numbers the checked
// nodes of a program; the program function lists their ids in order
// (`rankc.index_checks`, read into the manifest by convert-comm-to-runtime).
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace rankc::dag {

namespace {

/// An index of `indices` (any integer type) as an `index`, checked against
/// [0, bound): out of range, the runtime ends the run, and the index used
/// meanwhile is 0.
Value checkedIndex(OpBuilder &b, Location loc, Value raw, DType rawType,
                   int64_t bound, int32_t check) {
  Value wide = castScalar(b, loc, raw, rawType, DType::I64);
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
  Value safe = arith::SelectOp::create(b, loc, bad, zero, wide);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), safe);
}

/// An index known to be in range, as an `index`.
Value uncheckedIndex(OpBuilder &b, Location loc, Value raw, DType rawType) {
  if (isUnsigned(rawType))
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), raw);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
}

} // namespace

void checkNonzeroDivisor(OpBuilder &b, Location loc, Value divisor,
                         int32_t check) {
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(divisor.getType()));
  Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor,
                                    zero);
  auto ifBad = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifBad.thenBlock());
  Value id = arith::ConstantIntOp::create(b, loc, check, 32);
  Value none = arith::ConstantIntOp::create(b, loc, 0, 64);
  func::CallOp::create(b, loc, kIndexErrorFunction, TypeRange{},
                       ValueRange{id, none, none});
}

namespace {

/// Adds `u` to `buffer[at]` atomically: updates of one scatter_add may run
/// concurrently (GPU threads). (scatter_add takes no bool: DagChecker.)
void atomicAdd(OpBuilder &b, Location loc, DType t, Value u, Value buffer,
               ValueRange at) {
  auto kind = isFloat(t) ? arith::AtomicRMWKind::addf
                         : arith::AtomicRMWKind::addi;
  memref::AtomicRMWOp::create(b, loc, kind, u, buffer, at);
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
                Value indices, DType indexType, ArrayRef<int64_t> xShape,
                int32_t check) {
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
        Value at = check >= 0 ? checkedIndex(nb, l, args[0], indexType,
                                             xShape[axis], check)
                              : uncheckedIndex(nb, l, args[0], indexType);
        if (xShape[axis] == 0) {
          // Nothing to take from: the check fails the run; until then, 0.
          Type t = elementType(ctx, n.outDType);
          linalg::YieldOp::create(nb, l,
                                  Value(arith::ConstantOp::create(
                                      nb, l, t, nb.getZeroAttr(t))));
          return;
        }
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
                      Value indices, DType indexType, Value updates,
                      int32_t check) {
  int64_t axis = n.axis;
  auto idxType = cast<RankedTensorType>(indices.getType());
  auto updType = cast<RankedTensorType>(updates.getType());
  auto baseType = cast<RankedTensorType>(base.getType());
  int64_t ri = idxType.getRank();
  ArrayRef<int64_t> baseShape = n.outShape;
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{baseType});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&region.getRegion().emplaceBlock());
  auto bufferType =
      MemRefType::get(baseType.getShape(), baseType.getElementType());
  Value buffer = memref::AllocOp::create(b, loc, bufferType);
  bufferization::MaterializeInDestinationOp::create(
      b, loc, /*result=*/Type(), base, buffer, /*restrict=*/true,
      /*writable=*/true);
  if (updType.getNumElements() != 0 && baseShape[axis] != 0) {
    SmallVector<Value> lbs, ubs, steps;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t d : updType.getShape()) {
      lbs.push_back(zero);
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, d));
      steps.push_back(one);
    }
    auto add = [&](OpBuilder &nb, Location l, ValueRange ivs) {
      SmallVector<Value> at(ivs.begin() + axis, ivs.begin() + axis + ri);
      Value raw = tensor::ExtractOp::create(nb, l, indices, at);
      Value i = checkedIndex(nb, l, raw, indexType, baseShape[axis], check);
      SmallVector<Value> target(ivs.begin(), ivs.begin() + axis);
      target.push_back(i);
      target.append(ivs.begin() + axis + ri, ivs.end());
      Value u = tensor::ExtractOp::create(nb, l, updates, ivs);
      atomicAdd(nb, l, n.outDType, u, buffer, target);
    };
    // 0-d updates (a vector's one element at a 0-d index): one add, no
    // loop (scf.parallel needs at least one).
    if (updType.getRank() == 0)
      add(b, loc, ValueRange());
    else
      scf::ParallelOp::create(b, loc, lbs, ubs, steps, add);
  } else if (updType.getNumElements() != 0) {
    // No row to add into: every index is out of range. Checked all the
    // same (the first one fails the run), with nothing to add.
    SmallVector<Value> zeros(ri, arith::ConstantIndexOp::create(b, loc, 0));
    Value raw = tensor::ExtractOp::create(b, loc, indices, zeros);
    (void)checkedIndex(b, loc, raw, indexType, 0, check);
  }
  Value result = bufferization::ToTensorOp::create(
      b, loc, baseType, buffer, /*restrict=*/true, /*writable=*/true);
  scf::YieldOp::create(b, loc, result);
  return region.getResult(0);
}

} // namespace rankc::dag
