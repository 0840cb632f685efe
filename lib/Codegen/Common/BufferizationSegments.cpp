//===- BufferizationSegments.cpp - long functions bufferized in pieces ----===//
//
// One-shot-bufferize's analysis is quadratic in the uses of one tensor: for
// each operand it decides, it gathers every read and write of every alias
// of the operand's value (OneShotAnalysis.cpp, getAliasingReads) before it
// looks for a conflict. A schedule whose program input is read by U part
// calls (a `wide` document of bench/gen_shapes.py: 6,250 calls a rank at
// 10^5 nodes; the halo chain: 2,272) costs U^2 queries: 55 s of an 87 s
// build.
//
// rankc-outline-bufferization-segments cuts such a function (one in which
// some value has more than `max-uses` uses in its body) into consecutive
// runs of `segment` ops, each moved into a private function of its own
// (`rankc.bufferization_segment`) that the function calls in its place:
// the values a run uses from before it are its arguments, the values later
// ops use its results. One-shot analyzes each segment (its arguments are
// used at most `segment` times) and then the function, which uses a value
// once per segment: U * segment + (U / segment)^2 queries. Across the cut
// the analysis knows what each segment reads and writes of its arguments
// (a call's bufferization model), so a write that would clobber a value
// read later still gets its copy, at the segment's call. Constants are
// cloned into the segments that use them, not passed.
//
// rankc-inline-bufferization-segments, right after bufferization, moves
// each segment's ops back to its one call site: the later passes (part
// out-parameters, the buffer plan, the glue's cuts) see one function again.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCOUTLINEBUFFERIZATIONSEGMENTS
#define GEN_PASS_DEF_RANKCINLINEBUFFERIZATIONSEGMENTS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSegment = "rankc.bufferization_segment";

/// Whether some value of `body` (an argument or a result of one of its
/// ops) is used more than `maxUses` times: the shape that makes one-shot's
/// analysis quadratic. Counting stops at maxUses + 1 for each value.
bool hasManyUses(Block &body, int64_t maxUses) {
  auto many = [&](Value v) {
    int64_t n = 0;
    for (auto it = v.use_begin(); it != v.use_end() && n <= maxUses; ++it)
      ++n;
    return n > maxUses;
  };
  if (llvm::any_of(body.getArguments(), many))
    return true;
  for (Operation &op : body)
    if (llvm::any_of(op.getResults(), many))
      return true;
  return false;
}

/// A constant that a segment clones instead of taking as an argument (a
/// scalar: a tensor constant stays one value, as rankc-constant-globals
/// made it one global).
bool clonable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>() &&
         def->getNumOperands() == 0 && !isa<ShapedType>(v.getType());
}

/// A scalar constant: it stays in the function (and counts for no
/// segment's size); each segment clones those it uses.
bool staysInFunction(Operation &op) {
  return op.getNumResults() == 1 && clonable(op.getResult(0));
}

