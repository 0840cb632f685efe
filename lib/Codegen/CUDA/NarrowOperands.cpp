//===- NarrowOperands.cpp - a narrow contraction reads its bf16 inputs ----===//
//
// A contraction that rankc-gpu-narrow-contractions marks reads f32 tensors
// that are bf16 (f16) values widened: each one an extf kernel's output,
// twice the bytes, which cuBLASLt then reads as f32 (its fast-16BF compute
// on f32 inputs ran the GPT's GEMMs at a fifth of the tensor cores' rate).
// Where the widening is the operand's producer, the contraction reads the
// narrow tensor itself and widens each element in its own body:
//  - a generic that only widens its one input (possibly transposing it) is
//    fused into the contraction (upstream's elementwise fusion: the maps
//    compose, the extf moves into the body);
//  - a result that is extf of a value the same producer also yields as
//    another result (a layer norm's multi-output generic yields y in bf16
//    and extf(y)), or of an input read as the result is written (a widened
//    copy), possibly reshaped, is replaced by that narrow value.
// rankc-gpu-library-calls then calls cuBLASLt on bf16 (f16) A and B.
//
//===----------------------------------------------------------------------===//

#include "NarrowOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {

/// Whether `g` only widens its one input to `narrow`'s f32.
bool onlyWidens(linalg::GenericOp g, FloatType narrow) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 ||
      getElementTypeOrSelf(g.getDpsInputs()[0].getType()) != narrow)
    return false;
  Block *body = g.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto ext = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn() == body->getArgument(0) &&
         &body->front() == ext.getOperation();
}

/// Where `v` is the widening of a narrow value the same generic yields as
/// another result, or reads as an input with the same map: that value, and
/// the reshapes from it to `v`.
struct Sibling {
  Value narrowResult;
  SmallVector<Operation *> reshapes; // outermost first
};

std::optional<Sibling> findSibling(Value v, FloatType narrow) {
  Sibling s;
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp())) {
    s.reshapes.push_back(v.getDefiningOp());
    v = v.getDefiningOp()->getOperand(0);
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g)
    return std::nullopt;
  unsigned i = cast<OpResult>(v).getResultNumber();
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  auto ext = yield.getOperand(i).getDefiningOp<arith::ExtFOp>();
  if (!ext || ext.getIn().getType() != narrow)
    return std::nullopt;
  AffineMap map = g.getIndexingMapMatchingResult(g->getResult(i));
  for (auto [j, y] : llvm::enumerate(yield.getOperands()))
    if (y == ext.getIn() &&
        g.getIndexingMapMatchingResult(g->getResult(j)) == map)
      s.narrowResult = g->getResult(j);
  // Or an input, read as the result is written: the generic widens a copy
  // of it (the same elements at the same places).
  if (auto arg = dyn_cast<BlockArgument>(ext.getIn());
      !s.narrowResult && arg && arg.getOwner() == g.getBody() &&
      arg.getArgNumber() < g.getNumDpsInputs() &&
      g.getMatchingIndexingMap(g.getDpsInputOperand(arg.getArgNumber())) ==
          map)
    s.narrowResult = g.getDpsInputs()[arg.getArgNumber()];
  if (!s.narrowResult)
    return std::nullopt;
  return s;
}

/// The sibling under `v`'s reshapes, built before `before`.
Value buildSibling(const Sibling &s, FloatType narrow, Operation *before,
                   RewriterBase &rewriter) {
  Value result = s.narrowResult;
  rewriter.setInsertionPoint(before);
  for (Operation *r : llvm::reverse(s.reshapes)) {
    auto type = cast<RankedTensorType>(r->getResult(0).getType());
    auto narrowType = type.clone(narrow);
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(r))
      result = tensor::CollapseShapeOp::create(rewriter, r->getLoc(),
                                               narrowType, result,
                                               c.getReassociationIndices());
    else {
      auto e = cast<tensor::ExpandShapeOp>(r);
      result = tensor::ExpandShapeOp::create(
          rewriter, r->getLoc(), narrowType, result,
          e.getReassociationIndices(), e.getMixedOutputShape());
    }
  }
  return result;
}

/// Whether input `i` of `g` can be read narrow (see the file comment).
bool canReadNarrow(linalg::GenericOp g, unsigned i, FloatType narrow) {
  Value v = g.getDpsInputs()[i];
  if (getElementTypeOrSelf(v.getType()) == narrow || findSibling(v, narrow))
    return true;
  // (Only its one use: a producer with others would stay as a second
  // result of the fused op, no GEMM.)
  auto producer = v.getDefiningOp<linalg::GenericOp>();
  return producer && onlyWidens(producer, narrow) && v.hasOneUse() &&
         linalg::areElementwiseOpsFusable(&g->getOpOperand(i));
}

/// `op` reads `narrowValue` as its input `index` and widens it in its
/// body.
void readNarrow(linalg::GenericOp op, unsigned index, Value narrowValue,
                RewriterBase &rewriter) {
  Block *body = op.getBody();
  BlockArgument arg = body->getArgument(index);
  Type wide = arg.getType();
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperand(index, narrowValue);
    arg.setType(getElementTypeOrSelf(narrowValue.getType()));
  });
  rewriter.setInsertionPointToStart(body);
  auto ext = arith::ExtFOp::create(rewriter, op.getLoc(), wide, arg);
  rewriter.replaceAllUsesExcept(arg, ext.getResult(), ext);
}

} // namespace

void rankc::readNarrowOperands(linalg::LinalgOp op, FloatType narrow,
                               RewriterBase &rewriter) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  // Both or neither: cuBLASLt takes A and B of one type.
  if (!g || g.getNumDpsInputs() != 2 || !canReadNarrow(g, 0, narrow) ||
      !canReadNarrow(g, 1, narrow))
    return;
  for (unsigned i = 0; i < 2; ++i) {
    Value v = g.getDpsInputs()[i];
    if (getElementTypeOrSelf(v.getType()) == narrow)
      continue;
    if (std::optional<Sibling> s = findSibling(v, narrow)) {
      readNarrow(g, i, buildSibling(*s, narrow, g, rewriter), rewriter);
      continue;
    }
    rewriter.setInsertionPoint(g);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, &g->getOpOperand(i));
    if (failed(fused))
      continue; // (checked fusable: not expected; the op stays correct)
    auto result = cast<linalg::GenericOp>(fused->fusedOp);
    for (NamedAttribute a : g->getDiscardableAttrs())
      result->setAttr(a.getName(), a.getValue());
    for (auto [from, to] : fused->replacements)
      if (from.getDefiningOp() == g.getOperation())
        rewriter.replaceAllUsesWith(from, to);
    rewriter.eraseOp(g);
    g = result;
  }
}
