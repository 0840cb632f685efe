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

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using rankc::NarrowCopies;

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

/// Whether input `i` of `g` is the one use of a generic that only widens
/// (possibly transposing) and can be fused into `g`.
bool fusesWidening(linalg::GenericOp g, unsigned i, FloatType narrow) {
  // (Only its one use: a producer with others would stay as a second
  // result of the fused op, no GEMM.)
  Value v = g.getDpsInputs()[i];
  auto producer = v.getDefiningOp<linalg::GenericOp>();
  return producer && onlyWidens(producer, narrow) && v.hasOneUse() &&
         linalg::areElementwiseOpsFusable(&g->getOpOperand(i));
}

/// Whether input `i` of `g` can be read narrow (see the file comment).
bool canReadNarrow(linalg::GenericOp g, unsigned i, NarrowCopies &copies) {
  Value v = g.getDpsInputs()[i];
  return fusesWidening(g, i, copies.type()) || copies.available(v);
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

bool rankc::exactIn(Attribute a, FloatType narrow) {
  auto f = dyn_cast_or_null<FloatAttr>(a);
  if (!f)
    return false;
  bool losesInfo = false;
  APFloat x = f.getValue();
  x.convert(narrow.getFloatSemantics(), APFloat::rmNearestTiesToEven,
            &losesInfo);
  return !losesInfo;
}

bool rankc::yieldsNarrowFrom(linalg::GenericOp g, Value y, FloatType narrow,
                             int depth, int maxDepth,
                             function_ref<bool(Value, int)> fromTensor) {
  if (depth > maxDepth)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(y))
    return arg.getOwner() == g.getBody() &&
           fromTensor(g->getOperand(arg.getArgNumber()), depth);
  Operation *def = y.getDefiningOp();
  if (auto ext = dyn_cast<arith::ExtFOp>(def))
    return ext.getIn().getType() == narrow;
  if (auto extract = dyn_cast<tensor::ExtractOp>(def))
    return !g->isAncestor(extract.getTensor().getParentBlock()->getParentOp()) &&
           fromTensor(extract.getTensor(), depth);
  if (auto select = dyn_cast<arith::SelectOp>(def))
    return yieldsNarrowFrom(g, select.getTrueValue(), narrow, depth + 1,
                            maxDepth, fromTensor) &&
           yieldsNarrowFrom(g, select.getFalseValue(), narrow, depth + 1,
                            maxDepth, fromTensor);
  Attribute c;
  return matchPattern(y, m_Constant(&c)) && exactIn(c, narrow);
}

/// One result, every loop parallel, and an init whose values the body
/// never reads.
static bool isElementMover(linalg::GenericOp g) {
  return g.getNumResults() == 1 && g.getNumReductionLoops() == 0 &&
         g.hasPureTensorSemantics() &&
         !g.payloadUsesValueFromOperand(g.getDpsInitOperand(0));
}

/// How deep available() follows producers: a convolution's chain is a few
/// ops long (widening, reshapes, pad, im2col).
static constexpr int kMaxCopyDepth = 16;

bool rankc::NarrowCopies::available(Value v, int depth) {
  if (getElementTypeOrSelf(v.getType()) == narrow || built.count(v))
    return true;
  if (depth > kMaxCopyDepth || !isa<RankedTensorType>(v.getType()))
    return false;
  if (findSibling(v, narrow))
    return true;
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
    return available(def->getOperand(0), depth + 1);
  if (auto ext = dyn_cast_or_null<arith::ExtFOp>(def))
    return getElementTypeOrSelf(ext.getIn().getType()) == narrow;
  // A concat as insert_slices (q's, k's and v's gradients side by side,
  // read by the qkv projection's weight-gradient GEMM): each piece, and
  // what it goes into unless that is an empty tensor.
  if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def))
    return available(insert.getSource(), depth + 1) &&
           (insert.getDest().getDefiningOp<tensor::EmptyOp>() ||
            available(insert.getDest(), depth + 1));
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || !isElementMover(g))
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return yieldsNarrowFrom(g, yield.getOperand(0), narrow, depth + 1,
                          kMaxCopyDepth, [&](Value t, int at) {
                            return available(t, at);
                          });
}

