//===- Driver.cpp - what `rankc check` and `rankc compile` do -------------===//

#include "rankc/Driver/Driver.h"
#include "rankc/Analysis/CrossRankGraph.h"
#include "rankc/Analysis/DagProgramGraph.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagReader.h"
#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace rankc {

namespace {
struct Counts {
  size_t programs = 0, nodes = 0, sends = 0, recvs = 0, allreduces = 0;
};

void printSummary(llvm::raw_ostream &out, StringRef input, int64_t worldSize,
                  const Counts &c, const CrossRankGraph &g) {
  out << input << ": ok: world_size " << worldSize << ", " << c.programs
      << " program" << (c.programs == 1 ? "" : "s") << ", " << c.nodes
      << " nodes, " << c.sends << " sends, " << c.recvs << " receives, "
      << c.allreduces << " allreduces; " << g.numMessages()
      << " messages matched across ranks, " << g.numCollectives()
      << " collectives, no deadlock\n";
}

Counts countEvents(ArrayRef<ProgramGraph> graphs) {
  Counts c;
  c.programs = graphs.size();
  for (const ProgramGraph &g : graphs) {
    c.nodes += g.numNodes();
    for (const CommEvent &e : g.events) {
      c.sends += e.kind == EventKind::Send;
      c.recvs += e.kind == EventKind::Recv;
      c.allreduces += e.kind == EventKind::AllReduce;
    }
  }
  return c;
}
} // namespace

LogicalResult checkInput(MLIRContext &ctx, StringRef input,
                         llvm::SourceMgr &sourceMgr, TimingScope &timing,
                         llvm::raw_ostream &out) {
  if (input.ends_with(".mlir")) {
    OwningOpRef<ModuleOp> module = loadProgram(&ctx, input, sourceMgr, timing);
    if (!module)
      return failure();
    TimingScope t = timing.nest("verify ranks");
    std::vector<ProgramGraph> graphs;
    for (auto fn : module->getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks))
        graphs.push_back(buildProgramGraph(fn));
    int64_t ws = module->getOperation()
                     ->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize)
                     .getInt();
    FailureOr<CrossRankGraph> g = CrossRankGraph::build(&ctx, ws, graphs);
    if (failed(g))
      return failure();
    printSummary(out, input, ws, countEvents(graphs), *g);
    return success();
  }

  TimingScope readTimer = timing.nest("read JSON");
  FailureOr<dag::Document> doc = dag::readDagFile(&ctx, input);
  readTimer.stop();
  if (failed(doc))
    return failure();
  TimingScope checkTimer = timing.nest("check DAG");
  if (failed(dag::checkDag(&ctx, *doc)))
    return failure();
  checkTimer.stop();
  TimingScope verifyTimer = timing.nest("verify ranks");
  std::vector<ProgramGraph> graphs = buildProgramGraphs(&ctx, *doc);
  FailureOr<CrossRankGraph> g = CrossRankGraph::build(&ctx, doc->worldSize, graphs);
  if (failed(g))
    return failure();
  verifyTimer.stop();
  printSummary(out, input, doc->worldSize, countEvents(graphs), *g);
  return success();
}

/// The bucket flags replace the document's data_parallel settings.
static void applyBucketFlags(ModuleOp module, const CompileOptions &o) {
  auto dp = module->getAttrOfType<DictionaryAttr>(
      comm::CommDialect::kDataParallel);
  if (!dp)
    return;
  Builder b(module.getContext());
  NamedAttrList attrs(dp);
  if (o.bucketCapMb)
    attrs.set("bucket_cap_mb", b.getF64FloatAttr(*o.bucketCapMb));
  if (o.firstBucketCapMb)
    attrs.set("first_bucket_cap_mb", b.getF64FloatAttr(*o.firstBucketCapMb));
  if (o.bucketOrder)
    attrs.set("order", b.getStringAttr(*o.bucketOrder));
  module->setAttr(comm::CommDialect::kDataParallel,
                  attrs.getDictionary(module.getContext()));
}

OwningOpRef<ModuleOp> compileToPartitioned(MLIRContext &ctx, StringRef input,
                                           const CompileOptions &options,
                                           llvm::SourceMgr &sourceMgr,
                                           TimingScope &timing) {
  OwningOpRef<ModuleOp> module = loadProgram(&ctx, input, sourceMgr, timing);
  if (!module)
    return {};
  applyBucketFlags(*module, options);
  PassManager pm(&ctx);
  pm.enableTiming(timing);
  buildRankcPipeline(pm, options.bulkSynchronous);
  if (failed(runVerifyingOnce(pm, *module, &timing)))
    return {};
  return module;
}

} // namespace rankc
