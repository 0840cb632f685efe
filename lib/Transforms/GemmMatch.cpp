//===- GemmMatch.cpp - contractions as one library GEMM -------------------===//
//
// Shared by rankc-gpu-library-calls and rankc-cpu-library-calls (which
// replace them by calls of cuBLASLt or a BLAS) and
// rankc-gpu-split-reductions (which must leave them whole).
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Transforms/FirstAccess.h"
#include "rankc_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using rankc::FirstAccess;
using rankc::Gemm;

int rankc::gemmDType(Type t) {
  return t.isF32()    ? RANKC_F32
         : t.isF64()  ? RANKC_F64
         : t.isBF16() ? RANKC_BF16
         : t.isF16()  ? RANKC_F16
                      : -1;
}

namespace {

/// Matches `map`'s results against the groups `first` then `second` (or
/// `second` then `first` if `swapped` may be set), after `lead`. Returns
/// false if the results are not exactly that sequence.
bool matchGroups(AffineMap map, ArrayRef<unsigned> lead,
                 ArrayRef<unsigned> first, ArrayRef<unsigned> second,
                 bool *swapped) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return false;
    dims.push_back(d.getPosition());
  }
  auto matches = [&](ArrayRef<unsigned> x, ArrayRef<unsigned> y) {
    SmallVector<unsigned> want(lead);
    want.append(x.begin(), x.end());
    want.append(y.begin(), y.end());
    return ArrayRef<unsigned>(dims) == ArrayRef<unsigned>(want);
  };
  if (matches(first, second))
    return true;
  if (swapped && matches(second, first)) {
    *swapped = true;
    return true;
  }
  return false;
}

/// The loop dimensions of `map`'s results that belong to `group`, in the
/// order the map lists them.
SmallVector<unsigned> inOrder(AffineMap map, ArrayRef<unsigned> group) {
  SmallVector<unsigned> out;
  for (AffineExpr e : map.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      if (llvm::is_contained(group, d.getPosition()))
        out.push_back(d.getPosition());
  return out;
}

} // namespace

FailureOr<Gemm> rankc::asGemm(linalg::LinalgOp op, bool anyLayout,
                              bool narrowInputs) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    auto memref = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        (memref && !anyLayout && !memref.getLayout().isIdentity()))
      return failure();
  }
  // f32 or f64 throughout; with narrowInputs, also A and B of bf16 (f16)
  // widened into an f32 C (the contraction's body widens them).
  Type aElem = getElementTypeOrSelf(op.getDpsInputs()[0].getType()),
       bElem = getElementTypeOrSelf(op.getDpsInputs()[1].getType()),
       cElem = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  bool same = aElem == bElem && bElem == cElem &&
              (cElem.isF32() || cElem.isF64());
  bool narrow = narrowInputs && aElem == bElem &&
                (aElem.isBF16() || aElem.isF16()) && cElem.isF32();
  if (!same && !narrow)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap a = maps[0], b = maps[1], c = maps[2];
  // The order of each group is the output's (batch, m, n) and A's (k).
  SmallVector<unsigned> batch = inOrder(c, dims->batch),
                        m = inOrder(c, dims->m), n = inOrder(c, dims->n),
                        k = inOrder(a, dims->k);
  if (batch.size() != dims->batch.size() || m.size() != dims->m.size() ||
      n.size() != dims->n.size() || k.size() != dims->k.size())
    return failure();
  Gemm g;
  if (!matchGroups(c, batch, m, n, nullptr) ||
      !matchGroups(a, batch, m, k, &g.transA) ||
      !matchGroups(b, batch, k, n, &g.transB)) {
    // One B for a batch of A's: leading M dimensions that lead A too (a
    // weight applied to [batch, k, seq] activations, stored transposed per
    // batch) are a batch over which B does not move (stride 0).
    if (!batch.empty())
      return failure();
    g = Gemm();
    SmallVector<unsigned> lead;
    SmallVector<unsigned> cDims, aDims;
    // Only plain dimensions lead: a constant index (a broadcast folded
    // into the operand's map) or an expression is no GEMM layout.
    for (auto [map, list] : {std::pair(c, &cDims), std::pair(a, &aDims)})
      for (AffineExpr e : map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d)
          return failure();
        list->push_back(d.getPosition());
      }
    while (lead.size() < m.size() && lead.size() < aDims.size() &&
           cDims[lead.size()] == m[lead.size()] &&
           aDims[lead.size()] == m[lead.size()])
      lead.push_back(m[lead.size()]);
    if (lead.empty())
      return failure();
    batch = lead;
    m.erase(m.begin(), m.begin() + lead.size());
    g.broadcastB = true;
    if (!matchGroups(c, batch, m, n, nullptr) ||
        !matchGroups(a, batch, m, k, &g.transA) ||
        !matchGroups(b, {}, k, n, &g.transB))
      return failure();
  }
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  auto product = [&](ArrayRef<unsigned> group) {
    int64_t p = 1;
    for (unsigned d : group)
      p *= sizes[d];
    return p;
  };
  g.batch = product(batch);
  g.m = product(m);
  g.n = product(n);
  g.k = product(k);
  // Batches of dot products (M and N of one element: none, or unit
  // dimensions of a keepdim row; a layer norm's or softmax's backward sums
  // of x * dy over a row) are row reductions: a kernel streams them at
  // memory speed, a GEMM of 1 x 1 tiles does not (43 us against ~5 for
  // 2048 rows of 1024 on an H200).
  if (g.m == 1 && g.n == 1)
    return failure();
  return g;
}


