//===- CrossRankTest.cpp - the cross-rank graph's numbering and order -----===//

#include "rankc/Analysis/CrossRankGraph.h"
#include "rankc/Frontend/DagProgramGraph.h"
#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagReader.h"

#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

using namespace rankc;

namespace {

struct CrossRank : ::testing::Test {
  CrossRank()
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          errors.push_back(d.str());
          return mlir::success();
        }) {}
  mlir::FailureOr<CrossRankGraph> build(const std::string &text) {
    auto doc = dag::readDag(&ctx, "t.json", text);
    if (mlir::failed(doc) || mlir::failed(dag::checkDag(&ctx, *doc)))
      return mlir::failure();
    document = std::move(*doc);
    graphs = buildProgramGraphs(&ctx, document);
    return CrossRankGraph::build(&ctx, document.worldSize, graphs);
  }
  mlir::MLIRContext ctx;
  mlir::ScopedDiagnosticHandler handler;
  std::vector<std::string> errors;
  dag::Document document;
  std::vector<ProgramGraph> graphs;
};

const char *kTwoRanks = R"({"world_size": 2, "programs": [
 {"ranks": [0], "nodes": [
   {"id": "x", "op": "input", "shape": [2], "dtype": "f32"},
   {"id": "a", "op": "send", "args": ["x"], "dest": 1, "tag": "zeta"},
   {"id": "b", "op": "send", "args": ["x"], "dest": 1, "tag": 900},
   {"id": "r", "op": "recv", "src": 1, "tag": 5, "shape": [2], "dtype": "f32"},
   {"id": "g", "op": "allreduce", "args": ["r"], "reduce": "sum", "tag": "alpha"}]},
 {"ranks": [1], "nodes": [
   {"id": "p", "op": "recv", "src": 0, "tag": 900, "shape": [2], "dtype": "f32"},
   {"id": "q", "op": "recv", "src": 0, "tag": "zeta", "shape": [2], "dtype": "f32"},
   {"id": "s", "op": "send", "args": ["q"], "dest": 0, "tag": 5},
   {"id": "g", "op": "allreduce", "args": ["p"], "reduce": "sum", "tag": "alpha"}]}]})";

TEST_F(CrossRank, NumbersTagsDenselyIntegersFirst) {
  auto g = build(kTwoRanks);
  ASSERT_TRUE(mlir::succeeded(g)) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(g->numTags(), 4u);
  EXPECT_EQ(g->mpiTag(TagValue(int64_t(5))), 0);
  EXPECT_EQ(g->mpiTag(TagValue(int64_t(900))), 1);
  EXPECT_EQ(g->mpiTag(TagValue(std::string("alpha"))), 2);
  EXPECT_EQ(g->mpiTag(TagValue(std::string("zeta"))), 3);
  EXPECT_EQ(g->mpiTag(TagValue(int64_t(6))), -1);
  EXPECT_EQ(g->numMessages(), 3u);
  EXPECT_EQ(g->numCollectives(), 1u);
  EXPECT_EQ(g->links().size(), 3u);
}

TEST_F(CrossRank, OrderIsTopologicalAcrossRanks) {
  auto g = build(kTwoRanks);
  ASSERT_TRUE(mlir::succeeded(g));
  // Graph nodes are in topological order per program; find them by id.
  auto pos = [&](unsigned program, const char *id) {
    const ProgramGraph &pg = graphs[program];
    for (uint32_t n = 0; n < pg.numNodes(); ++n)
      if (pg.nodeId(n) == id)
        return g->position(program, n);
    ADD_FAILURE() << id;
    return 0u;
  };
  // send zeta (rank 0) -> recv q (rank 1) -> send 5 -> recv r (rank 0).
  EXPECT_LT(pos(0, "a"), pos(1, "q"));
  EXPECT_LT(pos(1, "q"), pos(1, "s"));
  EXPECT_LT(pos(1, "s"), pos(0, "r"));
  // The collective comes after every rank's input and before every result.
  uint32_t c = g->collectivePosition(TagValue(std::string("alpha")));
  EXPECT_LT(pos(0, "r"), c);
  EXPECT_LT(pos(1, "p"), c);
  EXPECT_LT(c, pos(0, "g"));
  EXPECT_LT(c, pos(1, "g"));
}

TEST_F(CrossRank, SpmdOffsetsResolvePerRank) {
  auto g = build(R"({"world_size": 5, "programs": [{"ranks": "all", "nodes": [
     {"id": "x", "op": "input", "shape": [1], "dtype": "i64"},
     {"id": "s", "op": "send", "args": ["x"], "dest": {"offset": -7}, "tag": 1},
     {"id": "r", "op": "recv", "src": {"offset": 7}, "tag": 1, "shape": [1], "dtype": "i64"}]}]})");
  ASSERT_TRUE(mlir::succeeded(g)) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(g->numMessages(), 5u); // one per rank
  EXPECT_EQ(g->links().size(), 1u); // one program-level message
}

// One program on all ranks with offset peers is checked on rank 0 alone
// (every rank is rank 0 shifted): the largest world checks at once, and
// the problems found are named as a check of every rank names them first.
TEST_F(CrossRank, SpmdOffsetsCheckedOnRankZeroForTheLargestWorld) {
  auto g = build(R"({"world_size": 16777216, "programs": [{"ranks": "all", "nodes": [
     {"id": "x", "op": "input", "shape": [1], "dtype": "f32"},
     {"id": "s", "op": "send", "args": ["x"], "dest": {"offset": 1}, "tag": 1},
     {"id": "t", "op": "send", "args": ["x"], "dest": {"offset": -3}, "tag": 1},
     {"id": "r", "op": "recv", "src": {"offset": -1}, "tag": 1, "shape": [1], "dtype": "f32"},
     {"id": "q", "op": "recv", "src": {"offset": 3}, "tag": 1, "shape": [1], "dtype": "f32"}]}]})");
  ASSERT_TRUE(mlir::succeeded(g)) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(g->numMessages(), 2u * 16777216u);
  EXPECT_EQ(g->links().size(), 2u);
}

TEST_F(CrossRank, SpmdOffsetsMismatchNamesRankZero) {
  auto g = build(R"({"world_size": 1000, "programs": [{"ranks": "all", "nodes": [
     {"id": "x", "op": "input", "shape": [1], "dtype": "f32"},
     {"id": "s", "op": "send", "args": ["x"], "dest": {"offset": 2}, "tag": 1},
     {"id": "r", "op": "recv", "src": {"offset": -1}, "tag": 1, "shape": [1], "dtype": "f32"}]}]})");
  ASSERT_TRUE(mlir::failed(g));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("rank 0 receives 'r' from rank 999 with tag 1, but "
                           "rank 999 (program all) sends nothing to rank 0"),
            std::string::npos)
      << errors[0];
}

TEST_F(CrossRank, SpmdOffsetsTypeMismatchNamesTheSender) {
  auto g = build(R"({"world_size": 8, "programs": [{"ranks": "all", "nodes": [
     {"id": "x", "op": "input", "shape": [2], "dtype": "f32"},
     {"id": "s", "op": "send", "args": ["x"], "dest": {"offset": 1}, "tag": 1},
     {"id": "r", "op": "recv", "src": {"offset": -1}, "tag": 1, "shape": [3], "dtype": "f32"}]}]})");
  ASSERT_TRUE(mlir::failed(g));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("rank 7 sends f32[2] ('s') to rank 0 with "
                           "tag 1, but rank 0 receives f32[3] ('r')"),
            std::string::npos)
      << errors[0];
}

} // namespace
