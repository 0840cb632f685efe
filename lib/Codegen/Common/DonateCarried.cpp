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
//===----------------------------------------------------------------------===//

#include "BufferLiveness.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCDONATECARRIED
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {


/// Whether `op` reads `in` and writes `out` element for element: a generic
/// of parallel loops where every operand `in` is has the indexing of the
/// (only) init `out` is.
bool elementwiseInPlace(Operation *op, Value in, Value out) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  AffineMap outMap;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    if (init.get() == in)
      return false;
    if (init.get() == out) {
      if (outMap)
        return false;
      outMap = generic.getMatchingIndexingMap(&init);
    }
  }
  if (!outMap)
    return false;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (input->get() == out ||
        (input->get() == in && generic.getMatchingIndexingMap(input) != outMap))
      return false;
  return true;
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
  // late read): the buffers' live ranges in the callee's body.
  FailureOr<std::pair<int64_t, int64_t>> readLife =
      rankc::liveRange(a, body, at, lookups);
  FailureOr<std::pair<int64_t, int64_t>> writeLife =
      rankc::liveRange(b, body, at, lookups);
  if (failed(readLife) || failed(writeLife) || writeLife->first < 0)
    return false;
  int64_t lastRead = readLife->second, firstWrite = writeLife->first;
  if (lastRead < firstWrite)
    return true;
  if (lastRead != firstWrite)
    return false;
  // They meet in one op: safe if it uses both directly, element for element.
  for (Operation *user : b.getUsers())
    if (user->getBlock() == &body && at.lookup(user) == firstWrite)
      return elementwiseInPlace(user, a, b);
  return false;
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
    auto alloc = result.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != &body ||
        alloc.getType() != arg.getType() ||
        llvm::count(ret.getOperands(), result) != 1)
      continue;
    // The argument must not leave (be returned: passed through) and the
    // result must be used (and returned) only as a buffer of its own.
    FailureOr<std::pair<int64_t, int64_t>> argLife =
        rankc::liveRange(arg, body, at, lookups);
    if (failed(argLife))
      continue;
    int64_t firstUse = INT64_MAX;
    Operation *firstUser = nullptr;
    for (Operation *user : result.getUsers()) {
      if (user == ret)
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
          llvm::count(call.getOperands(), result) == 1) {
        unsigned in = 0, out = 0;
        for (auto [k, v] : llvm::enumerate(call.getOperands())) {
          if (v == arg)
            in = k;
          if (v == result)
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
