//===- Partition.cpp - split programs at communication boundaries ---------===//
//
// For each program function, in one linear sweep over its top-level ops:
//
// 1. Waits (receives and allreduces) are numbered in the order of the
//    cross-rank graph's topological order; an op's level is the number of
//    the latest wait it depends on (0: none).
//    A cheap elementwise op (a few arith ops per element: memory-bound)
//    whose every user is elementwise work of later levels moves to the
//    earliest of them (sinkElementwise): computed early, its result would
//    be written out and read back across the parts' boundary, which costs
//    more than the overlap it buys; computed with its users, it fuses into
//    them (rankc-fuse-elementwise) for nothing. Costlier work (math
//    functions, longer bodies) stays early, to overlap the wait.
// 2. Messages going out (sends, allreduce inputs) are taken in the same
//    order; for each, the not yet placed work of its level that it needs
//    becomes a part of its own, so the message leaves as early as possible.
//    The rest of the level forms the level's last part.
// 3. Each part is outlined into a private function; the program becomes the
//    schedule: level 0's parts and sends, wait 1, level 1's parts and sends,
//    and so on. Constants and empty tensors are cloned into the parts.
//
// Why this is deadlock-free on every rank: every rank runs its waits in the
// order of one global topological order, and a wait only follows work whose
// own waits come earlier in that order; by induction on that order every
// wait completes (receives are posted at the start; see CrossRankGraph.h).
//
//===----------------------------------------------------------------------===//

#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace rankc {
#define GEN_PASS_DEF_COMMPARTITION
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

enum class Role : uint8_t { Compute, Free, Comm };

/// One step of a program's schedule.
struct Step {
  enum Kind : uint8_t { Wait, Call, Send } kind;
  Operation *op = nullptr; // the wait or send
  int32_t part = -1;       // for Call
};

class ProgramPartitioner {
public:
  ProgramPartitioner(func::FuncOp fn, uint32_t program, const ProgramGraph &g,
                     const CrossRankGraph &x, SymbolTable &symbols,
                     bool eagerSends)
      : fn(fn), program(program), g(g), x(x), symbols(symbols),
        eagerSends(eagerSends) {}

  void run();

private:
  void classify();
  void assignLevels();
  void sinkElementwise();
  void planSteps();
  std::vector<uint32_t> collectFor(uint32_t outgoing, uint32_t level);
  int32_t newPart(std::vector<uint32_t> nodes);
  void outline(int32_t part, Operation *&insertAfter);
  void reorder();

  func::FuncOp fn;
  uint32_t program;
  const ProgramGraph &g;
  const CrossRankGraph &x;
  SymbolTable &symbols;
  bool eagerSends;

  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, uint32_t> index;
  std::vector<Role> role;
  std::vector<uint32_t> level;
  std::vector<uint32_t> waits; // nodes, in schedule order
  std::vector<int32_t> partOf;
  std::vector<std::vector<uint32_t>> parts;
  std::vector<func::CallOp> calls;
  std::vector<Step> steps;
};

void ProgramPartitioner::classify() {
  Block &body = fn.getBody().front();
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
    if (isa<comm::SendOp, comm::RecvOp, comm::AllReduceOp>(op))
      role.push_back(Role::Comm);
    else if (op.getNumOperands() == 0 && op.getNumRegions() == 0 &&
             isMemoryEffectFree(&op))
      role.push_back(Role::Free); // constants, empty tensors: cloned freely
    else
      role.push_back(Role::Compute);
  }
  partOf.assign(ops.size(), -1);
}

void ProgramPartitioner::assignLevels() {
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (isa<comm::RecvOp, comm::AllReduceOp>(ops[i]))
      waits.push_back(i);
  llvm::sort(waits, [&](uint32_t a, uint32_t b) {
    return x.position(program, a) < x.position(program, b);
  });
  std::vector<uint32_t> waitNumber(ops.size(), 0);
  for (uint32_t w = 0; w < waits.size(); ++w)
    waitNumber[waits[w]] = w + 1;
  level.assign(ops.size(), 0);
  for (uint32_t i = 0; i < ops.size(); ++i) {
    uint32_t l = 0;
    for (uint32_t a : g.argsOf(i))
      l = std::max(l, level[a]);
    level[i] = waitNumber[i] ? waitNumber[i] : l;
  }
}

/// An elementwise op on a whole tensor (as the importer writes most nodes).
static bool isTensorElementwise(Operation *op) {
  return op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType()) &&
         OpTrait::hasElementwiseMappableTraits(op);
}

static bool isElementwise(Operation *op) {
  if (isTensorElementwise(op))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && op->getNumResults() == 1 &&
         linalg::isElementwise(linalgOp);
}

