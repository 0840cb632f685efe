//===- CrossRankBuilder.h - the verifier's state, shared by its files -*- C++ -*-===//
//
// CrossRankGraph.cpp builds and verifies the cross-rank graph;
// GridMatching.cpp matches the messages of a program on a process grid
// (dag-format.md v3) by classes of ranks rather than rank by rank.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_ANALYSIS_CROSSRANKBUILDER_H
#define RANKC_LIB_ANALYSIS_CROSSRANKBUILDER_H

#include "rankc/Analysis/CrossRankGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace rankc {

using mlir::ArrayRef;
using mlir::FailureOr;
using mlir::InFlightDiagnostic;
using mlir::LogicalResult;
using mlir::MLIRContext;

/// One SPMD program whose messages all go to grid peers on one grid shape
/// (GridMatching.cpp checks it by classes of ranks).
bool isOnOneGrid(ArrayRef<ProgramGraph> programs);

/// Builds and verifies the graph; one instance per call of build().
class CrossRankBuilder {
public:
  CrossRankBuilder(MLIRContext *ctx, int64_t worldSize,
                   ArrayRef<ProgramGraph> programs)
      : ctx(ctx), ws(worldSize), programs(programs) {}

  FailureOr<CrossRankGraph> run();

private:
  /// One rank's copy of one event of its program.
  struct Instance {
    int32_t rank;
    uint32_t program;
    uint32_t event;
  };
  using Key = std::tuple<int64_t, int64_t, uint32_t>; // src, dst, tag id

  const CommEvent &eventOf(const Instance &i) const {
    return programs[i.program].events[i.event];
  }
  std::string nodeName(uint32_t program, uint32_t node) const {
    return "'" + programs[program].nodeId(node) + "'";
  }
  std::string nameOf(const Instance &i) const {
    return nodeName(i.program, eventOf(i).node);
  }
  InFlightDiagnostic errorAt(const Instance &i) const {
    return emitError(programs[i.program].location(eventOf(i).node));
  }

  LogicalResult assignRanks();
  void internTags();
  FailureOr<int64_t> resolvePeer(const Instance &i);
  LogicalResult matchMessages();
  /// matchMessages for one SPMD program whose messages all go to peers on
  /// one process grid (GridMatching.cpp).
  LogicalResult matchGridMessages();
  LogicalResult matchCollectives();
  LogicalResult orderProgramLevel();
  void addCollectiveOrder(uint32_t collectiveBase,
                          std::vector<std::pair<uint32_t, uint32_t>> &edges);
  LogicalResult explainCycle();

  MLIRContext *ctx;
  int64_t ws;
  ArrayRef<ProgramGraph> programs;
  CrossRankGraph graph;

  std::vector<int32_t> programOfRank;
  std::vector<std::vector<uint32_t>> tagIds; // per program, per event
  std::vector<TagValue> tagOfId;
  std::vector<std::pair<Instance, Instance>> matched; // (send, recv)
  /// matched holds rank 0's receives only, standing for every rank's
  /// (isTranslationInvariant).
  bool invariant = false;
  llvm::DenseMap<uint32_t, uint32_t> collectiveOfTag; // tag id -> index
  std::vector<uint32_t> collectiveTagIds;
};

} // namespace rankc

#endif // RANKC_LIB_ANALYSIS_CROSSRANKBUILDER_H