Value rankc::NarrowCopies::build(Value v, RewriterBase &rewriter) {
  if (getElementTypeOrSelf(v.getType()) == narrow)
    return v;
  if (Value done = built.lookup(v))
    return done;
  OpBuilder::InsertionGuard guard(rewriter);
  Operation *def = v.getDefiningOp();
  Value result;
  if (std::optional<Sibling> s = findSibling(v, narrow)) {
    result = buildSibling(*s, narrow, def->getNextNode(), rewriter);
  } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
    Value from = build(def->getOperand(0), rewriter);
    auto type = cast<RankedTensorType>(v.getType()).clone(narrow);
    rewriter.setInsertionPointAfter(def);
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      result = tensor::CollapseShapeOp::create(rewriter, c.getLoc(), type,
                                               from,
                                               c.getReassociationIndices());
    else {
      auto e = cast<tensor::ExpandShapeOp>(def);
      result = tensor::ExpandShapeOp::create(rewriter, e.getLoc(), type, from,
                                             e.getReassociationIndices(),
                                             e.getMixedOutputShape());
    }
  } else if (auto ext = dyn_cast<arith::ExtFOp>(def)) {
    result = ext.getIn();
  } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    Value source = build(insert.getSource(), rewriter);
    Value dest = insert.getDest();
    rewriter.setInsertionPointAfter(def);
    if (auto empty = dest.getDefiningOp<tensor::EmptyOp>())
      dest = tensor::EmptyOp::create(rewriter, insert.getLoc(),
                                     empty.getType().getShape(), narrow,
                                     empty.getDynamicSizes());
    else
      dest = build(dest, rewriter);
    // (Still after `def`, and after the new empty tensor.)
    result = tensor::InsertSliceOp::create(
        rewriter, insert.getLoc(), source, dest, insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
  } else {
    result = buildGeneric(cast<linalg::GenericOp>(def), rewriter);
  }
  built[v] = result;
  return result;
}

/// `g` writing `narrow` elements: each input and each tensor it extracts
/// from read narrow where they have narrow copies (widened in the body),
/// the yielded value (exactly narrow) truncated.
Value rankc::NarrowCopies::buildGeneric(linalg::GenericOp g,
                                        RewriterBase &rewriter) {
  SmallVector<Value> inputs;
  SmallVector<bool> widen;
  for (Value in : g.getDpsInputs()) {
    bool f32 = getElementTypeOrSelf(in.getType()).isF32() && available(in);
    inputs.push_back(f32 ? build(in, rewriter) : in);
    widen.push_back(f32);
  }
  SmallVector<std::pair<tensor::ExtractOp, Value>> extracts;
  g.getBody()->walk([&](tensor::ExtractOp e) {
    Value t = e.getTensor();
    if (getElementTypeOrSelf(t.getType()).isF32() &&
        !g->isAncestor(t.getParentBlock()->getParentOp()) && available(t))
      extracts.push_back({e, build(t, rewriter)});
  });
  Location loc = g.getLoc();
  auto type = cast<RankedTensorType>(g->getResult(0).getType());
  rewriter.setInsertionPointAfter(g);
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), narrow);
  auto copy = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type.clone(narrow)}, inputs, ValueRange{init},
      g.getIndexingMapsArray(), g.getIteratorTypesArray());
  IRMapping map;
  g.getRegion().cloneInto(&copy.getRegion(), map);
  Block *body = copy.getBody();
  body->getArgument(inputs.size()).setType(narrow); // (never read)
  rewriter.setInsertionPointToStart(body);
  for (auto [i, w] : llvm::enumerate(widen)) {
    if (!w)
      continue;
    BlockArgument arg = body->getArgument(i);
    arg.setType(narrow);
    auto ext = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), arg);
    rewriter.replaceAllUsesExcept(arg, ext.getResult(), ext);
  }
  for (auto [e, t] : extracts) {
    auto clone = cast<tensor::ExtractOp>(map.lookup(e.getOperation()));
    rewriter.setInsertionPoint(clone);
    Value x = tensor::ExtractOp::create(rewriter, clone.getLoc(), t,
                                        clone.getIndices());
    rewriter.replaceOp(clone, arith::ExtFOp::create(rewriter, clone.getLoc(),
                                                    rewriter.getF32Type(), x));
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  rewriter.setInsertionPoint(yield);
  Value y = arith::TruncFOp::create(rewriter, loc, narrow, yield.getOperand(0));
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, y); });
  return copy.getResult(0);
}

