//===- Pipeline.cpp - the pipeline of `rankc compile` ---------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void rankc::buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous) {
  pm.addPass(createCommVerifyRanks());
  pm.addPass(createCommBucketGradients());
  pm.addPass(createCommPartition(CommPartitionOptions{!bulkSynchronous}));
  pm.addPass(createCommAssignMpiTags());
}

void rankc::buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                                     bool bulkSynchronous) {
  pm.addPass(createCommLowerToRuntime(
      CommLowerToRuntimeOptions{bulkSynchronous}));
  pm.addPass(mlir::bufferization::createEmptyTensorToAllocTensorPass());
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createConvertLinalgToLoopsPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  // What LLVM has intrinsics for first; the rest (erf, ...) from libm.
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
}

void rankc::registerRankcPipelines() {
  mlir::PassPipelineRegistration<>(
      "rankc-lower-cpu",
      "From one partitioned program's module to the LLVM dialect (CPU)",
      [](mlir::OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "rankc-pipeline",
      "What `rankc compile --emit mlir` runs: verify ranks, partition, assign MPI tags",
      [](mlir::OpPassManager &pm) { buildRankcPipeline(pm); });
}
