//===- Driver.cpp - what `rankc check` and `rankc compile` do -------------===//

#include "rankc/Driver/Driver.h"
#include "rankc/Driver/Commands.h"
#include "rankc/Analysis/CrossRankGraph.h"
#include "rankc/Frontend/DagProgramGraph.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagReader.h"
#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace rankc {

namespace {
struct Counts {
  size_t programs = 0, nodes = 0, sends = 0, recvs = 0, allreduces = 0;
  /// data_parallel: the gradients each rank averages with every other
  /// (in buckets, at compile time), the most of any program.
  std::optional<size_t> gradients;
};

void printSummary(llvm::raw_ostream &out, StringRef input, int64_t worldSize,
                  const Counts &c, const CrossRankGraph &g) {
  out << input << ": ok: world_size " << worldSize << ", " << c.programs
      << " program" << (c.programs == 1 ? "" : "s") << ", " << c.nodes
      << " nodes, " << c.sends << " sends, " << c.recvs << " receives, "
      << c.allreduces << " allreduces";
  if (c.gradients)
    out << ", " << *c.gradients << " gradient"
        << (*c.gradients == 1 ? "" : "s")
        << " averaged over all ranks (data_parallel, in buckets)";
  out << "; " << g.numMessages() << " messages matched across ranks, "
      << g.numCollectives() << " collectives, no deadlock\n";
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
    Counts counts = countEvents(graphs);
    if (auto dp = module->getOperation()->getAttrOfType<comm::DataParallelAttr>(
            comm::CommDialect::kDataParallel)) {
      ArrayAttr ignore = dp.getIgnore();
      size_t most = 0;
      for (auto fn : module->getOps<func::FuncOp>()) {
        llvm::StringSet<> params;
        for (unsigned i = 0; i < fn.getNumResults(); ++i)
          if (auto p = fn.getResultAttrOfType<StringAttr>(
                  i, comm::CommDialect::kGradOf))
            if (!ignore || !llvm::is_contained(ignore.getValue(), p))
              params.insert(p.getValue());
        most = std::max<size_t>(most, params.size());
      }
      counts.gradients = most;
    }
    printSummary(out, input, ws, counts, *g);
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
  Counts counts = countEvents(graphs);
  if (doc->dataParallel) {
    const std::vector<std::string> &ignore = doc->dataParallel->ignore;
    size_t most = 0;
    for (const dag::Program &p : doc->programs) {
      llvm::StringSet<> params;
      for (const dag::Output &o : p.outputs)
        if (o.gradOf && !llvm::is_contained(ignore, *o.gradOf))
          params.insert(*o.gradOf);
      most = std::max<size_t>(most, params.size());
    }
    counts.gradients = most;
  }
  printSummary(out, input, doc->worldSize, counts, *g);
  return success();
}

/// The bucket flags replace the document's data_parallel settings.
static void applyBucketFlags(ModuleOp module, const CompileOptions &o) {
  auto dp = module->getAttrOfType<comm::DataParallelAttr>(
      comm::CommDialect::kDataParallel);
  if (!dp)
    return;
  Builder b(module.getContext());
  module->setAttr(
      comm::CommDialect::kDataParallel,
      comm::DataParallelAttr::get(
          module.getContext(),
          o.bucketCapMb ? b.getF64FloatAttr(*o.bucketCapMb)
                        : dp.getBucketCapMb(),
          o.firstBucketCapMb ? b.getF64FloatAttr(*o.firstBucketCapMb)
                             : dp.getFirstBucketCapMb(),
          dp.getIgnore(),
          o.bucketOrder ? b.getStringAttr(*o.bucketOrder) : dp.getOrder(),
          dp.getOptimizer(), dp.getAccumulate()));
}

OwningOpRef<ModuleOp> compileToPartitioned(MLIRContext &ctx, StringRef input,
                                           const CompileOptions &options,
                                           llvm::SourceMgr &sourceMgr,
                                           TimingScope &timing) {
  OwningOpRef<ModuleOp> module = loadProgram(&ctx, input, sourceMgr, timing);
  if (!module)
    return {};
  applyBucketFlags(*module, options);
  if (!options.machine.empty() &&
      failed(applyMachineModel(*module, options.machine, options.profile)))
    return {};
  PassManager pm(&ctx);
  pm.enableTiming(timing);
  buildRankcPipeline(pm, options.bulkSynchronous);
  if (failed(runVerifyingOnce(pm, *module, &timing)))
    return {};
  return module;
}

} // namespace rankc
