//===- MicroSteps.cpp - the micro-step of each program --------------------===//
//
// With `accumulate` K > 1 every program runs as two functions: the update
// step (the program itself, built by the passes that follow) and the
// micro-step, run on the K - 1 steps between updates. The micro-step is
// built here, before the update step's accumulators, buckets and optimizer:
// a copy of the module in which every program gets its accumulators and the
// optimizer's state in their micro-step form (same arguments and results as
// the update step will have, nothing reduced, nothing updated), partitioned
// on its own (its cross-rank graph is the document's own communication, a
// subset of the update step's). Its functions then move into this module
// renamed `<name>__micro` (a name PTX takes for the kernels made of
// them), the program marked `comm.micro_step_of`. They are
// not programs to the passes that follow (no `comm.ranks`); MPI tags are
// assigned to their messages with the update step's, the same tag values
// getting the same MPI tags.
//
//===----------------------------------------------------------------------===//

#include "OptimizerBuilders.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {
#define GEN_PASS_DEF_COMMMICROSTEPS
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {
constexpr StringLiteral kSuffix = "__micro";

struct MicroStepsPass
    : public rankc::impl::CommMicroStepsBase<MicroStepsPass> {
  using CommMicroStepsBase::CommMicroStepsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dp = module->getAttrOfType<comm::DataParallelAttr>(
        comm::CommDialect::kDataParallel);
    if (!dp || dp.getAccumulateOr1() <= 1 ||
        module->hasAttr(comm::CommDialect::kPartitioned))
      return;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kMicroStepOf))
        return; // built already
    int64_t k = dp.getAccumulateOr1();

    // The copy lives in a module nested in this one while the partitioner
    // runs on it (a pass may run a pipeline on what it contains).
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto copy = cast<ModuleOp>(b.clone(*module.getOperation()));
    copy.getBody()->walk([&](ModuleOp nested) {
      if (nested != copy)
        nested.erase();
    });
    for (auto fn : copy.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(comm::CommDialect::kRanks))
        continue;
      if (failed(accumulateGradients(fn, k, /*micro=*/true)) ||
          (dp.getOptimizer() &&
           failed(applyOptimizer(fn, dp.getOptimizer(), k, /*micro=*/true)))) {
        copy.erase();
        return signalPassFailure();
      }
    }
    OpPassManager pm(ModuleOp::getOperationName());
    CommPartitionOptions options;
    options.eagerSends = eagerSends;
    pm.addPass(createCommPartition(options));
    if (failed(runPipeline(pm, copy))) {
      copy.erase();
      return signalPassFailure();
    }

    // Renamed (uses too) and moved out: `P__micro` and its parts. Other
    // functions (the runtime's declarations) are this module's already.
    SmallVector<func::FuncOp> funcs;
    for (auto fn : copy.getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks) ||
          fn->hasAttr(comm::CommDialect::kPartOf))
        funcs.push_back(fn);
    for (func::FuncOp fn : funcs) {
      StringAttr name = b.getStringAttr(fn.getName() + kSuffix);
      if (failed(SymbolTable::replaceAllSymbolUses(fn, name, copy)))
        return signalPassFailure();
      SymbolTable::setSymbolName(fn, name);
      if (auto of = fn->getAttrOfType<StringAttr>(comm::CommDialect::kPartOf))
        fn->setAttr(comm::CommDialect::kPartOf,
                    b.getStringAttr(of.getValue() + kSuffix));
    }
    for (func::FuncOp fn : funcs) {
      if (auto ranks = fn->removeAttr(comm::CommDialect::kRanks)) {
        StringRef program = fn.getName().drop_back(kSuffix.size());
        fn->setAttr(comm::CommDialect::kMicroStepOf, b.getStringAttr(program));
        fn->removeAttr(comm::CommDialect::kState);
      }
      fn->remove();
      module.push_back(fn);
    }
    copy.erase();
  }
};
} // namespace
