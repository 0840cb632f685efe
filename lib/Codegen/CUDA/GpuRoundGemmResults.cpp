//===- GpuRoundGemmResults.cpp - bf16 GEMMs that write bf16 ---------------===//
//
// Under autocast a matmul's result is bf16: dag-format.md v3 writes it as
// an f32 contraction whose readers round it (`arith.truncf` to bf16), and
// after fusion that rounding sits in the body of every op that reads it.
// cuBLASLt then writes 4 bytes per element, and each reader reads 4, of a
// value that has 2: a GPT step's 117 bf16 GEMMs write 870 MB of f32.
//
// Here a GEMM marked by rankc-gpu-narrow-contractions (bf16 A and B), which
// starts from zeros and whose every reader (through reshapes) only rounds
// it to that type, gets its rounding as one generic of its own right after
// it, marked `rankc.gemm_result`, and the readers read the rounded tensor.
// rankc-gpu-library-calls folds that generic into the GEMM's call
// (RANKC_GEMM_NARROW_C: cuBLASLt rounds its f32 accumulator to the output
// type as it writes, to nearest even as arith.truncf does); where it cannot,
// the generic runs as a kernel and the values are the same.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Transforms/GemmMatch.h"

#include "NarrowOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUROUNDGEMMRESULTS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Whether `init` is a tensor filled with zeros, possibly reshaped (the
/// GEMM does not add to earlier values: beta = 0).
bool zeros(Value init) {
  while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      init.getDefiningOp()))
    init = init.getDefiningOp()->getOperand(0);
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
                  matchPattern(fill.getInputs()[0], m_Zero()));
}

/// Whether every use of `arg` (a reader's block argument) rounds it to
/// `narrow`.
bool onlyRounded(BlockArgument arg, Type narrow) {
  return llvm::all_of(arg.getUses(), [&](OpOperand &use) {
    auto trunc = dyn_cast<arith::TruncFOp>(use.getOwner());
    return trunc && trunc.getType() == narrow && !trunc.getRoundingmodeAttr();
  });
}

/// True if it rounded `gemm`'s result.
bool roundResult(linalg::LinalgOp gemm, Type narrow) {
  Value result = gemm->getResult(0);
  SmallVector<OpOperand *> readers;
  SmallVector<Operation *> reshapes;
  auto rounds = [&](OpOperand &use) {
    auto g = cast<linalg::GenericOp>(use.getOwner());
    return onlyRounded(g.getMatchingBlockArgument(&use), narrow);
  };
  if (result.use_empty() ||
      !rankc::readersThroughReshapes(result, rounds, readers, reshapes))
    return false;
  // The rounding, once, right after the GEMM.
  OpBuilder b(gemm->getContext());
  // Its buffer starts with zeros before the GEMM: the first write that
  // rankc-plan-buffers sees is then before the GEMM, so the buffer never
  // shares bytes with A or B, which the GEMM reads while it writes the
  // rounded result in its place (rankc-gpu-library-calls erases the fill).
  Location loc = gemm.getLoc();
  auto type = cast<RankedTensorType>(result.getType());
  b.setInsertionPoint(gemm);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), narrow);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(narrow));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  b.setInsertionPointAfter(gemm);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  auto round = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{result}, ValueRange{init},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value t = arith::TruncFOp::create(nb, l, narrow, args[0]);
        linalg::YieldOp::create(nb, l, t);
      });
  round->setAttr(rankc::kGemmResult, b.getUnitAttr());
  Value rounded = round.getResult(0);
  result.replaceAllUsesExcept(rounded, round);
  rankc::narrowReshapes(reshapes, narrow);
  // Each reader reads the rounded value where it rounded.
  for (OpOperand *use : readers) {
    auto reader = cast<linalg::GenericOp>(use->getOwner());
    BlockArgument arg = reader.getMatchingBlockArgument(use);
    SmallVector<Operation *> truncs(arg.getUsers().begin(),
                                    arg.getUsers().end());
    arg.setType(narrow);
    for (Operation *t : truncs) {
      t->getResult(0).replaceAllUsesWith(arg);
      t->erase();
    }
  }
  return true;
}

struct GpuRoundGemmResults
    : rankc::impl::RankcGpuRoundGemmResultsBase<GpuRoundGemmResults> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Type>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto narrow = op->getAttrOfType<TypeAttr>(rankc::kNarrowOperands);
      if (!narrow || !op.hasPureTensorSemantics() ||
          op->getNumResults() != 1 ||
          failed(rankc::asGemm(op, /*anyLayout=*/false,
                               /*narrowInputs=*/true)) ||
          !zeros(op.getDpsInitOperand(0)->get()))
        return;
      // Only once cuBLASLt reads A and B narrow (the widening in the body).
      for (OpOperand *in : op.getDpsInputOperands())
        if (getElementTypeOrSelf(in->get().getType()) != narrow.getValue())
          return;
      gemms.push_back({op, narrow.getValue()});
    });
    bool changed = false;
    for (auto [op, narrow] : gemms)
      changed |= roundResult(op, narrow);
    // A reader that only rounded the result is now a copy of the rounding.
    if (changed && failed(rankc::eraseIdentityCopies(getOperation())))
      signalPassFailure();
  }
};

} // namespace
