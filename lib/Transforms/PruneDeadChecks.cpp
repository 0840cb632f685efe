//===- PruneDeadChecks.cpp - dead generics reduced to their index checks --===//
//
// A take checks its indices in its body (rankc_rt_index_error under an
// scf.if), which gives its generic a memory effect: once fusion has copied
// the body into every reader, or when nothing reads the result, the
// original stays, because an op with effects is never trivially dead. On
// the GPU such a leftover still writes its whole result: cross-entropy's
// one-hot masks of [tokens, vocab] (a GPT step kept four dead f32 ones of
// 67 MB each) and a check that iterated the same 2048 targets over all
// 8192 classes.
//
// Here a generic none of whose results is read keeps only its checks: the
// body ops they need, the inputs those read, and the loops those inputs or
// linalg.index use. A loop nobody reads only repeats a check with the same
// operands, and the check's only effect is to end the run on the first
// bad index, so running it once per distinct operand is the same program;
// for the same reason a check generic equal to an earlier one in its block
// goes.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"
#include "rankc/Support/IndexChecks.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Transforms/RegionUtils.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCPRUNEDEADCHECKS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Whether `op` (in a generic's body) has effects, and all of them are
/// index checks: calls of the runtime's index error, possibly under ifs.
bool onlyChecks(Operation *op, bool &effects) {
  if (auto call = dyn_cast<func::CallOp>(op)) {
    effects = true;
    return call.getCallee() == rankc::kIndexErrorFunction;
  }
  if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
    return true;
  if (!isa<scf::IfOp, scf::YieldOp>(op))
    return false;
  for (Region &r : op->getRegions())
    for (Operation &inner : r.getOps())
      if (!onlyChecks(&inner, effects))
        return false;
  return true;
}

/// `g`, whose results nobody reads, as a result-less generic that runs only
/// its checks over the loops they depend on; failure if it has no checks
/// or its checks read an output or no loop.
LogicalResult pruneToChecks(linalg::GenericOp g) {
  Block *body = g.getBody();
  // The checks (top-level effectful body ops) and everything they use.
  SetVector<Operation *> keep;
  SmallVector<Value> roots;
  bool effects = false;
  for (Operation &op : body->without_terminator()) {
    bool hasEffects = false;
    if (!onlyChecks(&op, hasEffects))
      return failure();
    if (!hasEffects)
      continue;
    effects = true;
    keep.insert(&op);
    llvm::append_range(roots, op.getOperands());
    for (Region &r : op.getRegions()) {
      SetVector<Value> above;
      getUsedValuesDefinedAbove(r, above);
      llvm::append_range(roots, above);
    }
  }
  if (!effects)
    return failure();
  llvm::SmallDenseSet<Value> needed;
  while (!roots.empty()) {
    Value v = roots.pop_back_val();
    if (!needed.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp(); def && def->getBlock() == body) {
      keep.insert(def);
      llvm::append_range(roots, def->getOperands());
    }
  }
  // Inputs and loops the checks read.
  unsigned numLoops = g.getNumLoops();
  llvm::SmallBitVector loops(numLoops);
  SmallVector<OpOperand *> inputs;
  auto keepInput = [&](OpOperand *in) {
    inputs.push_back(in);
    AffineMap map = g.getMatchingIndexingMap(in);
    for (unsigned d = 0; d < numLoops; ++d)
      if (map.isFunctionOfDim(d))
        loops.set(d);
  };
  for (OpOperand *in : g.getDpsInputOperands())
    if (needed.contains(g.getMatchingBlockArgument(in)))
      keepInput(in);
  for (OpOperand &out : g.getDpsInitsMutable())
    if (needed.contains(g.getMatchingBlockArgument(&out)))
      return failure();
  for (Operation *op : keep)
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      loops.set(index.getDim());
  if (loops.none())
    return failure();
  // Each kept loop's size must come from an input that it indexes (a
  // linalg verifier rule): one the checks read, else another input (which
  // may index more loops: until every kept one is sized).
  auto indexes = [&](OpOperand *in, unsigned d) {
    return g.getMatchingIndexingMap(in)
        .getResultPosition(getAffineDimExpr(d, g.getContext()))
        .has_value();
  };
  SmallVector<OpOperand *> allInputs = g.getDpsInputOperands();
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned d = 0; d < numLoops; ++d) {
      if (!loops.test(d) ||
          llvm::any_of(inputs, [&](OpOperand *in) { return indexes(in, d); }))
        continue;
      auto extra = llvm::find_if(allInputs, [&](OpOperand *in) {
        return !llvm::is_contained(inputs, in) && indexes(in, d);
      });
      if (extra == allInputs.end())
        return failure();
      keepInput(*extra);
      changed = true;
    }
  }
  // Already as small as it gets.
  if (g.getNumResults() == 0 && loops.all() &&
      inputs.size() == g.getNumDpsInputs())
    return failure();
  // The kept loops, renumbered in order.
  SmallVector<int64_t> newDim(numLoops, -1);
  unsigned kept = 0;
  for (unsigned d : loops.set_bits())
    newDim[d] = kept++;
  llvm::SmallBitVector dropped = ~loops;
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  for (OpOperand *in : inputs) {
    maps.push_back(compressDims(g.getMatchingIndexingMap(in), dropped));
    operands.push_back(in->get());
  }
  SmallVector<utils::IteratorType> iterators(kept,
                                             utils::IteratorType::parallel);
  OpBuilder b(g);
  auto pruned = linalg::GenericOp::create(
      b, g.getLoc(), TypeRange{}, operands, ValueRange{}, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        IRMapping map;
        for (auto [in, arg] : llvm::zip(inputs, args))
          map.map(g.getMatchingBlockArgument(in), arg);
        for (Operation &op : body->without_terminator()) {
          if (!keep.contains(&op))
            continue;
          if (auto index = dyn_cast<linalg::IndexOp>(&op)) {
            map.map(index.getResult(),
                    linalg::IndexOp::create(nb, loc, newDim[index.getDim()]));
            continue;
          }
          nb.clone(op, map);
        }
        linalg::YieldOp::create(nb, loc);
      });
  pruned->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  g.erase();
  return success();
}

struct PruneDeadChecks
    : rankc::impl::RankcPruneDeadChecksBase<PruneDeadChecks> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> dead;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.hasPureTensorSemantics() &&
          llvm::all_of(g->getResults(), [](Value r) { return r.use_empty(); }))
        dead.push_back(g);
    });
    for (linalg::GenericOp g : dead)
      (void)pruneToChecks(g);
    eraseRepeatedChecks();
  }

  /// A result-less generic equal to one before it in its block (the same
  /// checks of the same operands: fusion copied one take's body into
  /// several readers) can never fail where the first did not.
  void eraseRepeatedChecks() {
    DenseMap<std::pair<Block *, llvm::hash_code>,
             SmallVector<linalg::GenericOp, 1>>
        seen;
    SmallVector<linalg::GenericOp> repeated;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.getNumResults() != 0 || g.getNumDpsInits() != 0)
        return;
      llvm::hash_code h = OperationEquivalence::computeHash(
          g, OperationEquivalence::directHashValue,
          OperationEquivalence::ignoreHashValue,
          OperationEquivalence::IgnoreLocations);
      auto &earlier = seen[{g->getBlock(), h}];
      for (linalg::GenericOp e : earlier)
        if (OperationEquivalence::isEquivalentTo(
                e, g, OperationEquivalence::IgnoreLocations)) {
          repeated.push_back(g);
          return;
        }
      earlier.push_back(g);
    });
    for (linalg::GenericOp g : repeated)
      g.erase();
  }
};

} // namespace
