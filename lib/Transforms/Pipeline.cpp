//===- Pipeline.cpp - the pipeline of `rankc compile` ---------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

void rankc::buildRankcPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createCommVerifyRanks());
  pm.addPass(createCommPartition());
}

void rankc::registerRankcPipelines() {
  mlir::PassPipelineRegistration<>(
      "rankc-pipeline",
      "What `rankc compile --emit mlir` runs: verify ranks, then partition",
      buildRankcPipeline);
}
