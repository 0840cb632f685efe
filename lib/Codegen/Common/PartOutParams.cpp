//===- PartOutParams.cpp - parts write their results where callers say ---===//
//
// After bufferization a part allocates the buffers it returns, so the
// caller cannot tell when they are born or place them: each lives in a
// buffer of its own to the step's end. Here every result that is a buffer
// the part allocated (of a static size), or a reshape or cast of one,
// becomes an argument the callers allocate: the allocation moves to each
// call site, and the caller rebuilds the reshape from its own buffer.
// Then every buffer that passes between parts is an allocation of the step
// function, which rankc-plan-buffers can place.
//
// (Upstream's promoteBufferResultsToOutParams does this for whole results
// only: a reshaped result costs it a copy, and a buffer returned twice
// crashes it, both of which exported training steps have.)
//
//===----------------------------------------------------------------------===//

#include "BufferLiveness.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCPARTOUTPARAMS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// A result that is `alloc`, or `views` (innermost first) applied to it.
struct Hoisted {
  memref::AllocOp alloc;
  SmallVector<Operation *> views;
};

/// The allocation in `body` that `result` is (through reshapes and casts),
/// if the callers can allocate it instead.
std::optional<Hoisted> hoistable(Value result, Block &body) {
  Hoisted h;
  Value v = result;
  while (Operation *def = v.getDefiningOp()) {
    if (def->getBlock() != &body)
      return std::nullopt;
    if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
      if (!alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty())
        return std::nullopt;
      h.alloc = alloc;
      std::reverse(h.views.begin(), h.views.end());
      return h;
    }
    // (Of static shapes: no operand but the source, so that a caller can
    // make the same view of its own buffer.)
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp>(
            def) ||
        def->getNumOperands() != 1)
      return std::nullopt;
    h.views.push_back(def);
    v = def->getOperand(0);
  }
  return std::nullopt;
}

LogicalResult promote(func::FuncOp fn, ArrayRef<func::CallOp> calls) {
  Block &body = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || !fn.getBody().hasOneBlock())
    return success();
  // Per result: its hoisted allocation's new argument, and its views.
  SmallVector<std::optional<Hoisted>> results;
  SmallVector<memref::AllocOp> allocs; // one argument each, in order
  DenseMap<Operation *, unsigned> argOf;
  llvm::BitVector dropped(ret.getNumOperands());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    results.push_back(hoistable(v, body));
    if (!results.back())
      continue;
    dropped.set(i);
    if (argOf.try_emplace(results.back()->alloc, allocs.size()).second)
      allocs.push_back(results.back()->alloc);
  }
  if (allocs.empty())
    return success();

  // The callers: allocate, call, rebuild each dropped result's views.
  unsigned firstArg = fn.getNumArguments();
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    SmallVector<Value> operands(call.getOperands());
    SmallVector<Value> buffers;
    for (memref::AllocOp alloc : allocs)
      buffers.push_back(b.clone(*alloc)->getResult(0));
    operands.append(buffers);
    SmallVector<Type> kept;
    for (auto [i, t] : llvm::enumerate(call.getResultTypes()))
      if (!dropped.test(i))
        kept.push_back(t);
    auto newCall = func::CallOp::create(b, call.getLoc(), call.getCallee(),
                                        kept, operands);
    newCall->setAttrs(call->getAttrs());
    unsigned next = 0;
    for (auto [i, old] : llvm::enumerate(call.getResults())) {
      if (!dropped.test(i)) {
        old.replaceAllUsesWith(newCall.getResult(next++));
        continue;
      }
      IRMapping map;
      map.map(results[i]->alloc.getResult(), buffers[argOf[results[i]->alloc]]);
      Value v = buffers[argOf[results[i]->alloc]];
      for (Operation *view : results[i]->views)
        v = b.clone(*view, map)->getResult(0);
      old.replaceAllUsesWith(v);
    }
    call.erase();
  }

  // The part: its allocations are the new arguments, appended at once (one
  // insertion each rewrote the function's type and argument attributes
  // every time: quadratic in a part that returns thousands of buffers).
  SmallVector<unsigned> at(allocs.size(), firstArg);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs(allocs.size());
  SmallVector<Location> locs;
  for (memref::AllocOp alloc : allocs) {
    types.push_back(alloc.getType());
    locs.push_back(alloc.getLoc());
  }
  if (failed(fn.insertArguments(at, types, attrs, locs)))
    return failure();
  for (auto [k, alloc] : llvm::enumerate(allocs))
    alloc.getResult().replaceAllUsesWith(fn.getArgument(firstArg + k));
  ret->eraseOperands(dropped);
  if (failed(fn.eraseResults(dropped)))
    return failure();
  for (memref::AllocOp alloc : allocs)
    alloc.erase();
  return success();
}

struct PartOutParamsPass
    : public rankc::impl::RankcPartOutParamsBase<PartOutParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseMap<Operation *, SmallVector<func::CallOp>> callers =
        rankc::callersOf(module);
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn.isPrivate() &&
          fn->hasAttr(rankc::kPartFunction) &&
          failed(promote(fn, callers.lookup(fn))))
        return signalPassFailure();
  }
};

} // namespace