/// Moves the ops [begin, end) of `fn`'s body into a new private function
/// `name` placed before `fn`, and calls it in their place.
void outlineRun(func::FuncOp fn, Block::iterator begin, Block::iterator end,
                StringRef name, SymbolTable &symbols) {
  Block &body = fn.getBody().front();
  MLIRContext *ctx = fn.getContext();
  // In block order: the segment's arguments and results follow it, so
  // that the build does not depend on pointers.
  SmallVector<Operation *> run;
  llvm::SmallPtrSet<Operation *, 32> inRun;
  for (Operation &op : llvm::make_range(begin, end))
    if (!staysInFunction(op)) {
      run.push_back(&op);
      inRun.insert(&op);
    }
  // Defined in `body` outside the run (an argument or an earlier op).
  auto fromOutside = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &body;
    Operation *def = v.getDefiningOp();
    return def->getBlock() == &body && !inRun.contains(def);
  };
  llvm::SetVector<Value> inputs, constants;
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (fromOutside(v))
          (clonable(v) ? constants : inputs).insert(v);
    });
  llvm::SetVector<Value> outputs;
  for (Operation *op : run)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return !inRun.contains(body.findAncestorOpInBlock(*user));
          }))
        outputs.insert(r);

  OpBuilder b(ctx);
  b.setInsertionPoint(fn);
  auto type =
      FunctionType::get(ctx, ValueRange(inputs.getArrayRef()).getTypes(),
                        ValueRange(outputs.getArrayRef()).getTypes());
  auto segment = func::FuncOp::create(b, fn.getLoc(), name, type);
  segment.setPrivate();
  segment->setAttr(kSegment, UnitAttr::get(ctx));
  symbols.insert(segment);
  Block *entry = segment.addEntryBlock();

  // The call goes where the run was; the run moves into the segment.
  b.setInsertionPoint(&body, begin);
  Location loc = begin->getLoc();
  auto call = func::CallOp::create(b, loc, segment, inputs.getArrayRef());
  b.setInsertionPointToStart(entry);
  // What the run's operands become inside: arguments and clones. Set by
  // walking the run's operands, not the values' uses: a program input
  // read by every part has thousands of uses, and each segment would walk
  // them all.
  IRMapping inside;
  for (auto [v, arg] : llvm::zip(inputs, entry->getArguments()))
    inside.map(v, arg);
  for (Value c : constants)
    inside.map(c, b.clone(*c.getDefiningOp())->getResult(0));
  for (Operation *op : run) {
    op->moveBefore(entry, entry->end());
    op->walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands())
        if (Value v = inside.lookupOrNull(operand.get()))
          operand.set(v);
    });
  }
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc, outputs.getArrayRef());
  for (auto [v, result] : llvm::zip(outputs, call.getResults()))
    Value(v).replaceUsesWithIf(result, [&](OpOperand &use) {
      return !segment->isProperAncestor(use.getOwner());
    });
}

struct OutlineBufferizationSegmentsPass
    : public rankc::impl::RankcOutlineBufferizationSegmentsBase<
          OutlineBufferizationSegmentsPass> {
  using RankcOutlineBufferizationSegmentsBase::
      RankcOutlineBufferizationSegmentsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (segment < 2) {
      module.emitError() << "rankc-outline-bufferization-segments: segment "
                            "must be at least 2, not "
                         << int64_t(segment);
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> long_;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn.getBody().hasOneBlock() &&
          hasManyUses(fn.getBody().front(), maxUses))
        long_.push_back(fn);
    for (func::FuncOp fn : long_) {
      Block &body = fn.getBody().front();
      // Runs of `segment` ops before the terminator, cut front to back.
      SmallVector<Block::iterator> cuts;
      int64_t n = 0;
      for (Operation &op : body.without_terminator())
        if (!staysInFunction(op) && n++ % segment == 0)
          cuts.push_back(Block::iterator(&op));
      cuts.push_back(Block::iterator(body.getTerminator()));
      for (size_t i = 0; i + 1 < cuts.size(); ++i)
        outlineRun(fn, cuts[i], cuts[i + 1],
                   (fn.getSymName() + "_segment" + Twine(i)).str(), symbols);
    }
  }
};

struct InlineBufferizationSegmentsPass
    : public rankc::impl::RankcInlineBufferizationSegmentsBase<
          InlineBufferizationSegmentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SmallVector<func::FuncOp> segments;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(kSegment))
        segments.push_back(fn);
    SymbolUserMap users(tables, module);
    for (func::FuncOp segment : segments) {
      ArrayRef<Operation *> calls = users.getUsers(segment);
      auto call = calls.size() == 1 ? dyn_cast<func::CallOp>(calls.front())
                                    : func::CallOp();
      if (!call) {
        segment.emitError() << "a bufferization segment must have one call, "
                               "it has "
                            << calls.size();
        return signalPassFailure();
      }
      // Bufferization gave the call operands of the callee's argument types
      // (casting where they differed) and results of its result types.
      Block &entry = segment.getBody().front();
      auto ret = cast<func::ReturnOp>(entry.getTerminator());
      for (auto [arg, operand] :
           llvm::zip(entry.getArguments(), call.getOperands()))
        arg.replaceAllUsesWith(operand);
      call.replaceAllUsesWith(ret.getOperands());
      for (Operation &op : llvm::make_early_inc_range(entry.without_terminator()))
        op.moveBefore(call);
      call.erase();
      segment.erase();
    }
  }
};

} // namespace
