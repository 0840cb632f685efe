//===- FuncProgramGraph.cpp - the ProgramGraph of a program function ------===//
//
// Nodes are the top-level ops of the function's body in block order (SSA
// dominance makes that a topological order); a node's arguments are the
// top-level ops whose results it, or any op nested in it, uses.
//
//===----------------------------------------------------------------------===//

#include "rankc/Support/TypeText.h"
#include "rankc/Analysis/ProgramGraph.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Support/DagLocations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace rankc {

static std::string typeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return typeText(t.getShape(), comm::dtypeName(t.getElementType()));
}

static std::optional<GridPeer> gridPeer(comm::GridAttr grid) {
  if (!grid)
    return std::nullopt;
  // (Not brace lists of two iterators: bool pointers would convert to bool
  // and make a list of two flags.)
  GridPeer peer;
  peer.grid.assign(grid.getShape().begin(), grid.getShape().end());
  peer.shift.assign(grid.getShift().begin(), grid.getShift().end());
  ArrayRef<bool> periodic = grid.getPeriodic().asArrayRef();
  peer.periodic.assign(periodic.begin(), periodic.end());
  return peer;
}

ProgramGraph buildProgramGraph(func::FuncOp fn) {
  ProgramGraph g;
  Attribute ranks = fn->getAttr(comm::CommDialect::kRanks);
  if (auto list = dyn_cast_or_null<DenseI64ArrayAttr>(ranks)) {
    g.ranks.assign(list.asArrayRef().begin(), list.asArrayRef().end());
    g.ranksText = "[";
    for (size_t i = 0; i < g.ranks.size(); ++i)
      g.ranksText += (i ? ", " : "") + std::to_string(g.ranks[i]);
    g.ranksText += "]";
  } else {
    g.allRanks = true;
    g.ranksText = "all";
  }

  Block &body = fn.getBody().front();
  auto ops = std::make_shared<std::vector<Operation *>>();
  llvm::DenseMap<Operation *, uint32_t> index;
  llvm::SmallVector<uint32_t, 4> args;
  std::optional<std::string> previousBucketTag;
  for (Operation &op : body.without_terminator()) {
    args.clear();
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (auto it = index.find(def); it != index.end())
            args.push_back(it->second);
    });
    uint32_t node = g.addNode(args);
    index[&op] = node;
    ops->push_back(&op);

    CommEvent e;
    e.node = node;
    if (auto send = dyn_cast<comm::SendOp>(op)) {
      e.kind = EventKind::Send;
      e.peer = send.getPeer();
      e.relative = send.getRelative();
      e.grid = gridPeer(send.getGridAttr());
      e.type = typeOf(send.getValue());
    } else if (auto recv = dyn_cast<comm::RecvOp>(op)) {
      e.kind = EventKind::Recv;
      e.peer = recv.getPeer();
      e.relative = recv.getRelative();
      e.grid = gridPeer(recv.getGridAttr());
      e.type = typeOf(recv.getResult());
    } else if (auto all = dyn_cast<comm::AllReduceOp>(op)) {
      e.kind = EventKind::AllReduce;
      e.type = typeOf(all.getValue());
      e.reduce = comm::stringifyReduceKind(all.getReduce()).str();
      // Gradient buckets start in bucket order, as DDP's reducer does.
      if (auto bucket =
              all->getAttrOfType<comm::BucketAttr>(comm::CommDialect::kBucket)) {
        if (previousBucketTag)
          e.startsAfter = *previousBucketTag;
        previousBucketTag = cast<StringAttr>(all.getTag()).str();
      }
    } else {
      continue;
    }
    Attribute tag = op.getAttr("tag");
    if (auto i = dyn_cast<IntegerAttr>(tag))
      e.tag = i.getInt();
    else
      e.tag = cast<StringAttr>(tag).str();
    g.addEvent(std::move(e));
  }
  // Names: the DAG's node id and op where the location has them, else the
  // op's name and index.
  g.nodeId = [ops](uint32_t n) {
    std::string id = dag::dagNodeId((*ops)[n]->getLoc());
    return id.empty() ? "#" + std::to_string(n) : id;
  };
  g.opName = [ops](uint32_t n) {
    Operation *op = (*ops)[n];
    std::string name = dag::dagOpName(op->getLoc());
    if (!name.empty())
      return name;
    // comm.send -> send: the DAG's spelling, as for nodes read from JSON.
    StringRef opName = op->getName().getStringRef();
    opName.consume_front("comm.");
    return opName.str();
  };
  g.location = [ops](uint32_t n) { return (*ops)[n]->getLoc(); };
  return g;
}

} // namespace rankc
