//===- FuseMultiOutput.cpp - one loop nest for elementwise ops of a shape -===//
//
// Upstream's elementwise fusion only takes a producer into its one user: a
// value read by two ops stays a loop nest of its own, written to memory and
// read back by each reader. In a DAG where values have several readers (a
// residual stream, the live values of a stencil's stages, the inputs of an
// optimizer's update) most ops stay alone, and each is a loop nest, a
// buffer and, on the CPU, a function that LLVM optimizes and generates on
// its own: compile time then grows with the op count however small the
// tensors are.
//
// This pass merges the elementwise linalg.generics of one block that share
// an iteration space into one generic with several results (XLA's
// multi-output loop fusion): each member's body is cloned once, in order;
// a member reading an earlier member's result takes the value computed in
// the same iteration instead of a load; results that no op outside the
// group reads are not written at all. Nothing is recomputed.
//
// The group is placed where its first outside reader was (every member
// comes before that point, and so does every value a member reads); an
// op with memory effects (a call to the runtime or to a part) closes every
// open group, so that no computation moves past a message. Groups are
// bounded (kMaxBodyOps, kMaxOperands): a GPU kernel's parameters and a
// loop body's registers stay within what the targets take well.
//
// Members: generics on tensors of one static shape, with parallel loops
// only, identity maps on their outputs, bodies free of memory effects that
// never read their outputs' values. An op that reads a member's result
// through another map (a transpose, a broadcast) or as an init is an
// outside reader.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <deque>

namespace rankc {
#define GEN_PASS_DEF_RANKCFUSEMULTIOUTPUT
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Bounds on a merged op: its body's ops and its operands (inputs and
/// outputs; each is a kernel parameter of five or more words on the GPU).
constexpr unsigned kMaxBodyOps = 256;
constexpr unsigned kMaxOperands = 64;

/// The shape of the iteration space of `op` when it can be a member.
std::optional<ArrayRef<int64_t>> memberShape(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0 ||
      op.getNumDpsInits() == 0)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      type.getRank() != int64_t(op.getNumLoops()))
    return std::nullopt;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto t = cast<RankedTensorType>(init.get().getType());
    if (t.getShape() != type.getShape() ||
        !op.getMatchingIndexingMap(&init).isIdentity() ||
        op.payloadUsesValueFromOperand(&init))
      return std::nullopt;
  }
  for (Operation &inner : op.getRegion().front().without_terminator())
    if (!isMemoryEffectFree(&inner))
      return std::nullopt;
  return type.getShape();
}

unsigned bodySize(linalg::GenericOp op) {
  return op.getRegion().front().getOperations().size();
}

/// Elementwise ops of one shape, in block order, not yet merged.
struct Group {
  SmallVector<int64_t> shape;
  SmallVector<linalg::GenericOp> members;
  llvm::SmallPtrSet<Operation *, 16> memberSet;
  /// Distinct (value, map) inputs from outside, and every member's result
  /// (an over-estimate of the outputs: those read only inside are dropped).
  llvm::DenseSet<std::pair<Value, AffineMap>> inputs;
  unsigned results = 0;
  unsigned bodyOps = 0;
  bool open = true;
};

class Merger {
public:
  explicit Merger(Block &block) : block(block) {}

  void run() {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      visit(&op);
      readers.erase(&op);
    }
    for (Group &g : groups)
      if (g.open)
        close(g, block.getTerminator() ? block.getTerminator() : nullptr);
  }

