//===- ProgramGraph.h - one program's dependencies and messages -*- C++ -*-===//
//
// What the cross-rank analysis needs of a program, whatever it was read from:
// its nodes in a topological order, each node's arguments, and the
// communication events among them. Two producers build it: the checked JSON
// document (so `rankc check` verifies a million-node DAG without building
// MLIR) and a func.func of the comm-level IR (for the passes). The analysis
// itself (CrossRankGraph) exists once.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_ANALYSIS_PROGRAMGRAPH_H
#define RANKC_ANALYSIS_PROGRAMGRAPH_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlir::func {
class FuncOp;
}

namespace rankc {

enum class EventKind : uint8_t { Send, Recv, AllReduce };

/// A DAG tag as written: an integer or a string.
using TagValue = std::variant<int64_t, std::string>;
std::string tagText(const TagValue &tag); // 7 or "halo"

/// A peer on a process grid (dag-format.md v3; rankc/Support/ProcessGrid.h).
struct GridPeer {
  llvm::SmallVector<int64_t, 3> grid, shift;
  llvm::SmallVector<bool, 3> periodic;
  /// The peer of `rank`, or -1 (none: past a non-periodic edge).
  int64_t resolve(int64_t rank) const;
};

/// One send, receive or allreduce of a program.
struct CommEvent {
  uint32_t node = 0; // index into the program's nodes
  EventKind kind = EventKind::Send;
  int64_t peer = 0;      // dest (send) or src (recv); unused for allreduce
  bool relative = false; // peer is an offset from the executing rank
  std::optional<GridPeer> grid; // instead of peer/relative
  TagValue tag;
  std::string type;   // shape and dtype, e.g. "f32[4, 4]": equal iff equal
  std::string reduce; // allreduce only
  /// allreduce only: the collective (by tag) that must start before this
  /// one, e.g. the previous gradient bucket (DDP reduces buckets in order).
  std::optional<TagValue> startsAfter;
};

struct ProgramGraph {
  bool allRanks = false;
  std::vector<int64_t> ranks; // when !allRanks
  std::string ranksText;      // "[0]", "[0, 2]" or "all", for messages

  /// Arguments of node i are args[argBegin[i] .. argBegin[i+1]), all < i.
  std::vector<uint32_t> argBegin{0};
  std::vector<uint32_t> args;
  std::vector<CommEvent> events; // in node order
  /// eventOf[i]: index into events, or -1.
  std::vector<int32_t> eventOf;

  /// Names and locations for diagnostics, computed only when needed.
  std::function<std::string(uint32_t)> nodeId;
  std::function<std::string(uint32_t)> opName;
  std::function<mlir::Location(uint32_t)> location;

  uint32_t numNodes() const { return argBegin.size() - 1; }
  llvm::ArrayRef<uint32_t> argsOf(uint32_t node) const {
    return llvm::ArrayRef<uint32_t>(args).slice(argBegin[node],
                                                argBegin[node + 1] -
                                                    argBegin[node]);
  }
  /// Appends a node; returns its index.
  uint32_t addNode(llvm::ArrayRef<uint32_t> nodeArgs) {
    args.insert(args.end(), nodeArgs.begin(), nodeArgs.end());
    argBegin.push_back(args.size());
    eventOf.push_back(-1);
    return numNodes() - 1;
  }
  void addEvent(CommEvent event) {
    eventOf[event.node] = events.size();
    events.push_back(std::move(event));
  }
};

/// The graph of one program function of the comm-level IR: its top-level
/// ops are the nodes, in block order.
ProgramGraph buildProgramGraph(mlir::func::FuncOp fn);

} // namespace rankc

#endif // RANKC_ANALYSIS_PROGRAMGRAPH_H
