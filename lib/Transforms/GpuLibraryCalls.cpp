//===- GpuLibraryCalls.cpp - contractions to cuBLASLt ---------------------===//
//
// On the GPU, contractions run faster in a tuned library than in any kernel
// rankc-linalg-to-gpu-loops generates: every contraction (a linalg.matmul,
// a batch_matmul, or an einsum's generic: linalg::inferContractionDims) on
// device buffers of f32 or f64 with identity layouts that is one batched
// GEMM, possibly with transposed operands, once each of its batch, M, N
// and K groups of loop dimensions is collapsed, becomes a call of the
// runtime's rankc_rt_gemm (runtime/CublasLt.cpp), which runs cuBLASLt on
// the stream the kernels use. The fill of zeros that starts the
// accumulator is folded into the call (beta = 0). Anything else (f16/bf16,
// whose contractions accumulate in their own type here; strided views;
// operands whose groups interleave) stays for the kernel generator.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPULIBRARYCALLS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// The runtime's dtype code of f32 / f64 (rankc_runtime.h), or -1.
int gemmDType(Type t) { return t.isF32() ? 6 : t.isF64() ? 7 : -1; }

/// A contraction as one (batched) row-major GEMM:
/// C[b, m, n] (+)= sum_k A[b, m, k] B[b, k, n], where each of b, m, n, k
/// may stand for several loop dimensions that are contiguous in every
/// operand, and A may be stored as [b, k, m], B as [b, n, k] (transposed).
struct Gemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool transA = false, transB = false;
};

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

/// `op` as a GEMM on identity-layout buffers of f32 or f64, or failure.
FailureOr<Gemm> asGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  Type elem;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        (elem && type.getElementType() != elem))
      return failure();
    elem = type.getElementType();
  }
  if (gemmDType(elem) < 0)
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
      !matchGroups(b, batch, k, n, &g.transB))
    return failure();
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
  return g;
}

/// The fill of zeros right before `op` that starts its accumulator, if any.
linalg::FillOp zeroFillOf(linalg::LinalgOp op, Value acc) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != acc)
    return {};
  return matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat())
             ? fill
             : linalg::FillOp();
}

struct GpuLibraryCallsPass
    : public rankc::impl::RankcGpuLibraryCallsBase<GpuLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (FailureOr<Gemm> g = asGemm(op); succeeded(g))
        gemms.push_back({op, *g});
    });
    if (gemms.empty())
      return;
    OpBuilder b(module.getContext());
    Type index = b.getIndexType(), i64 = b.getI64Type(), i32 = b.getI32Type();
    auto gemm = module.lookupSymbol<func::FuncOp>("rankc_rt_gemm");
    if (!gemm) {
      b.setInsertionPointToEnd(module.getBody());
      gemm = func::FuncOp::create(
          b, module.getLoc(), "rankc_rt_gemm",
          b.getFunctionType(
              {index, index, index, i64, i64, i64, i64, i32, i32, i32, i32}, {}));
      gemm.setPrivate();
    }
    for (auto [op, g] : gemms) {
      Location loc = op.getLoc();
      Value a = op.getDpsInputOperand(0)->get(),
            bm = op.getDpsInputOperand(1)->get(),
            c = op.getDpsInitOperand(0)->get();
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
      Value pa = ptr(a), pb = ptr(bm), pc = ptr(c);
      func::CallOp::create(
          b, loc, gemm,
          ValueRange{pa, pb, pc, i64c(g.batch), i64c(g.m), i64c(g.n),
                     i64c(g.k), i32c(gemmDType(aType.getElementType())),
                     i32c(accumulate), i32c(g.transA), i32c(g.transB)});
      op->erase();
    }
  }
};

} // namespace