private:
  Block &block;
  std::deque<Group> groups;
  /// Ops of the block that read a member's result (or hold one that does),
  /// and the groups whose results they read.
  llvm::DenseMap<Operation *, SmallVector<Group *, 2>> readers;

  static bool fromGroup(Value v, Group &g) {
    Operation *def = v.getDefiningOp();
    return def && g.memberSet.contains(def);
  }

  /// The operands `g`'s merged op would have with `op` in it.
  static unsigned operandsWith(Group &g, linalg::GenericOp op) {
    unsigned count = g.inputs.size() + g.results + op->getNumResults();
    for (OpOperand *in : op.getDpsInputOperands())
      if (!fromGroup(in->get(), g) &&
          !g.inputs.contains({in->get(), op.getMatchingIndexingMap(in)}))
        ++count;
    return count;
  }

  /// Whether every read `op` makes of `g`'s results is as an input through
  /// an identity map, so that it reads the value of the same iteration.
  bool readsOnlyInPlace(linalg::GenericOp op, Group &g) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (fromGroup(init.get(), g))
        return false;
    for (OpOperand *in : op.getDpsInputOperands())
      if (fromGroup(in->get(), g) &&
          !op.getMatchingIndexingMap(in).isIdentity())
        return false;
    bool captured = false;
    op.getRegion().walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        captured |= fromGroup(v, g);
    });
    return !captured;
  }

  void visit(Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    std::optional<ArrayRef<int64_t>> shape;
    if (generic)
      shape = memberShape(generic);
    // The group it can join: one of its shape that it reads only in place.
    Group *join = nullptr;
    if (shape)
      for (Group &g : groups)
        if (g.open && ArrayRef<int64_t>(g.shape) == *shape)
          join = &g;
    auto it = readers.find(op);
    if (it != readers.end())
      for (Group *g : it->second) {
        if (!g->open)
          continue;
        if (g == join && readsOnlyInPlace(generic, *g))
          continue;
        if (g == join)
          join = nullptr;
        close(*g, op);
      }
    if (!shape) {
      // Nothing moves past an op with effects (a message, a call).
      if (!isMemoryEffectFree(op))
        for (Group &g : groups)
          if (g.open)
            close(g, op);
      return;
    }
    unsigned bodyOps = bodySize(generic);
    if (join && (operandsWith(*join, generic) > kMaxOperands ||
                 join->bodyOps + bodyOps > kMaxBodyOps)) {
      close(*join, op);
      join = nullptr;
    }
    if (!join) {
      groups.emplace_back();
      join = &groups.back();
      join->shape.assign(shape->begin(), shape->end());
    }
    join->members.push_back(generic);
    join->memberSet.insert(generic);
    for (OpOperand *in : generic.getDpsInputOperands())
      if (!fromGroup(in->get(), *join))
        join->inputs.insert({in->get(), generic.getMatchingIndexingMap(in)});
    join->results += generic->getNumResults();
    join->bodyOps += bodyOps;
    for (Value result : generic->getResults())
      for (Operation *user : result.getUsers())
        if (Operation *ancestor = block.findAncestorOpInBlock(*user)) {
          auto &groupsRead = readers[ancestor];
          if (!llvm::is_contained(groupsRead, join))
            groupsRead.push_back(join);
        }
  }

  /// Replaces `g`'s members by one generic placed before `before`.
  void close(Group &g, Operation *before) {
    g.open = false;
    if (g.members.size() < 2)
      return;
    auto isMember = [&](Operation *op) { return g.memberSet.contains(op); };
    // Inputs from outside, each (value, map) once.
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    llvm::DenseMap<std::pair<Value, AffineMap>, unsigned> inputIndex;
    // Results read outside the group: they become the merged op's outputs.
    SmallVector<Value> kept, inits;
    for (linalg::GenericOp m : g.members) {
      for (OpOperand *in : m.getDpsInputOperands()) {
        Operation *def = in->get().getDefiningOp();
        if (def && isMember(def))
          continue;
        auto key = std::make_pair(in->get(), m.getMatchingIndexingMap(in));
        if (inputIndex.try_emplace(key, inputs.size()).second) {
          inputs.push_back(key.first);
          maps.push_back(key.second);
        }
      }
      for (OpResult r : m->getResults()) {
        bool outside = llvm::any_of(r.getUsers(), [&](Operation *user) {
          return !isMember(user);
        });
        if (outside) {
          kept.push_back(r);
          inits.push_back(m.getDpsInitOperand(r.getResultNumber())->get());
        }
      }
    }
    if (kept.empty()) { // read by nothing: keep the last result at least
      OpResult r = g.members.back()->getResult(0);
      kept.push_back(r);
      inits.push_back(g.members.back().getDpsInitOperand(0)->get());
    }
    MLIRContext *ctx = block.getParentOp()->getContext();
    unsigned rank = g.shape.size();
    for (size_t i = 0; i < kept.size(); ++i)
      maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    SmallVector<Location> locs;
    for (linalg::GenericOp m : g.members)
      locs.push_back(m.getLoc());
    OpBuilder b(ctx);
    if (before)
      b.setInsertionPoint(before);
    else
      b.setInsertionPointToEnd(&block);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Location loc = FusedLoc::get(ctx, locs);
    auto merged = linalg::GenericOp::create(
        b, loc, ValueRange(kept).getTypes(), inputs,
        inits, maps, iterators,
        [&](OpBuilder &nb, Location, ValueRange args) {
          // The scalar each member result has in this iteration.
          llvm::DenseMap<Value, Value> scalar;
          for (linalg::GenericOp m : g.members) {
            Block &body = m.getRegion().front();
            IRMapping map;
            for (OpOperand *in : m.getDpsInputOperands()) {
              BlockArgument arg = body.getArgument(in->getOperandNumber());
              Operation *def = in->get().getDefiningOp();
              if (def && isMember(def))
                map.map(arg, scalar.lookup(in->get()));
              else
                map.map(arg, args[inputIndex.lookup(
                                 {in->get(), m.getMatchingIndexingMap(in)})]);
            }
            for (Operation &inner : body.without_terminator())
              nb.clone(inner, map);
            auto yield = cast<linalg::YieldOp>(body.getTerminator());
            for (auto [r, v] : llvm::zip(m->getResults(), yield.getValues()))
              scalar[r] = map.lookupOrDefault(v);
          }
          SmallVector<Value> yields;
          for (Value r : kept)
            yields.push_back(scalar.lookup(r));
          linalg::YieldOp::create(nb, loc, yields);
        });
    for (auto [r, v] : llvm::zip(kept, merged->getResults()))
      r.replaceAllUsesWith(v);
    for (linalg::GenericOp m : llvm::reverse(g.members)) {
      m->dropAllUses(); // results read only by members erased here
      m->erase();
    }
  }
};

struct FuseMultiOutputPass
    : public rankc::impl::RankcFuseMultiOutputBase<FuseMultiOutputPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    // Not the bodies of linalg ops (scalars): the blocks that hold them.
    getOperation()->walk([&](Block *block) {
      if (!isa<linalg::LinalgOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      Merger(*block).run();
  }
};

} // namespace