/// Elementwise, and at most a few arith ops per element: cheaper to
/// recompute in its user's loop than to store and load.
static bool isCheapElementwise(Operation *op) {
  if (isTensorElementwise(op))
    return isa<arith::ArithDialect>(op->getDialect());
  if (!isElementwise(op))
    return false;
  unsigned count = 0;
  for (Operation &inner : op->getRegion(0).front().without_terminator())
    if (!isa<arith::ArithDialect>(inner.getDialect()) || ++count > 4)
      return false;
  return true;
}

void ProgramPartitioner::sinkElementwise() {
  std::vector<llvm::SmallVector<uint32_t, 2>> users(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i)
    for (uint32_t a : g.argsOf(i))
      users[a].push_back(i);
  // Users first, so that a chain moves as a whole. A user that is a
  // message (a send, an allreduce) keeps its producer where it is.
  for (uint32_t i = ops.size(); i-- > 0;) {
    if (role[i] != Role::Compute || users[i].empty() ||
        !isCheapElementwise(ops[i]))
      continue;
    uint32_t to = UINT32_MAX;
    for (uint32_t u : users[i]) {
      if (role[u] != Role::Compute || level[u] <= level[i] ||
          !isElementwise(ops[u])) {
        to = UINT32_MAX;
        break;
      }
      to = std::min(to, level[u]);
    }
    if (to != UINT32_MAX)
      level[i] = to;
  }
}

// The unplaced compute ops of `lvl` that outgoing message `out` needs, in a
// topological order (iterative depth-first post-order).
std::vector<uint32_t> ProgramPartitioner::collectFor(uint32_t out,
                                                     uint32_t lvl) {
  std::vector<uint32_t> order;
  std::vector<std::pair<uint32_t, uint32_t>> stack; // node, next arg
  auto wanted = [&](uint32_t n) {
    return role[n] == Role::Compute && level[n] == lvl && partOf[n] == -1;
  };
  const int32_t kVisiting = -2;
  for (uint32_t root : g.argsOf(out)) {
    if (!wanted(root))
      continue;
    partOf[root] = kVisiting;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      auto args = g.argsOf(n);
      if (next == args.size()) {
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      uint32_t a = args[next++];
      if (wanted(a)) {
        partOf[a] = kVisiting;
        stack.push_back({a, 0});
      }
    }
  }
  return order;
}

int32_t ProgramPartitioner::newPart(std::vector<uint32_t> nodes) {
  int32_t id = parts.size();
  for (uint32_t n : nodes)
    partOf[n] = id;
  parts.push_back(std::move(nodes));
  steps.push_back({Step::Call, nullptr, id});
  return id;
}

void ProgramPartitioner::planSteps() {
  // Outgoing messages by the level of the value they carry, then by order.
  std::vector<uint32_t> outgoing;
  std::vector<uint32_t> outLevel(ops.size(), 0);
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (!isa<comm::SendOp, comm::AllReduceOp>(ops[i]))
      continue;
    for (uint32_t a : g.argsOf(i))
      outLevel[i] = std::max(outLevel[i], level[a]);
    outgoing.push_back(i);
  }
  llvm::sort(outgoing, [&](uint32_t a, uint32_t b) {
    return std::make_pair(outLevel[a], x.position(program, a)) <
           std::make_pair(outLevel[b], x.position(program, b));
  });
  // Compute ops of each level, in block order.
  std::vector<std::vector<uint32_t>> byLevel(waits.size() + 1);
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (role[i] == Role::Compute)
      byLevel[level[i]].push_back(i);

  size_t next = 0;
  for (uint32_t lvl = 0; lvl <= waits.size(); ++lvl) {
    if (lvl > 0)
      steps.push_back({Step::Wait, ops[waits[lvl - 1]], -1});
    size_t first = next;
    for (; eagerSends && next < outgoing.size() &&
           outLevel[outgoing[next]] == lvl;
         ++next) {
      uint32_t out = outgoing[next];
      std::vector<uint32_t> needed = collectFor(out, lvl);
      if (!needed.empty())
        newPart(std::move(needed));
      if (isa<comm::SendOp>(ops[out]))
        steps.push_back({Step::Send, ops[out], -1});
    }
    std::vector<uint32_t> rest;
    for (uint32_t n : byLevel[lvl])
      if (partOf[n] == -1)
        rest.push_back(n);
    if (!rest.empty())
      newPart(std::move(rest));
    // Bulk-synchronous: the level's sends only after all of its work.
    if (!eagerSends)
      for (next = first; next < outgoing.size() &&
                         outLevel[outgoing[next]] == lvl;
           ++next)
        if (isa<comm::SendOp>(ops[outgoing[next]]))
          steps.push_back({Step::Send, ops[outgoing[next]], -1});
  }
}

