//===- Pipeline.cpp - the tensor layer's fusion pipeline ------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Passes.h"

void rankc::buildTensorFusionPipeline(mlir::OpPassManager &pm) {
  using mlir::func::FuncOp;
  // Elementwise ops on whole tensors (the importer's form of most nodes)
  // become linalg.generic, as every other loop nest already is.
  pm.addNestedPass<FuncOp>(mlir::createConvertElementwiseToLinalgPass());
  // Chains of elementwise ops become one linalg.generic, hence one loop
  // nest or kernel; transposes fold into the GEMMs that read them.
  pm.addNestedPass<FuncOp>(createRankcFuseElementwise());
  // Halo updates read their concat's pieces where they are.
  pm.addNestedPass<FuncOp>(createRankcSplitOverConcat());
  // What is left of a shape and read more than once: one loop nest.
  pm.addNestedPass<FuncOp>(createRankcFuseMultiOutput());
  // Takes whose bodies fusion copied into every reader: only their
  // index checks are left to run.
  pm.addNestedPass<FuncOp>(createRankcPruneDeadChecks());
}
