//===- FillFolding.cpp - a reduction's fill folded into its kernel --------===//
//
// (What and why: FillFolding.h.)
//
// The fill may fold when the first op after it to touch its buffer
// (rankc::firstAccessAfterFill: a whole allocation, seen through reshapes)
// is the reduction, using it once, as an output written by a projected
// permutation (each element by one parallel iteration). Linalg's semantics
// give the rest: the reduction writes every element of its output, and an
// element is read and written only by its own update.
//
//===----------------------------------------------------------------------===//

#include "FillFolding.h"

#include "rankc/Transforms/FirstAccess.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using rankc::FirstAccess;

namespace {

/// Ops after a fill looked at for its reduction: a bound, so that the
/// search stays linear in the function.
constexpr int kLookahead = 64;

} // namespace

llvm::DenseMap<Operation *, SmallVector<rankc::FoldableFill, 1>>
rankc::findFoldableFills(func::FuncOp fn) {
  llvm::DenseMap<Operation *, SmallVector<FoldableFill, 1>> folds;
  fn.walk([&](linalg::FillOp fill) {
    if (!fill.hasPureBufferSemantics())
      return;
    auto type = dyn_cast<MemRefType>(fill.getOutputs()[0].getType());
    if (!type || fill.getInputs()[0].getType() != type.getElementType())
      return;
    FailureOr<FirstAccess> access = firstAccessAfterFill(fill, kLookahead);
    if (failed(access))
      return;
    auto reduction = dyn_cast<linalg::GenericOp>(access->op);
    if (!reduction || !reduction.hasPureBufferSemantics() ||
        reduction.getNumReductionLoops() == 0)
      return;
    // The buffer, once, as an output written by a projected permutation.
    OpOperand *output = nullptr;
    for (OpOperand &operand : reduction->getOpOperands()) {
      if (!llvm::is_contained(access->views, operand.get()))
        continue;
      if (output || !reduction.isDpsInit(&operand))
        return;
      output = &operand;
    }
    if (!output ||
        !reduction.getMatchingIndexingMap(output).isProjectedPermutation())
      return;
    // (Nested uses, in the payload, would be captures: none in linalg.)
    folds[reduction].push_back({fill, output->get()});
  });
  return folds;
}

LogicalResult rankc::foldFillInto(RewriterBase &rewriter, scf::ParallelOp loop,
                                  const FoldableFill &fold) {
  Block *body = loop.getBody();
  SmallVector<memref::LoadOp> loads;
  SmallVector<Operation *> stores;
  for (Operation *user : fold.output.getUsers()) {
    if (!loop->isAncestor(user))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(user);
        load && load->getBlock() == body)
      loads.push_back(load);
    else if (auto store = dyn_cast<memref::StoreOp>(user);
             store && store.getMemRef() == fold.output)
      stores.push_back(body->findAncestorOpInBlock(*user));
    else
      return failure(); // another read: it could see a stored value
  }
  // Each load reads the element its thread reduces into, before the thread
  // has stored it: the fill's value.
  for (memref::LoadOp load : loads)
    for (Operation *store : stores)
      if (!store || !load->isBeforeInBlock(store))
        return failure();
  linalg::FillOp fill = fold.fill;
  Value value = fill.getInputs()[0];
  for (memref::LoadOp load : loads)
    rewriter.replaceOp(load, value);
  return success();
}