namespace {

/// Ops before a contraction looked at for its accumulator's fill: a bound,
/// so that the search stays linear in the function.
constexpr int kLookback = 64;

/// Where `acc` is no whole allocation (a function's argument, a subview):
/// the fill right before `op`, only ops that touch no memory between.
linalg::FillOp fillRightBefore(linalg::LinalgOp op, Value acc) {
  // The accumulator, and the buffers it is a reshape of (GpuCollapseDims
  // collapses a contraction's output after its fill was made).
  SmallVector<Value> chain{acc};
  SmallPtrSet<Operation *, 4> reshapes;
  while (Operation *def = chain.back().getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) ||
        def->getBlock() != op->getBlock())
      break;
    reshapes.insert(def);
    chain.push_back(def->getOperand(0));
  }
  // The fill of one of them, with only ops that touch no memory between it
  // and `op` (those reshapes, the operands' own; a bound on the distance
  // keeps this linear).
  linalg::FillOp fill;
  int looked = 0;
  for (Operation *x = op->getPrevNode(); x && !fill && looked < 16;
       x = x->getPrevNode(), ++looked) {
    auto f = dyn_cast<linalg::FillOp>(x);
    if (f && f.hasPureBufferSemantics() &&
        llvm::is_contained(chain, f.getDpsInitOperand(0)->get()))
      fill = f;
    else if (!reshapes.contains(x) && !isMemoryEffectFree(x))
      return {};
  }
  if (!fill)
    return {};
  // No other view of the buffer made before the fill (it could be written
  // through between): every user of the chain is the fill, its reshapes,
  // `op`, an op after it, or an op before the fill that is no view.
  Block *block = op->getBlock();
  for (Value v : chain)
    for (Operation *user : v.getUsers()) {
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return {};
      if (at == fill || at == op || reshapes.contains(at) ||
          op->isBeforeInBlock(at))
        continue;
      if (at->isBeforeInBlock(fill) && !isa<ViewLikeOpInterface>(at))
        continue;
      return {};
    }
  return fill;
}

} // namespace

