//===- FillFolding.h - a reduction's zero fill, in its own kernel ---------===//
//
// A reduction into a buffer starts from a linalg.fill of that buffer: on the
// GPU, a kernel of its own that writes the whole buffer, which the
// reduction's kernel then reads back, element by element, as its initial
// accumulator. resnet18's training step launched 524 such fills among its
// 1,194 kernels. rankc-linalg-to-gpu-loops folds a fill into the reduction
// that next touches its buffer: the reduction's threads start from the
// fill's value, and the fill's kernel is gone.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_FILLFOLDING_H
#define RANKC_LIB_CODEGEN_CUDA_FILLFOLDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace rankc {

/// A fill of a whole buffer, and the reduction output that is the next
/// access of any view of that buffer: the fill's values are read only as
/// that reduction's initial accumulators, and every element is overwritten.
struct FoldableFill {
  mlir::linalg::FillOp fill;
  /// The reduction's output (the buffer, or a reshape of it).
  mlir::Value output;
};

/// The fills of `fn` that may fold, by the reduction (a linalg.generic with
/// a reduction loop) whose output they initialize.
llvm::DenseMap<mlir::Operation *, llvm::SmallVector<FoldableFill, 1>>
findFoldableFills(mlir::func::FuncOp fn);

/// After the reduction became `loop` (its accumulators promoted to
/// registers): each thread's initial load of `fold.output` becomes the
/// fill's value. Fails, changing nothing, unless every read of the output
/// in `loop` is such a load (directly in the loop's body, before any store
/// to the output).
mlir::LogicalResult foldFillInto(mlir::RewriterBase &rewriter,
                                 mlir::scf::ParallelOp loop,
                                 const FoldableFill &fold);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_FILLFOLDING_H
