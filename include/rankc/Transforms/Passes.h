//===- Passes.h - rankc's passes --------------------------------*- C++ -*-===//

#ifndef RANKC_TRANSFORMS_PASSES_H
#define RANKC_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Transforms/Passes.h.inc"

/// The pipeline `rankc compile` runs on a comm-level module (verify, then
/// partition); registered as `rankc-pipeline` for rankc-opt.
void buildRankcPipeline(mlir::OpPassManager &pm);
void registerRankcPipelines();

} // namespace rankc

#endif // RANKC_TRANSFORMS_PASSES_H
