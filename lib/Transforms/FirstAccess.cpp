//===- FirstAccess.cpp - the op that next touches a filled buffer ---------===//
//
// (What and why: include/rankc/Transforms/FirstAccess.h.)
//
// Only whole allocations: an op that uses none of the buffer's views
// cannot touch its memory, because the buffer has no alias (a function
// argument could alias another, a subview's parent is wider). Views made
// before the fill other than reshapes could be written through unseen, so
// they end the search; views made after it are uses and end it too.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/FirstAccess.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace {

bool isReshape(Operation *op) {
  return isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(op);
}

/// A buffer its defining op allocates (memref.alloc, the GPU's gpu.alloc:
/// asked through the memory-effect interface, as this layer knows no
/// backend's dialect), or a view of the step's arena.
bool wholeAllocation(Value buffer) {
  Operation *def = buffer.getDefiningOp();
  return def && (isa<memref::ViewOp>(def) ||
                 hasEffect<MemoryEffects::Allocate>(def, buffer));
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

/// The buffer and its reshapes made before `fill`, or failure if some other
/// view of it was made before the fill or it is used outside the fill's
/// block.
FailureOr<SmallVector<Value>> viewsBefore(linalg::FillOp fill, Value buffer) {
  Block *block = fill->getBlock();
  SmallVector<Value> views{buffer};
  for (size_t i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return failure();
      if (at == fill.getOperation() || fill->isBeforeInBlock(at))
        continue;
      if (isReshape(at) && at == user)
        views.push_back(user->getResult(0));
      else if (isa<ViewLikeOpInterface>(at))
        return failure();
      // (Any other use before the fill is done with before it.)
    }
  return views;
}

} // namespace

Value rankc::underReshapes(Value v) {
  while (isReshape(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

FailureOr<rankc::FirstAccess>
rankc::firstAccessAfterFill(linalg::FillOp fill, int lookahead) {
  if (!fill.hasPureBufferSemantics())
    return failure();
  // The allocation the fill writes, maybe under another shape.
  Value buffer = underReshapes(fill.getOutputs()[0]);
  if (!wholeAllocation(buffer))
    return failure();
  Block *block = fill->getBlock();
  FailureOr<SmallVector<Value>> views = viewsBefore(fill, buffer);
  if (failed(views))
    return failure();
  int looked = 0;
  for (Operation *op = fill->getNextNode(); op && looked < lookahead;
       op = op->getNextNode(), ++looked) {
    if (!usesAny(op, block, *views))
      continue;
    // A reshape of the buffer is the same elements (no access itself).
    if (isReshape(op) && llvm::is_contained(*views, op->getOperand(0))) {
      views->push_back(op->getResult(0));
      continue;
    }
    return FirstAccess{op, std::move(*views)};
  }
  return failure();
}
