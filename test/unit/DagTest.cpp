//===- DagTest.cpp - units of the frontend not visible in the IR ----------===//

#include "rankc/Frontend/Dag.h"
#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Frontend/DagReader.h"
#include "rankc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace rankc::dag;

namespace {

struct Frontend : ::testing::Test {
  Frontend() {
    handler.emplace(&ctx, [this](mlir::Diagnostic &d) {
      errors.push_back(describeDagLoc(d.getLocation()) + ": " + d.str());
      return mlir::success();
    });
  }
  std::optional<Document> read(const std::string &text) {
    auto doc = readDag(&ctx, "t.json", text);
    if (mlir::failed(doc))
      return std::nullopt;
    return std::move(*doc);
  }
  std::optional<Document> check(const std::string &text) {
    auto doc = read(text);
    if (!doc || mlir::failed(checkDag(&ctx, *doc)))
      return std::nullopt;
    return doc;
  }
  mlir::MLIRContext ctx;
  std::optional<mlir::ScopedDiagnosticHandler> handler;
  std::vector<std::string> errors;
};

std::string oneProgram(const std::string &nodes) {
  return R"({"world_size": 1, "programs": [{"ranks": [0], "nodes": [)" + nodes +
         R"(], "outputs": {}}]})";
}

TEST(Broadcast, NumPyRules) {
  using S = Shape;
  EXPECT_EQ(broadcastShapes(S{3, 1}, S{4}), (S{3, 4}));
  EXPECT_EQ(broadcastShapes(S{}, S{2, 5}), (S{2, 5}));
  EXPECT_EQ(broadcastShapes(S{1, 0}, S{7, 1}), (S{7, 0}));
  EXPECT_EQ(broadcastShapes(S{2, 3}, S{3, 2}), std::nullopt);
  EXPECT_EQ(broadcastShapes(S{0}, S{2}), std::nullopt);
}

TEST(Einsum, ParsesTermsAndRejectsBadSpecs) {
  std::string why;
  auto spec = parseEinsum("bij,bjk->bik", why);
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->inputs, (std::vector<std::string>{"bij", "bjk"}));
  EXPECT_EQ(spec->output, "bik");
  EXPECT_TRUE(parseEinsum("i->", why)); // full reduction to a scalar
  EXPECT_FALSE(parseEinsum("ij,jk", why));
  EXPECT_NE(why.find("explicit output"), std::string::npos);
  EXPECT_FALSE(parseEinsum("ij->ii", why));
  EXPECT_FALSE(parseEinsum("ij->k", why));
  EXPECT_FALSE(parseEinsum("i1->i", why));
}

TEST(DTypes, NamesSizesAndClasses) {
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("float32"), std::nullopt);
  EXPECT_EQ(dtypeBytes(DType::BF16), 2u);
  EXPECT_EQ(dtypeBytes(DType::Bool), 1u);
  EXPECT_TRUE(isFloat(DType::F16));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_EQ(parseOp("broadcast_to"), Op::BroadcastTo);
  EXPECT_STREQ(opName(Op::AllReduce), "allreduce");
}

TEST_F(Frontend, RecordsLineAndColumnOfEveryNode) {
  auto doc = read("{\"world_size\": 1,\n \"programs\": [{\"ranks\": [0],\n"
                  "  \"nodes\": [\n"
                  "   {\"id\": \"a\", \"op\": \"input\", \"shape\": [2], \"dtype\": \"f32\"},\n"
                  "      {\"id\": \"b\", \"op\": \"neg\", \"args\": [\"a\"]}]}]}");
  ASSERT_TRUE(doc);
  const Program &p = doc->programs[0];
  EXPECT_EQ(p.nodes[0].pos.line, 4u);
  EXPECT_EQ(p.nodes[0].pos.col, 4u);
  EXPECT_EQ(p.nodes[1].pos.line, 5u);
  EXPECT_EQ(p.nodes[1].pos.col, 7u);
  EXPECT_EQ(p.ranksText(), "[0]");
}

TEST_F(Frontend, ReadsConstantsTagsAndPeers) {
  auto doc = read(oneProgram(
      R"({"id": "c", "op": "constant", "dtype": "i32", "value": [[1, 2, 3], [4, 5, 6]]},
         {"id": "s", "op": "send", "args": ["c"], "dest": {"offset": -1}, "tag": "halo"},
         {"id": "r", "op": "recv", "src": 0, "tag": 5, "shape": [], "dtype": "bool"})"));
  ASSERT_TRUE(doc);
  const auto &nodes = doc->programs[0].nodes;
  EXPECT_EQ(nodes[0].rare().value.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(nodes[0].rare().value.elements.size(), 6u);
  EXPECT_EQ(nodes[0].rare().value.elements[5].i, 6);
  EXPECT_TRUE(nodes[1].rare().peer.relative);
  EXPECT_EQ(nodes[1].rare().peer.value, -1);
  EXPECT_EQ(std::get<std::string>(nodes[1].rare().tag), "halo");
  EXPECT_FALSE(nodes[2].rare().peer.relative);
  EXPECT_EQ(std::get<int64_t>(nodes[2].rare().tag), 5);
}

TEST_F(Frontend, RejectsRaggedConstants) {
  EXPECT_FALSE(read(oneProgram(
      R"({"id": "c", "op": "constant", "dtype": "i32", "value": [[1, 2], [3]]})")));
  EXPECT_FALSE(read(oneProgram(
      R"({"id": "c", "op": "constant", "dtype": "i32", "value": [1, [2]]})")));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("node 'c'"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("rectangular"), std::string::npos) << errors[0];
}

TEST_F(Frontend, OrdersNodesTopologicallyAndDeterministically) {
  auto doc = check(oneProgram(
      R"({"id": "z", "op": "add", "args": ["y", "x"]},
         {"id": "y", "op": "neg", "args": ["x"]},
         {"id": "x", "op": "input", "shape": [2], "dtype": "f32"})"));
  ASSERT_TRUE(doc) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(doc->programs[0].order, (std::vector<uint32_t>{2, 1, 0}));
}

TEST_F(Frontend, InfersNumPyReductionDTypesAndReshapes) {
  auto doc = check(oneProgram(
      R"({"id": "x", "op": "input", "shape": [2, 3, 4], "dtype": "i32"},
         {"id": "s", "op": "sum", "args": ["x"], "axes": [-1], "keepdims": true},
         {"id": "m", "op": "max", "args": ["x"]},
         {"id": "r", "op": "reshape", "args": ["x"], "shape": [4, -1]})"));
  ASSERT_TRUE(doc) << (errors.empty() ? "" : errors[0]);
  const auto &nodes = doc->programs[0].nodes;
  EXPECT_EQ(nodes[1].outShape, (Shape{2, 3, 1}));
  EXPECT_EQ(nodes[1].outDType, DType::I64);
  EXPECT_EQ(nodes[2].outShape, (Shape{}));
  EXPECT_EQ(nodes[2].outDType, DType::I32);
  EXPECT_EQ(nodes[3].outShape, (Shape{4, 6}));
}

TEST_F(Frontend, DeepChainsDoNotOverflowTheStack) {
  std::string nodes = R"({"id": "n0", "op": "input", "shape": [1], "dtype": "f32"})";
  for (int i = 1; i < 200000; ++i)
    nodes += ",{\"id\": \"n" + std::to_string(i) + "\", \"op\": \"neg\", \"args\": [\"n" +
             std::to_string(i - 1) + "\"]}";
  auto doc = check(oneProgram(nodes));
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->programs[0].order.size(), 200000u);
}

} // namespace
