//===- GpuNarrowStorage.cpp - widened bf16 values stored narrow ----------===//
//
// Under autocast (dag-format.md v3) most f32 tensors of a step hold values
// that were rounded to bf16 and widened again: a GEMM's result rounded for
// the next op, an activation recomputed from a bf16 input, the rounded
// logits that log_softmax reads three times. Fusion makes each the result
// of a generic whose body yields `arith.extf %v : bf16 to f32`, and the GPU
// then writes and reads 4 bytes per element where 2 carry the same value.
// This pass makes such a generic yield %v itself (a bf16 result) and each
// generic that reads the result widen it in its own body, where the extf
// costs nothing: on a memory-bound step that halves those tensors' traffic,
// and the values every op sees are bit for bit the same.
//
// Only where every reader can take it: generics reading the tensor as an
// input (through reshapes), other than GEMMs (rankc-gpu-library-calls runs
// those through cuBLASLt, which reads both operands in one type, and
// rankc-gpu-narrow-contractions has already narrowed the ones whose
// operands allow it; batches of dot products are reductions, and read bf16
// like any other). A tensor a part returns or sends, slices, or a
// generic's init keeps its type.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "NarrowOperands.h"
#include "rankc/Transforms/GemmMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUNARROWSTORAGE
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// The widening of a bf16 (f16) value that `g` yields as result `k`, if it
/// is computed in g's body and g's init is not read there.
arith::ExtFOp narrowYielded(linalg::GenericOp g, unsigned k) {
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  auto ext = yield.getOperand(k).getDefiningOp<arith::ExtFOp>();
  if (!ext || ext->getBlock() != g.getBody())
    return {};
  if (!isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(ext.getIn())))
    return {};
  if (g.payloadUsesValueFromOperand(g.getDpsInitOperand(k)))
    return {};
  return ext;
}

/// Result `k` of `g` becomes the narrow value its body widens; its readers
/// widen it. True if it changed anything.
bool narrowResult(linalg::GenericOp g, unsigned k) {
  arith::ExtFOp ext = narrowYielded(g, k);
  if (!ext)
    return false;
  Value v = ext.getIn();
  Value result = g.getResult(k);
  SmallVector<OpOperand *> readers;
  SmallVector<Operation *> reshapes;
  auto notGemm = [](OpOperand &use) {
    return failed(rankc::asGemm(cast<linalg::LinalgOp>(use.getOwner())));
  };
  if (result.use_empty() ||
      !rankc::readersThroughReshapes(result, notGemm, readers, reshapes))
    return false;
  Type narrow = v.getType();
  // The init (not read: narrowYielded) becomes an empty narrow tensor.
  OpBuilder b(g);
  OpOperand *init = g.getDpsInitOperand(k);
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, g.getLoc(), init->get());
  init->set(tensor::EmptyOp::create(b, g.getLoc(), sizes, narrow));
  g.getBody()->getArgument(g.getNumDpsInputs() + k).setType(narrow);
  g.getBody()->getTerminator()->setOperand(k, v);
  if (ext->use_empty())
    ext->erase();
  result.setType(cast<RankedTensorType>(result.getType()).clone(narrow));
  rankc::narrowReshapes(reshapes, narrow);
  for (OpOperand *use : readers) {
    auto reader = cast<linalg::GenericOp>(use->getOwner());
    BlockArgument arg = reader.getMatchingBlockArgument(use);
    Type wide = arg.getType();
    arg.setType(narrow);
    OpBuilder rb = OpBuilder::atBlockBegin(reader.getBody());
    Value widened = arith::ExtFOp::create(rb, reader.getLoc(), wide, arg);
    arg.replaceAllUsesExcept(widened, widened.getDefiningOp());
  }
  return true;
}

struct GpuNarrowStorage
    : rankc::impl::RankcGpuNarrowStorageBase<GpuNarrowStorage> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    bool changed = false;
    for (linalg::GenericOp g : generics)
      for (unsigned k = 0; k < g.getNumResults(); ++k)
        changed |= narrowResult(g, k);
    if (!changed)
      return;
    // A generic that only widened a bf16 tensor is now a copy of it
    // (autocast's rounded logits, read after a GEMM that writes bf16):
    // upstream's canonicalization replaces it by what it copies.
    if (failed(rankc::eraseIdentityCopies(getOperation())))
      signalPassFailure();
  }
};

} // namespace
