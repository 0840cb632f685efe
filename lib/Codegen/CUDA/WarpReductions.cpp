//===- WarpReductions.cpp - a row's reduction on one warp -----------------===//
//
// (What and why: WarpReductions.h.)
//
// The lanes of a warp must all reach the shuffles: the lane loop is the
// innermost of the scf.parallel, 32 iterations, which
// rankc-linalg-to-gpu-loops tiles whole onto thread x (a warp is 32
// consecutive x threads of one y and z); its in-bounds guards, where a tile
// overhangs, depend only on the outer (output) loops, the same for every
// lane of a warp. Lanes past the end of a row (a length that 32 does not
// divide) contribute the combiner's neutral element.
//
// Sums are combined in another order than on the CPU (each lane's strided
// elements, then a butterfly across lanes): equal within rounding, exact for
// integers, max and min, as with the split reductions.
//
//===----------------------------------------------------------------------===//

#include "WarpReductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kMinReduced = 64;
/// Outputs enough for warps to fill the GPU (8 per block) whatever the
/// row's length; with fewer, rows up to kShortRow (64 loads a lane) still
/// take a warp each: one kernel instead of a split's two or three.
constexpr int64_t kMinOutputs = 256;
constexpr int64_t kShortRow = 64 * kWarp;

/// The one op that combines `op`'s accumulator with each element, if it is
/// one binary op of the accumulator and another value, yielded directly.
Operation *combinerOf(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  if (op.getNumDpsInits() != 1 ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  Operation *combiner = combiners.front();
  BlockArgument acc = op.getRegionOutputArgs()[0];
  if (combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !acc.hasOneUse() || combiner->getOperand(0) == combiner->getOperand(1) ||
      !llvm::is_contained(combiner->getOperands(), acc) ||
      op.getBody()->getTerminator()->getOperand(0) != combiner->getResult(0))
    return nullptr;
  return combiner;
}

} // namespace

bool rankc::reducesContiguousDim(linalg::LinalgOp op, unsigned dim) {
  OpOperand *largest = nullptr;
  int64_t largestSize = -1;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(in->get().getType());
    if (!type || !type.hasStaticShape())
      continue;
    if (type.getNumElements() > largestSize) {
      largest = in;
      largestSize = type.getNumElements();
    }
  }
  if (!largest)
    return false;
  AffineMap map = op.getMatchingIndexingMap(largest);
  return map.getNumResults() > 0 &&
         map.getResults().back() == getAffineDimExpr(dim, op.getContext());
}

bool rankc::warpSized(int64_t outputs, int64_t reduced) {
  return reduced >= kMinReduced &&
         (outputs >= kMinOutputs || reduced <= kShortRow);
}

bool rankc::warpReducible(linalg::GenericOp op) {
  if (op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  unsigned dim = reduced.front();
  int64_t outputs = 1;
  for (auto [i, range] : llvm::enumerate(ranges))
    if (i != dim)
      outputs *= range;
  if (!warpSized(outputs, ranges[dim]) || !reducesContiguousDim(op, dim))
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  Type element = getElementTypeOrSelf(init->get().getType());
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() != 32 ||
      !op.getMatchingIndexingMap(init).isProjectedPermutation())
    return false;
  Operation *combiner = combinerOf(op);
  return combiner && arith::getNeutralElement(combiner).has_value();
}

SmallVector<Value> rankc::indicesAt(OpBuilder &b, Location loc, AffineMap map,
                                    ArrayRef<Value> idx) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      indices.push_back(idx[d.getPosition()]);
      continue;
    }
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), idx));
  }
  return indices;
}

SmallVector<Value> rankc::cloneBodyAt(OpBuilder &b, linalg::GenericOp op,
                                      ArrayRef<Value> idx, IRMapping &m) {
  Block *body = op.getBody();
  for (Operation &x : body->without_terminator()) {
    if (auto i = dyn_cast<linalg::IndexOp>(x)) {
      m.map(i.getResult(), idx[i.getDim()]);
      continue;
    }
    b.clone(x, m);
  }
  SmallVector<Value> yielded;
  for (Value v : body->getTerminator()->getOperands())
    yielded.push_back(m.lookupOrDefault(v));
  return yielded;
}

void rankc::loadInputsAt(OpBuilder &b, Location loc, linalg::GenericOp op,
                         ArrayRef<Value> idx, IRMapping &m) {
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value arg = op.getBody()->getArgument(in->getOperandNumber());
    if (m.contains(arg))
      continue;
    Value v = in->get();
    if (isa<MemRefType>(v.getType()))
      v = memref::LoadOp::create(
          b, loc, v, indicesAt(b, loc, op.getMatchingIndexingMap(in), idx));
    m.map(arg, v);
  }
}

