//===- Passes.h - the comm dialect's passes -*- C++ -*-===//
//
// Passes over programs whose communication is in the comm dialect: they
// need nothing of a target (descriptions: dialects/comm/Transforms/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DIALECT_COMM_TRANSFORMS_PASSES_H
#define RANKC_DIALECT_COMM_TRANSFORMS_PASSES_H

#include "rankc/Dialect/Comm/Comm.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"

/// Data-parallel gradients averaged in buckets, the optimizer applied,
/// each program split at its messages and every message given its MPI tag
/// (after comm-verify-ranks). `bulkSynchronous`: the baseline schedule of
/// bench/overlap.sh (a send waits for all the work of its level).
void buildCommSchedulePipeline(mlir::OpPassManager &pm,
                               bool bulkSynchronous = false);

} // namespace rankc

#endif // RANKC_DIALECT_COMM_TRANSFORMS_PASSES_H