void rankc::readNarrowOperands(linalg::LinalgOp op, NarrowCopies &copies,
                               RewriterBase &rewriter) {
  FloatType narrow = copies.type();
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  // Both or neither: cuBLASLt takes A and B of one type.
  if (!g || g.getNumDpsInputs() != 2 || !canReadNarrow(g, 0, copies) ||
      !canReadNarrow(g, 1, copies))
    return;
  for (unsigned i = 0; i < 2; ++i) {
    Value v = g.getDpsInputs()[i];
    if (getElementTypeOrSelf(v.getType()) == narrow)
      continue;
    // A sibling first (no kernel), then fusion (no kernel, no tensor),
    // then a narrow copy (a kernel that writes half the bytes).
    if (findSibling(v, narrow) || !fusesWidening(g, i, narrow)) {
      readNarrow(g, i, copies.build(v, rewriter), rewriter);
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

namespace {

/// A result of a generic on tensors that yields one of its inputs unchanged,
/// both read and written through identity maps with one type: that input
/// (upstream's canonicalization then drops the unused result). What is
/// left of a multi-output op one of whose results only rounded a GEMM's
/// result, once the GEMM writes it rounded.
struct ForwardYieldedInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    bool changed = false;
    for (auto [i, v] : llvm::enumerate(yield.getValues())) {
      auto arg = dyn_cast<BlockArgument>(v);
      Value result = op->getResult(i);
      if (!arg || arg.getOwner() != op.getBody() || result.use_empty())
        continue;
      OpOperand *in = op.getMatchingOpOperand(arg);
      if (!op.isDpsInput(in) || in->get().getType() != result.getType() ||
          !op.getMatchingIndexingMap(in).isIdentity() ||
          !op.getIndexingMapMatchingResult(cast<OpResult>(result)).isIdentity())
        continue;
      rewriter.replaceAllUsesWith(result, in->get());
      changed = true;
    }
    return success(changed);
  }
};

} // namespace

LogicalResult rankc::eraseIdentityCopies(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  linalg::GenericOp::getCanonicalizationPatterns(patterns, root->getContext());
  // (Then inputs no longer read and results no longer used go.)
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  patterns.add<ForwardYieldedInputs>(root->getContext());
  return applyPatternsGreedily(root, std::move(patterns));
}

bool rankc::readersThroughReshapes(
    Value v, llvm::function_ref<bool(OpOperand &)> accepts,
    SmallVectorImpl<OpOperand *> &readers,
    SmallVectorImpl<Operation *> &reshapes) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
      reshapes.push_back(user);
      if (!readersThroughReshapes(user->getResult(0), accepts, readers,
                                  reshapes))
        return false;
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (!g || !g.isDpsInput(&use) || !accepts(use))
      return false;
    readers.push_back(&use);
  }
  return true;
}

void rankc::narrowReshapes(ArrayRef<Operation *> reshapes, Type narrow) {
  for (Operation *r : reshapes) {
    Value v = r->getResult(0);
    v.setType(cast<RankedTensorType>(v.getType()).clone(narrow));
  }
}