linalg::FillOp rankc::zeroFillOf(linalg::LinalgOp op, Value acc) {
  // The nearest fill before `op` of the buffer under `acc`'s reshapes.
  Value buffer = rankc::underReshapes(acc);
  linalg::FillOp fill;
  int looked = 0;
  for (Operation *x = op->getPrevNode(); x && !fill && looked < kLookback;
       x = x->getPrevNode(), ++looked)
    if (auto f = dyn_cast<linalg::FillOp>(x);
        f && f.hasPureBufferSemantics() &&
        rankc::underReshapes(f.getOutputs()[0]) == buffer)
      fill = f;
  if (fill) {
    // `op` the first to touch the buffer after it (the layer norm that
    // makes A, the copies that stage the operands may come between), and
    // only as its accumulator.
    if (FailureOr<FirstAccess> access = firstAccessAfterFill(fill, kLookback);
        succeeded(access)) {
      if (access->op != op.getOperation() ||
          !llvm::is_contained(access->views, acc) ||
          llvm::any_of(op->getOpOperands(), [&](OpOperand &o) {
            return op.isDpsInput(&o) &&
                   llvm::is_contained(access->views, o.get());
          }))
        fill = {};
    } else {
      fill = fillRightBefore(op, acc);
    }
  }
  if (!fill ||
      !matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat()))
    return {};
  return fill;
}

void rankc::stageStridedOperands(
    OpBuilder &b, linalg::LinalgOp op,
    function_ref<Value(OpBuilder &, Location, MemRefType)> alloc) {
  Location loc = op.getLoc();
  // Copies go before the fill that starts the accumulator, if any, so that
  // it stays next to `op` (zeroFillOf).
  Operation *before = op;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode()))
    before = fill;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = cast<MemRefType>(operand.get().getType());
    if (type.getLayout().isIdentity())
      continue;
    Value view = operand.get();
    b.setInsertionPoint(op.isDpsInit(&operand) ? op.getOperation() : before);
    Value staged = alloc(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
    linalg::CopyOp::create(b, loc, view, staged);
    operand.set(staged);
    if (op.isDpsInit(&operand)) {
      b.setInsertionPointAfter(op);
      linalg::CopyOp::create(b, loc, staged, view);
    }
  }
}

func::FuncOp rankc::declareGemm(OpBuilder &b, ModuleOp module, StringRef name,
                                bool block, bool bias) {
  if (auto gemm = module.lookupSymbol<func::FuncOp>(name))
    return gemm;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  Type index = b.getIndexType(), i64 = b.getI64Type(), i32 = b.getI32Type();
  SmallVector<Type> args = {index, index, index, i64, i64, i64, i64,
                            i32,   i32,   i32,   i32, i32, i32};
  if (block)
    args.append({i64, i64, i64, i64});
  if (bias)
    args.push_back(index);
  auto gemm = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(args, {}));
  gemm.setPrivate();
  return gemm;
}

func::CallOp rankc::replaceByGemmCall(OpBuilder &b, linalg::LinalgOp op,
                                      const Gemm &g, func::FuncOp gemm,
                                      int32_t precision, Value narrowOut,
                                      Value bias) {
  Location loc = op.getLoc();
  Value a = op.getDpsInputOperand(0)->get(),
        bm = op.getDpsInputOperand(1)->get(), c = op.getDpsInitOperand(0)->get();
  auto aType = cast<MemRefType>(a.getType());
  bool accumulate = true;
  if (linalg::FillOp fill = zeroFillOf(op, c)) {
    fill->erase();
    accumulate = false;
  }
  b.setInsertionPoint(op);
  auto ptr = [&](Value v) -> Value {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  };
  auto i64c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto i32c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  assert((!narrowOut || !accumulate) && "a narrow C starts from zeros");
  assert((!bias || narrowOut) && "a bias goes with a narrow C");
  Value pa = ptr(a), pb = ptr(bm), pc = ptr(narrowOut ? narrowOut : c);
  int32_t dtype = gemmDType(aType.getElementType());
  if (narrowOut)
    dtype |= RANKC_GEMM_NARROW_C;
  SmallVector<Value> args = {pa, pb, pc, i64c(g.batch), i64c(g.m), i64c(g.n),
                             i64c(g.k), i32c(dtype), i32c(accumulate),
                             i32c(g.transA), i32c(g.transB), i32c(precision),
                             i32c(g.broadcastB)};
  if (bias)
    args.push_back(ptr(bias));
  auto call = func::CallOp::create(b, loc, gemm, args);
  op->erase();
  return call;
}
