//===- GemmMatch.cpp - which contractions are one cuBLASLt GEMM -----------===//
//
// Shared by rankc-gpu-library-calls (which replaces them) and
// rankc-gpu-split-reductions (which must leave them whole).
//
//===----------------------------------------------------------------------===//

#include "GemmMatch.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using rankc::Gemm;

int rankc::gemmDType(Type t) { return t.isF32() ? 6 : t.isF64() ? 7 : -1; }

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

FailureOr<Gemm> rankc::asGemm(linalg::LinalgOp op, bool anyLayout) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  Type elem;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    auto memref = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        (memref && !anyLayout && !memref.getLayout().isIdentity()) ||
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
  // Batches of dot products (no M and no N: a layer norm's or softmax's
  // backward sums of x * dy over a row) are row reductions: a kernel
  // streams them at memory speed, a GEMM of 1 x 1 tiles does not (43 us
  // against ~5 for 2048 rows of 1024 on an H200).
  if (dims->m.empty() && dims->n.empty())
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
    for (AffineExpr e : c.getResults())
      cDims.push_back(cast<AffineDimExpr>(e).getPosition());
    for (AffineExpr e : a.getResults())
      aDims.push_back(cast<AffineDimExpr>(e).getPosition());
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
  return g;
}

