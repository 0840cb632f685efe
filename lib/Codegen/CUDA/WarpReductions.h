//===- WarpReductions.h - a row's reduction on one warp -------------------===//
//
// A reduction over the contiguous dimension of its input (layer norm's and
// softmax's statistics over each row, cross-entropy's log-sum-exp) gave
// each output one thread, walking its row alone: neighbouring threads read
// addresses a row apart, and too few outputs meant too few threads, so
// rankc-gpu-split-reductions split it into a partial stage and a final one
// (two kernels and a buffer of partials between). On one warp per output
// instead, lane l reads elements l, l + 32, ... (a warp's loads are 128
// contiguous bytes), the lanes combine their partials through shuffles,
// and lane 0 writes the output: one kernel, 32x the threads.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_WARPREDUCTIONS_H
#define RANKC_LIB_CODEGEN_CUDA_WARPREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace rankc {

/// Whether `dim` is the innermost (contiguous) dimension of `op`'s largest
/// input (the one whose reads cost: an input of targets or an iota beside
/// it is small): a row reduction. Not the first input: cross-entropy's pick
/// of each row's target logit has the targets first, and its [rows, vocab]
/// logits were once split as columns, each thread walking a contiguous
/// chunk of one row while neighbouring threads were rows apart (1.5 ms of a
/// 10 ms GPT step on an H100).
bool reducesContiguousDim(mlir::linalg::LinalgOp op, unsigned dim);

/// Whether `outputs` reductions of `reduced` contiguous elements each are
/// worth a warp per output (the sizes warpReducible asks for).
bool warpSized(int64_t outputs, int64_t reduced);

/// Whether `op` (on tensors or buffers) runs as one warp per output: a
/// linalg.generic with static sizes, one output of 32 bits combined by one
/// op that arith knows the neutral element of, one reduction loop of at
/// least 64 iterations over the largest input's contiguous dimension, and
/// at least 256 outputs (8 warps) or rows of at most 2048 (fewer outputs
/// of longer rows are split instead: too few threads for the reads).
bool warpReducible(mlir::linalg::GenericOp op);

/// Replaces `op` (on buffers, warpReducible) by an scf.parallel over its
/// outputs and the 32 lanes of a warp (innermost: rankc-linalg-to-gpu-loops
/// maps it to thread x, 32 wide). `start`, if set, is every output's
/// initial value (a fill folded in) instead of what the output holds.
mlir::FailureOr<mlir::scf::ParallelOp>
lowerAsWarpReduction(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op,
                     mlir::Value start);

// The pieces of a warp's reduction, shared with the row chains
// (RowChains.h) that run several per row in one kernel.

/// The indices `map` picks at the loop indices `idx`.
llvm::SmallVector<mlir::Value> indicesAt(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::AffineMap map,
                                         llvm::ArrayRef<mlir::Value> idx);

/// `op`'s body cloned at the loop indices `idx` (linalg.index reads them),
/// its arguments taken from `m`; the values it yields.
llvm::SmallVector<mlir::Value> cloneBodyAt(mlir::OpBuilder &b,
                                           mlir::linalg::GenericOp op,
                                           llvm::ArrayRef<mlir::Value> idx,
                                           mlir::IRMapping &m);

/// A warpReducible op's combiner applied to `acc` and `x`.
mlir::Value combineWith(mlir::OpBuilder &b, mlir::linalg::GenericOp op,
                        mlir::Value acc, mlir::Value x);

/// Maps each of `op`'s input arguments that `m` does not map yet to its
/// value at the loop indices `idx`: a load of its element (a scalar input
/// as it is), in operand order.
void loadInputsAt(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::linalg::GenericOp op, llvm::ArrayRef<mlir::Value> idx,
                  mlir::IRMapping &m);

/// Maps the body's input arguments at the loop indices `idx` (loads, or
/// values a row chain already holds).
using InputsAt = llvm::function_ref<void(
    mlir::OpBuilder &, llvm::ArrayRef<mlir::Value> idx, mlir::IRMapping &)>;

/// The total of a warpReducible `op`'s row at the loop indices `at` (its
/// reduced index unused) over `lanes` lanes: lane `lane` combines elements
/// lane, lane + lanes, ..., then the lanes' partials are combined by a
/// butterfly of shuffles (none for one lane), after which every lane holds
/// the total, not yet combined with the output's initial value.
mlir::Value rowTotalOnLanes(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::linalg::GenericOp op,
                            llvm::ArrayRef<mlir::Value> at, mlir::Value lane,
                            int64_t lanes, const InputsAt &inputs);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_WARPREDUCTIONS_H