void ProgramPartitioner::outline(int32_t part, Operation *&insertAfter) {
  Block &body = fn.getBody().front();
  const std::vector<uint32_t> &nodes = parts[part];
  auto inThisPart = [&](Operation *op) {
    auto it = index.find(op);
    return it != index.end() && partOf[it->second] == part;
  };
  // Inputs: values of the program's body used here but made elsewhere.
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> cloned; // free ops to copy in
  for (uint32_t n : nodes)
    ops[n]->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (v.getParentBlock() != &body)
          continue;
        Operation *def = v.getDefiningOp();
        if (def && inThisPart(def))
          continue;
        auto it = def ? index.find(def) : index.end();
        if (it != index.end() && role[it->second] == Role::Free)
          cloned.insert(def);
        else
          inputs.insert(v);
      }
    });
  // Outputs: values made here and used anywhere else.
  llvm::SetVector<Value> outputs;
  for (uint32_t n : nodes)
    for (Value r : ops[n]->getResults())
      for (Operation *user : r.getUsers())
        if (!inThisPart(body.findAncestorOpInBlock(*user))) {
          outputs.insert(r);
          break;
        }

  OpBuilder b(fn.getContext());
  SmallVector<Type> inTypes, outTypes;
  for (Value v : inputs)
    inTypes.push_back(v.getType());
  for (Value v : outputs)
    outTypes.push_back(v.getType());
  Location loc = ops[nodes.back()]->getLoc();
  auto partFn = func::FuncOp::create(
      fn.getLoc(), (fn.getName() + "_part" + Twine(part)).str(),
      b.getFunctionType(inTypes, outTypes));
  partFn.setPrivate();
  partFn->setAttr(comm::CommDialect::kPartOf, b.getStringAttr(fn.getName()));
  symbols.insert(partFn, std::next(Block::iterator(insertAfter)));
  insertAfter = partFn;

  // The part's ops move into it (cloning a million ops and erasing the
  // originals was most of this pass); free ops (constants, empty tensors)
  // that other parts read too are copied. Operands made outside become the
  // part's arguments.
  Block *entry = partFn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(inputs, entry->getArguments())) {
    map.map(v, arg);
    arg.setLoc(v.getLoc());
  }
  for (Operation *def : cloned)
    b.clone(*def, map);
  for (uint32_t n : nodes) {
    ops[n]->moveBefore(entry, entry->end());
    ops[n]->walk([&](Operation *inner) {
      for (OpOperand &operand : inner->getOpOperands())
        if (Value to = map.lookupOrNull(operand.get()))
          operand.set(to);
    });
  }
  func::ReturnOp::create(b, loc, outputs.getArrayRef());

  // In the program: one call instead of the part's ops.
  b.setInsertionPoint(body.getTerminator());
  auto call = func::CallOp::create(b, loc, partFn, inputs.getArrayRef());
  for (auto [v, r] : llvm::zip(outputs, call.getResults()))
    Value(v).replaceUsesWithIf(r, [&](OpOperand &use) {
      return !partFn->isAncestor(use.getOwner());
    });
  for (uint32_t n : nodes) {
    index.erase(ops[n]);
    ops[n] = nullptr;
  }
  calls.push_back(call);
}

void ProgramPartitioner::reorder() {
  Block &body = fn.getBody().front();
  Operation *terminator = body.getTerminator();
  // Constants and empty tensors still used by the schedule go first.
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (!ops[i] || role[i] != Role::Free)
      continue;
    if (ops[i]->use_empty())
      ops[i]->erase();
    else
      ops[i]->moveBefore(&body, body.begin());
  }
  for (const Step &s : steps)
    (s.kind == Step::Call ? calls[s.part].getOperation() : s.op)
        ->moveBefore(terminator);
}

void ProgramPartitioner::run() {
  classify();
  assignLevels();
  sinkElementwise();
  planSteps();
  Operation *insertAfter = fn;
  for (int32_t p = 0; p < int32_t(parts.size()); ++p)
    outline(p, insertAfter);
  reorder();
}

struct PartitionPass : public rankc::impl::CommPartitionBase<PartitionPass> {
  using CommPartitionBase::CommPartitionBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module->hasAttr(comm::CommDialect::kPartitioned))
      return markAllAnalysesPreserved();
    auto &analysis = getAnalysis<CrossRankAnalysis>();
    if (failed(analysis.graph))
      return signalPassFailure();
    SymbolTable symbols(module);
    for (uint32_t p = 0; p < analysis.programs.size(); ++p)
      ProgramPartitioner(analysis.programs[p], p, analysis.graphs[p],
                         *analysis.graph, symbols, eagerSends)
          .run();
    module->setAttr(comm::CommDialect::kPartitioned,
                    UnitAttr::get(module.getContext()));
  }
};

} // namespace
