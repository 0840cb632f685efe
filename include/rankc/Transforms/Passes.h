//===- Passes.h - target-independent tensor passes -*- C++ -*-===//
//
// Rewrites of the computation on tensors that every backend runs; none
// knows about communication or a target (descriptions: Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TRANSFORMS_PASSES_H
#define RANKC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Transforms/Passes.h.inc"

/// What both backends do to a program's computation before bufferization:
/// elementwise ops as linalg.generic, chains of them fused into one loop
/// nest or kernel (transposes folded into the GEMMs that read them), halo
/// updates split over their concat's pieces, and ops of one shape read
/// more than once merged into one nest.
void buildTensorFusionPipeline(mlir::OpPassManager &pm);

} // namespace rankc

#endif // RANKC_TRANSFORMS_PASSES_H
