//===- OptimizerBuilders.h - pieces of the optimizer's generated step -*- C++ -*-===//
//
// What comm-apply-optimizer builds besides the per-parameter update: the
// learning rate of a step from a schedule (LrSchedule.cpp) and gradient
// clipping by total norm (GradClipping.cpp). Internal to the comm passes.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DIALECT_COMM_TRANSFORMS_OPTIMIZERBUILDERS_H
#define RANKC_DIALECT_COMM_TRANSFORMS_OPTIMIZERBUILDERS_H

#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace rankc {

/// The learning-rate factor of optimizer step `t` (an i64 scalar, 0 for the
/// first update) under `schedule` (#comm.lr_phase list), as an f64 scalar:
/// scalar arith/math ops built at `b`'s insertion point (inside a 0-d
/// linalg.generic's body).
mlir::Value buildLrFactor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value t, mlir::ArrayAttr schedule);

/// torch.nn.utils.clip_grad_norm_ over `grads` (tensors of any float type
/// and shape): the total norm (2 or inf) from one partial per gradient (so
/// that each partial can run as soon as its gradient is averaged), and
/// each gradient times min(1, maxNorm / (total + 1e-6)), in the order of
/// operations PyTorch uses. Returns the clipped gradients; `total` gets the
/// total norm as a 0-d f32 tensor.
llvm::SmallVector<mlir::Value> buildClipGradNorm(mlir::OpBuilder &b,
                                                 mlir::Location loc,
                                                 mlir::ValueRange grads,
                                                 double maxNorm, bool inf,
                                                 mlir::Value &total);

/// comm-apply-optimizer on one program (OptimizerAttr's settings; the
/// micro-steps per update). `micro`: the micro-step's form, with the same
/// arguments and results, where the parameters and the optimizer's state
/// pass through unchanged.
mlir::LogicalResult applyOptimizer(mlir::func::FuncOp fn,
                                   comm::OptimizerAttr opt,
                                   int64_t accumulate, bool micro);

/// comm-accumulate-gradients on one program: each gradient result gets an
/// accumulator (optimizer state "<output>@grad_sum") and is carried as
/// state "<output>@grad" between updates. The update step returns
/// (sum + gradient) / K and a zero accumulator; the micro-step (`micro`)
/// returns the sum as the accumulator and the last update's gradient.
mlir::LogicalResult accumulateGradients(mlir::func::FuncOp fn, int64_t k,
                                        bool micro);

} // namespace rankc

#endif // RANKC_DIALECT_COMM_TRANSFORMS_OPTIMIZERBUILDERS_H
