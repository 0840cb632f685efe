//===- FillFolding.cpp - a reduction's fill folded into its kernel --------===//
//
// (What and why: FillFolding.h.)
//
// The fill may fold when nothing between it and the reduction accesses its
// buffer: the buffer is a whole allocation (memref.alloc, gpu.alloc, or a
// memref.view of the step's arena, whose plan gives no two live buffers the
// same bytes), and the first op after the fill that uses the buffer or a
// reshape of it is the reduction, using it once, as an output written by a
// projected permutation (each element by one parallel iteration). Linalg's
// semantics give the rest: the reduction writes every element of its
// output, and an element is read and written only by its own update.
//
//===----------------------------------------------------------------------===//

#include "FillFolding.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

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
/// `values`; how many of its own operands are among them.
bool usesAny(Operation *op, Block *block, ArrayRef<Value> values) {
  for (Value v : values)
    for (Operation *user : v.getUsers())
      if (block->findAncestorOpInBlock(*user) == op)
        return true;
  return false;
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
    if (!type || fill.getInputs()[0].getType() != type.getElementType() ||
        !wholeAllocation(buffer))
      return;
    Block *block = fill->getBlock();
    SmallVector<Value> views{buffer};
    int looked = 0;
    for (Operation *op = fill->getNextNode(); op && looked < kLookahead;
         op = op->getNextNode(), ++looked) {
      if (!usesAny(op, block, views))
        continue;
      // A reshape of the buffer is the same elements (no access itself).
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op) &&
          llvm::is_contained(views, op->getOperand(0))) {
        views.push_back(op->getResult(0));
        continue;
      }
      auto reduction = dyn_cast<linalg::GenericOp>(op);
      if (!reduction || !reduction.hasPureBufferSemantics() ||
          reduction.getNumReductionLoops() == 0)
        return;
      // The buffer, once, as an output written by a projected permutation.
      OpOperand *output = nullptr;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!llvm::is_contained(views, operand.get()))
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
