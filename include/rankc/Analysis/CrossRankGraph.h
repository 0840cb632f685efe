//===- CrossRankGraph.h - all ranks' communication, verified ----*- C++ -*-===//
//
// The cross-rank graph is built once and serves verification, partitioning,
// bucketing and the plan (nobody re-derives matching on their own):
//
//  - every rank instantiates its program (offset peers resolved);
//  - sends and receives match one to one by (source, destination, tag), with
//    equal types; every rank has exactly one allreduce per tag, all alike;
//  - the happens-before graph (local data dependencies, send -> matching
//    receive, every rank's allreduce input -> the collective -> every rank's
//    result) must be acyclic. Receives are assumed to be posted before any
//    wait and sends to be rendezvous: the proof does not rely on buffering.
//
// The schedule order comes from a topological order of the program-level
// graph (each program's ranks folded into one copy): one order per program,
// so one executable serves all of its ranks. For MPMD programs the two graphs
// coincide; a folded cycle is a real deadlock whenever peers are relative.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_ANALYSIS_CROSSRANKGRAPH_H
#define RANKC_ANALYSIS_CROSSRANKGRAPH_H

#include "rankc/Analysis/ProgramGraph.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

namespace rankc {

class CrossRankGraph {
public:
  /// Verifies `programs` on `worldSize` ranks. Emits one diagnostic and fails
  /// at the first problem (its message names ranks, node ids and tags).
  static mlir::FailureOr<CrossRankGraph>
  build(mlir::MLIRContext *ctx, int64_t worldSize,
        llvm::ArrayRef<ProgramGraph> programs);

  /// Position of node `node` of program `program` in the schedule order (a
  /// topological order of the program-level graph, deterministic).
  uint32_t position(uint32_t program, uint32_t node) const {
    return positions[programBase[program] + node];
  }
  /// Position of the collective with `tag` in the same order: collectives
  /// start on every rank in increasing position.
  uint32_t collectivePosition(const TagValue &tag) const;

  /// The MPI tag of a DAG tag: tags are numbered densely, integers ascending
  /// then strings in byte order, the same on every rank.
  int32_t mpiTag(const TagValue &tag) const;
  size_t numTags() const { return tags.size(); }
  const TagValue &tagOfMpiTag(size_t mpiTag) const { return tags[mpiTag]; }

  size_t numMessages() const { return messages; }

  /// Messages between program nodes, one per (send node, receive node) pair
  /// whatever the number of ranks that instantiate it, in a fixed order.
  struct Link {
    uint32_t sendProgram, sendNode, recvProgram, recvNode;
  };
  llvm::ArrayRef<Link> links() const { return programLinks; }
  size_t numCollectives() const { return collectiveTags.size(); }

private:
  std::vector<uint32_t> programBase; // first quotient node of each program
  std::vector<uint32_t> positions;   // per quotient node
  std::vector<TagValue> tags;        // sorted: index = MPI tag
  std::vector<TagValue> collectiveTags;
  std::vector<uint32_t> collectivePositions;
  size_t messages = 0;
  std::vector<Link> programLinks;

  friend class CrossRankBuilder;
};

} // namespace rankc

#endif // RANKC_ANALYSIS_CROSSRANKGRAPH_H
