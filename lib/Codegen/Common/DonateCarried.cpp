//===- DonateCarried.cpp - a carried value's next one over its buffer -----===//
//
// A training step reads each parameter and optimizer moment and returns
// its next value, which the runtime carries into the next step. Left to
// themselves, the next values are new buffers of the step arena (two
// arenas take turns, so a step holds the parameters and moments three
// times: its inputs and two steps' outputs). Once nothing reads the old
// value any more, its buffer can take the new one: the runtime then finds
// the result where the input was and carries it without a move.
//
// On the step function (results marked `rankc.carried_from = ARG` by the
// manifest), after rankc-part-out-params: a carried result that is a
// buffer the function allocates is replaced by the argument it follows,
// when the argument is dead before the buffer is first used, or when both
// meet first in one call of a part in which, likewise, the argument is
// read last by the same elementwise operation (all loops parallel, the
// same indexing for both) that first writes the result: each element is
// then read before it is written, and by no other iteration.
//
// The GPU's collapsed dimensions (rankc-gpu-collapse-dims) put reshapes in
// the way: the part reads and writes 2-D parameters through collapse_shape
// views made ahead of the update, and the step returns its buffer through
// a collapse_shape / expand_shape pair that undo each other. Both are seen
// through: a reshape of a contiguous buffer keeps every element at its
// linear offset, so two buffers given one address meet element for element
// through equal reshapes too. Any other view (a subview) is refused.
//
//===----------------------------------------------------------------------===//

#include "BufferLiveness.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCDONATECARRIED
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {


/// The buffer `v` is a view of (through view-like ops: reshapes, subviews,
/// casts), and whether every view crossed was a reshape (expand_shape,
/// collapse_shape), which keeps each element at its linear offset.
Value viewRoot(Value v, bool &onlyReshapes) {
  onlyReshapes = true;
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewSource() == v)
      break;
    onlyReshapes &= isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(
        view.getOperation());
    v = view.getViewSource();
  }
  return v;
}

/// Whether `op` reads `in` and writes `out` element for element: a generic
/// of parallel loops whose (only) init made from `out` and every input made
/// from `in` are both buffers themselves or reshapes of them (the GPU's
/// collapsed dimensions), of one identity-layout type, with one indexing.
/// Reshapes of two contiguous buffers handed the same memory address the
/// same element at the same index.
bool elementwiseInPlace(Operation *op, Value in, Value out) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  AffineMap outMap;
  Type outType;
  bool reshapes = false;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    Value root = viewRoot(init.get(), reshapes);
    if (root == in)
      return false;
    if (root == out) {
      if (outMap || !reshapes)
        return false;
      outMap = generic.getMatchingIndexingMap(&init);
      outType = init.get().getType();
    }
  }
  auto outMemRef = dyn_cast_or_null<MemRefType>(outType);
  if (!outMap || !outMemRef || !outMemRef.getLayout().isIdentity())
    return false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value root = viewRoot(input->get(), reshapes);
    if (root == out)
      return false;
    if (root == in && (!reshapes || input->get().getType() != outType ||
                       generic.getMatchingIndexingMap(input) != outMap))
      return false;
  }
  return true;
}

/// The first operation of `body` that uses `root` or a view of it other
/// than to make a view (null if none): where a buffer is first read or
/// written.
Operation *firstAccess(Value root, Block &body,
                       const DenseMap<Operation *, int64_t> &at) {
  SmallVector<Value, 4> work{root};
  Operation *first = nullptr;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == v) {
        llvm::append_range(work, user->getResults());
        continue;
      }
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!first || at.lookup(top) < at.lookup(first)))
        first = top;
    }
  }
  return first;
}

/// Whether `callee` may be given one buffer for its arguments `in` (read)
/// and `out` (written).
bool inPlaceSafe(func::FuncOp callee, unsigned in, unsigned out,
                 const DenseMap<Operation *, int64_t> &at,
                 SymbolTableCollection &lookups) {
  if (callee.isExternal() || !callee.getBody().hasOneBlock())
    return false;
  Block &body = callee.getBody().front();
  Value a = callee.getArgument(in), b = callee.getArgument(out);
  // Every use, through views too (a view made early and read late is a
  // late read): the buffers' live ranges in the callee's body. The write
  // side starts where the buffer is first accessed, not where a view of it
  // is made (the GPU's collapsed dimensions make views ahead of the loop).
  FailureOr<std::pair<int64_t, int64_t>> readLife =
      rankc::liveRange(a, body, at, lookups);
  FailureOr<std::pair<int64_t, int64_t>> writeLife =
      rankc::liveRange(b, body, at, lookups);
  if (failed(readLife) || failed(writeLife) || writeLife->first < 0)
    return false;
  Operation *writer = firstAccess(b, body, at);
  if (!writer)
    return false;
  int64_t lastRead = readLife->second, firstWrite = at.lookup(writer);
  if (lastRead < firstWrite)
    return true;
  // They meet in one op: safe if it uses both, element for element.
  return lastRead == firstWrite && elementwiseInPlace(writer, a, b);
}