Value rankc::combineWith(OpBuilder &b, linalg::GenericOp op, Value acc,
                         Value x) {
  Operation *combiner = combinerOf(op);
  BlockArgument accArg = op.getRegionOutputArgs()[0];
  IRMapping m;
  for (Value operand : combiner->getOperands())
    m.map(operand, operand == accArg ? acc : x);
  return b.clone(*combiner, m)->getResult(0);
}

Value rankc::rowTotalOnLanes(OpBuilder &b, Location loc, linalg::GenericOp op,
                             ArrayRef<Value> at, Value lane, int64_t lanes,
                             const InputsAt &inputs) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  unsigned dim = reduced.front();
  int64_t length = ranges[dim];
  BlockArgument accArg = op.getRegionOutputArgs()[0];
  TypedAttr neutral = *arith::getNeutralElement(combinerOf(op));
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  // Each lane: elements lane, lane + lanes, ... of the row.
  Value first = arith::ConstantOp::create(b, loc, neutral);
  int64_t trips = llvm::divideCeil(length, lanes);
  auto loop = scf::ForOp::create(
      b, loc, index(b, 0), index(b, trips), index(b, 1), ValueRange{first},
      [&](OpBuilder &b, Location l, Value j, ValueRange iter) {
        Value k = arith::AddIOp::create(
            b, l, arith::MulIOp::create(b, l, j, index(b, lanes)), lane);
        auto element = [&](OpBuilder &b) -> Value {
          SmallVector<Value> idx(at);
          idx[dim] = k;
          IRMapping m;
          inputs(b, idx, m);
          m.map(accArg, iter[0]);
          return cloneBodyAt(b, op, idx, m)[0];
        };
        if (length % lanes == 0) {
          scf::YieldOp::create(b, l, element(b));
          return;
        }
        Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                             k, index(b, length));
        auto guarded = scf::IfOp::create(
            b, l, inside,
            [&](OpBuilder &b, Location l) {
              scf::YieldOp::create(b, l, element(b));
            },
            [&](OpBuilder &b, Location l) {
              scf::YieldOp::create(b, l, iter[0]);
            });
        scf::YieldOp::create(b, l, guarded.getResult(0));
      });

  // The lanes' partials combined: after the butterfly every lane holds the
  // row's total.
  Value acc = loop.getResult(0);
  if (lanes == 1)
    return acc;
  Value width = arith::ConstantIntOp::create(b, loc, lanes, 32);
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    Value by = arith::ConstantIntOp::create(b, loc, offset, 32);
    auto shuffled =
        gpu::ShuffleOp::create(b, loc, acc, by, width, gpu::ShuffleMode::XOR);
    acc = combineWith(b, op, acc, shuffled.getShuffleResult());
  }
  return acc;
}

FailureOr<scf::ParallelOp> rankc::lowerAsWarpReduction(RewriterBase &rewriter,
                                                       linalg::GenericOp op,
                                                       Value start) {
  if (!op.hasPureBufferSemantics() || !warpReducible(op))
    return failure();
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> parallel, reduced;
  op.getParallelDims(parallel);
  op.getReductionDims(reduced);
  unsigned dim = reduced.front();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Outputs, then the lanes.
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned p : parallel) {
    lbs.push_back(index(rewriter, 0));
    ubs.push_back(index(rewriter, ranges[p]));
    steps.push_back(index(rewriter, 1));
  }
  lbs.push_back(index(rewriter, 0));
  ubs.push_back(index(rewriter, kWarp));
  steps.push_back(index(rewriter, 1));
  auto par = scf::ParallelOp::create(rewriter, loc, lbs, ubs, steps);
  rewriter.setInsertionPoint(par.getBody()->getTerminator());
  SmallVector<Value> ivs(par.getInductionVars());
  Value lane = ivs.back();
  SmallVector<Value> at(op.getNumLoops());
  for (auto [i, p] : llvm::enumerate(parallel))
    at[p] = ivs[i];

  Value acc = rowTotalOnLanes(
      rewriter, loc, op, at, lane, kWarp,
      [&](OpBuilder &b, ArrayRef<Value> idx, IRMapping &m) {
        loadInputsAt(b, loc, op, idx, m);
      });
  Value lead = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                     lane, index(rewriter, 0));
  OpOperand *init = op.getDpsInitOperand(0);
  scf::IfOp::create(rewriter, loc, lead, [&](OpBuilder &b, Location l) {
    SmallVector<Value> idx(at);
    idx[dim] = index(b, 0); // (the output's map does not read it)
    SmallVector<Value> indices =
        indicesAt(b, l, op.getMatchingIndexingMap(init), idx);
    Value from =
        start ? start : memref::LoadOp::create(b, l, init->get(), indices);
    memref::StoreOp::create(b, l, combineWith(b, op, from, acc), init->get(),
                            indices);
    scf::YieldOp::create(b, l);
  });
  rewriter.eraseOp(op);
  return par;
}
