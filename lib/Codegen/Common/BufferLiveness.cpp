//===- BufferLiveness.cpp - where in a body a buffer is alive -------------===//

#include "BufferLiveness.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

int64_t rankc::alignedBytes(MemRefType type) {
  if (!type.hasStaticShape())
    return -1;
  int64_t bits = type.getElementTypeBitWidth();
  int64_t bytes =
      std::max<int64_t>(type.getNumElements() * ((bits + 7) / 8), 1);
  return (bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
}

DenseMap<Operation *, SmallVector<func::CallOp>>
rankc::callersOf(ModuleOp module) {
  DenseMap<Operation *, SmallVector<func::CallOp>> callers;
  SymbolTable symbols(module);
  module.walk([&](func::CallOp call) {
    if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
      callers[callee].push_back(call);
  });
  return callers;
}

DenseMap<Operation *, int64_t> rankc::numberOps(Block &body) {
  DenseMap<Operation *, int64_t> at;
  int64_t n = 0;
  for (Operation &op : body)
    at[&op] = n++;
  return at;
}

namespace {
/// The argument of `callee` that its result `r` is (or a view of), or -1
/// when the result is the callee's own buffer, or -2 when not known.
int returnedArgument(func::FuncOp callee, unsigned r) {
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return -2;
  Value v = callee.getBody().front().getTerminator()->getOperand(r);
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto region = dyn_cast<scf::ExecuteRegionOp>(def);
             region && region.getRegion().hasOneBlock())
      v = region.getRegion().front().getTerminator()->getOperand(
          cast<OpResult>(v).getResultNumber()); // (scatter_add's result)
    else if (isa<memref::AllocOp, gpu::AllocOp>(def))
      return -1;
    else
      return -2;
  }
  auto arg = cast<BlockArgument>(v);
  return arg.getOwner() == &callee.getBody().front() ? int(arg.getArgNumber())
                                                      : -2;
}

/// Stores that keep a value in memory, out of the plan's sight.
bool storesValue(OpOperand &use) {
  return isa<memref::StoreOp, LLVM::StoreOp>(use.getOwner()) &&
         use.getOperandNumber() == 0;
}

} // namespace

FailureOr<std::pair<int64_t, int64_t>>
rankc::liveRange(Value root, Block &body,
                 const DenseMap<Operation *, int64_t> &at,
                 SymbolTableCollection &symbols,
                 SmallVectorImpl<unsigned> *returnedAt) {
  SmallVector<Value, 8> work{root};
  DenseSet<Value> seen{root};
  auto track = [&](ValueRange values) {
    for (Value v : values)
      if (seen.insert(v).second)
        work.push_back(v);
  };
  int64_t first = INT64_MAX, last = -1;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() == &body &&
          user->hasTrait<OpTrait::IsTerminator>()) {
        if (!returnedAt || v != root)
          return failure();
        returnedAt->push_back(use.getOperandNumber());
      }
      if (isa<memref::DeallocOp, gpu::DeallocOp>(user) || storesValue(use))
        return failure();
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return failure();
      int64_t p = at.lookup(top);
      first = std::min(first, p);
      last = std::max(last, p);
      if (auto call = dyn_cast<func::CallOp>(user)) {
        // A part's results: those that are (views of) this argument. A
        // part returning a buffer of its own, or a view of another
        // argument, does not make this one escape.
        auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        for (OpResult result : call->getResults()) {
          int arg = returnedArgument(callee, result.getResultNumber());
          if (arg == -2 || arg == int(use.getOperandNumber()))
            track(result);
        }
      } else {
        track(user->getResults());
      }
      if (top != user) // e.g. a loop that yields it
        track(top->getResults());
    }
  }
  if (last < 0)
    return std::make_pair(int64_t(-1), int64_t(-1));
  return std::make_pair(first, last);
}