/// `v` without reshape pairs that undo each other (collapse_shape then
/// expand_shape back, or the reverse: what bufferizing the GPU's collapsed
/// dimensions leaves until the canonicalizer folds it); the pairs' ops go
/// into `chain`, outermost first.
Value throughRoundTrips(Value v, SmallVectorImpl<Operation *> &chain) {
  for (;;) {
    Operation *outer = v.getDefiningOp();
    if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(outer))
      return v;
    Operation *inner = outer->getOperand(0).getDefiningOp();
    if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(inner) ||
        isa<memref::ExpandShapeOp>(inner) == isa<memref::ExpandShapeOp>(outer) ||
        inner->getOperand(0).getType() != v.getType() ||
        !outer->hasOneUse() || !inner->hasOneUse())
      return v;
    chain.push_back(outer);
    chain.push_back(inner);
    v = inner->getOperand(0);
  }
}

void donate(func::FuncOp fn, SymbolTable &symbols,
            SymbolTableCollection &lookups) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return;
  Block &body = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return;
  DenseMap<Operation *, int64_t> at = rankc::numberOps(body);
  // Each callee's operations numbered once (a step's hundreds of carried
  // values mostly meet in one part: the optimizer's).
  DenseMap<Operation *, DenseMap<Operation *, int64_t>> numbered;
  for (unsigned j = 0; j < fn.getNumResults(); ++j) {
    auto from = fn.getResultAttrOfType<IntegerAttr>(j, rankc::kCarriedFrom);
    if (!from || from.getInt() >= fn.getNumArguments())
      continue;
    Value result = ret.getOperand(j);
    Value arg = fn.getArgument(from.getInt());
    SmallVector<Operation *, 2> chain;
    Value buffer = throughRoundTrips(result, chain);
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != &body ||
        alloc.getType() != arg.getType() ||
        llvm::count(ret.getOperands(), result) != 1 ||
        (!chain.empty() && llvm::is_contained(ret.getOperands(), buffer)))
      continue;
    // The argument must not leave (be returned: passed through) and the
    // result must be used (and returned) only as a buffer of its own.
    FailureOr<std::pair<int64_t, int64_t>> argLife =
        rankc::liveRange(arg, body, at, lookups);
    if (failed(argLife))
      continue;
    int64_t firstUse = INT64_MAX;
    Operation *firstUser = nullptr;
    for (Operation *user : buffer.getUsers()) {
      if (user == ret || llvm::is_contained(chain, user))
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && at.lookup(top) < firstUse) {
        firstUse = at.lookup(top);
        firstUser = top;
      }
    }
    if (!firstUser)
      continue;
    bool safe = argLife->second < firstUse;
    if (!safe && argLife->second == firstUse) {
      // One part's call reads the one and writes the other.
      auto call = dyn_cast<func::CallOp>(firstUser);
      auto callee =
          call ? symbols.lookup<func::FuncOp>(call.getCallee()) : nullptr;
      if (callee && llvm::count(call.getOperands(), arg) == 1 &&
          llvm::count(call.getOperands(), buffer) == 1) {
        unsigned in = 0, out = 0;
        for (auto [k, v] : llvm::enumerate(call.getOperands())) {
          if (v == arg)
            in = k;
          if (v == buffer)
            out = k;
        }
        // (A property of the callee's body: its other calls may pass
        // two buffers as before.)
        auto [it, fresh] = numbered.try_emplace(callee);
        if (fresh && callee.getBody().hasOneBlock())
          it->second = rankc::numberOps(callee.getBody().front());
        safe = inPlaceSafe(callee, in, out, it->second, lookups);
      }
    }
    if (!safe)
      continue;
    result.replaceAllUsesWith(arg);
    for (Operation *op : chain) // (now unused, outermost first)
      op->erase();
    buffer.replaceAllUsesWith(arg);
    alloc.erase();
  }
}

struct DonateCarriedPass
    : public rankc::impl::RankcDonateCarriedBase<DonateCarriedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SymbolTableCollection lookups;
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      donate(fn, symbols, lookups);
  }
};

} // namespace
