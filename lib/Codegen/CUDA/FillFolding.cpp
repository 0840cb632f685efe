//===- FillFolding.cpp - a reduction's fill folded into its kernel --------===//
//
// (What and why: FillFolding.h.)
//
// The fill may fold when nothing between it and the reduction accesses its
// buffer: the buffer is a whole allocation (memref.alloc, gpu.alloc, or a
// memref.view of the step's arena, whose plan gives no two live buffers the
// same bytes) with no view made before the fill but reshapes, and the first
// op after the fill that uses the buffer or a reshape of it is the
// reduction, using it once, as an output written by a
// projected permutation (each element by one parallel iteration). Linalg's
// semantics give the rest: the reduction writes every element of its
// output, and an element is read and written only by its own update.
//
//===----------------------------------------------------------------------===//

#include "FillFolding.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace {

/// Ops after a fill looked at for its reduction: a bound, so that the
/// search stays linear in the function.
constexpr int kLookahead = 64;

bool wholeAllocation(Value buffer) {
  Operation *def = buffer.getDefiningOp();
  return def && isa<memref::AllocOp, gpu::AllocOp, memref::ViewOp>(def);
}

/// Whether `op` (an op of `block`) or an op nested in it uses any of
/// `values`.
bool usesAny(Operation *op, Block *block, ArrayRef<Value> values) {
  for (Value v : values)
    for (Operation *user : v.getUsers())
      if (block->findAncestorOpInBlock(*user) == op)
        return true;
  return false;
}

/// The buffer and its reshapes made before `fill` (each element under
/// another shape: the fill and the reduction may write any of them), or
/// none if some other view of it was made before the fill (accesses
/// through it could not be seen) or it is used outside the fill's block.
std::optional<SmallVector<Value>> viewsBefore(linalg::FillOp fill,
                                              Value buffer) {
  Block *block = fill->getBlock();
  SmallVector<Value> views{buffer};
  for (size_t i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return std::nullopt;
      if (at == fill.getOperation() || fill->isBeforeInBlock(at))
        continue;
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(at) &&
          at == user)
        views.push_back(user->getResult(0));
      else if (isa<ViewLikeOpInterface>(at))
        return std::nullopt;
      // (Any other use before the fill is done with before it.)
    }
  return views;
}

} // namespace

llvm::DenseMap<Operation *, SmallVector<rankc::FoldableFill, 1>>
rankc::findFoldableFills(func::FuncOp fn) {
  llvm::DenseMap<Operation *, SmallVector<FoldableFill, 1>> folds;
  fn.walk([&](linalg::FillOp fill) {
    if (!fill.hasPureBufferSemantics())
      return;
    Value buffer = fill.getOutputs()[0];
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || fill.getInputs()[0].getType() != type.getElementType())
      return;
    // The allocation the fill writes, maybe under another shape.
    while (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(
        buffer.getDefiningOp()))
      buffer = buffer.getDefiningOp()->getOperand(0);
    if (!wholeAllocation(buffer))
      return;
    Block *block = fill->getBlock();
    std::optional<SmallVector<Value>> views = viewsBefore(fill, buffer);
    if (!views)
      return;
    int looked = 0;
    for (Operation *op = fill->getNextNode(); op && looked < kLookahead;
         op = op->getNextNode(), ++looked) {
      if (!usesAny(op, block, *views))
        continue;
      // A reshape of the buffer is the same elements (no access itself).
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op) &&
          llvm::is_contained(*views, op->getOperand(0))) {
        views->push_back(op->getResult(0));
        continue;
      }
      auto reduction = dyn_cast<linalg::GenericOp>(op);
      if (!reduction || !reduction.hasPureBufferSemantics() ||
          reduction.getNumReductionLoops() == 0)
        return;
      // The buffer, once, as an output written by a projected permutation.
      OpOperand *output = nullptr;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!llvm::is_contained(*views, operand.get()))
          continue;
        if (output || !reduction.isDpsInit(&operand))
          return;
        output = &operand;
      }
      if (!output ||
          !reduction.getMatchingIndexingMap(output).isProjectedPermutation())
        return;
      // (Nested uses, in the payload, would be captures: none in linalg.)
      folds[op].push_back({fill, output->get()});
      return;
    }
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
